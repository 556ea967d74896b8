import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { afterEach, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { buildIndex, type BuildCache, type BuildResult } from "../../dist/daemon/index/build.js";
import { createEmbedder } from "../../dist/daemon/index/embed/select.js";
import { ParsePool } from "../../dist/daemon/index/parse-pool.js";
import { resolveConfig } from "../../dist/shared/config.js";
import { makeProject, touchLater } from "../helpers.js";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");
const sqliteVec = require("sqlite-vec");

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Python's email, json, http and logging packages: enough files for the parse workers (24+). */
function pythonFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const d of ["email", "json", "http", "logging"]) {
    for (const f of fs.readdirSync(path.join("/usr/lib/python3.11", d))) if (f.endsWith(".py")) files[`${d}/${f}`] = fs.readFileSync(path.join("/usr/lib/python3.11", d, f), "utf8");
  }
  return files;
}

/** What a build derives, read from the index file: nodes with their text hash and vector, files with their tokens, the total. */
function dump(root: string) {
  const db = new Database(path.join(root, "codegraph-out/codemem_db/index.db"), { readonly: true });
  sqliteVec.load(db);
  try {
    const vec = db.prepare("SELECT hex(embedding) AS e FROM vec_nodes WHERE rowid = ?");
    const nodes = (db.prepare("SELECT rowid, id, text_hash, vec_scale FROM nodes ORDER BY id").all() as { rowid: number; id: string; text_hash: string; vec_scale: number }[]).map((n) => ({
      id: n.id,
      hash: n.text_hash,
      scale: n.vec_scale,
      vector: (vec.get(BigInt(n.rowid)) as { e: string } | undefined)?.e ?? null,
    }));
    // Stored texts and extracts, as read back (a whole-tree build makes most of them ahead of its write).
    const text = db.prepare("SELECT t.text AS t FROM node_text t JOIN nodes n ON n.rowid = t.rowid WHERE n.id = ?").pluck();
    const texts = Object.fromEntries(nodes.map((n) => [n.id, inflateRawSync(text.get(n.id) as Buffer).toString("utf8")]));
    const files = (db.prepare("SELECT path, hash, tokens, extract FROM files ORDER BY path").all() as { path: string; hash: string; tokens: number; extract: Buffer }[]).map(({ extract, ...f }) => {
      // An extract records the tokens its parse counted: none when the fill counts them.
      const { tokens: _, ...ex } = JSON.parse(inflateRawSync(extract).toString("utf8"));
      return { ...f, extract: ex };
    });
    const meta = Object.fromEntries((db.prepare("SELECT key, value FROM meta WHERE key IN ('total_tokens', 'filling', 'node_count', 'edge_count')").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    return { nodes, texts, files, meta: { filling: "", ...meta } };
  } finally {
    db.close();
  }
}

const QUESTIONS = ["parse an email message header", "encode a python object as json", "rotate log files by size", "http cookie expiry"];

async function rankings(root: string): Promise<string[][]> {
  const e = await ProjectEngine.open(root, { sideEffects: false });
  try {
    const out: string[][] = [];
    for (const q of QUESTIONS) out.push((await e.search({ project_path: root, query: q, limit: 10 })).results.map((r: { id: string }) => r.id));
    return out;
  } finally {
    await e.close();
  }
}

it("a whole-tree build with a fill is answerable (lexical and graph) before it, says what is missing until written, then equals a build that did it all inline; an incremental build after it equals a full one", async () => {
  const files = pythonFiles();
  expect(Object.keys(files).length).toBeGreaterThanOrEqual(30);
  const deferred = makeProject(files);
  const inline = makeProject(files);
  const pool = new ParsePool(2);
  cleanups.push(deferred.cleanup, inline.cleanup, () => pool.close());
  const cfgD = resolveConfig(deferred.root);
  const cfgI = resolveConfig(inline.root);
  const embedder = await createEmbedder(cfgD);
  const cache: { value?: BuildCache } = {};

  let job: (() => Promise<BuildResult>) | undefined;
  const answerable = await buildIndex(cfgD, { embedder, pool, cache, fill: (j) => (job = j) });
  expect(answerable.filling).toEqual(["vectors", "tokens", "graph.json"]);
  expect(answerable.nodes_embedded).toBe(0);
  expect(job).toBeDefined();

  // Held before its fill: the index answers from its lexical and graph parts, and says vectors and tokens are being written.
  const during = dump(deferred.root);
  expect(during.meta.filling).toBe("vectors,tokens");
  // graph.json is the fill's to write (a first build has none before it).
  const graphFile = (root: string) => path.join(root, "codegraph-out/graph.json");
  expect(fs.existsSync(graphFile(deferred.root))).toBe(false);
  expect(during.nodes.every((n) => n.vector === null)).toBe(true);
  const reader = await ProjectEngine.open(deferred.root, { sideEffects: false });
  cleanups.push(() => reader.close());
  const stats = await reader.stats({ project_path: deferred.root });
  expect(stats.freshness.filling).toEqual(["vectors", "tokens"]);
  expect(stats.node_count).toBe(answerable.node_count);
  const hits = await reader.search({ project_path: deferred.root, query: "decode_header", limit: 5 });
  expect(hits.results.length).toBeGreaterThan(0);
  expect(hits.freshness.filling).toEqual(["vectors", "tokens"]);
  const answer = await reader.query({ project_path: deferred.root, question: "how are email headers decoded" });
  expect(answer.freshness.filling).toEqual(["vectors", "tokens"]);

  const complete = await job!();
  expect(complete.filling).toEqual([]);
  expect(complete.nodes_embedded).toBe(complete.node_count);
  await buildIndex(cfgI, { embedder, pool });
  const filled = dump(deferred.root);
  expect(filled.meta.filling).toBe("");
  expect(Number(filled.meta.total_tokens)).toBeGreaterThan(0);
  expect(filled).toEqual(dump(inline.root));
  const graphOf = (root: string) => JSON.parse(fs.readFileSync(graphFile(root), "utf8")) as { built_at?: string };
  expect({ ...graphOf(deferred.root), built_at: "" }).toEqual({ ...graphOf(inline.root), built_at: "" });
  expect(await rankings(deferred.root)).toEqual(await rankings(inline.root));
  // A reader opened after the fill says nothing is missing.
  const after = await ProjectEngine.open(deferred.root, { sideEffects: false });
  cleanups.push(() => after.close());
  expect((await after.stats({ project_path: deferred.root })).freshness.filling).toBeUndefined();

  // Edits, an added and a removed file: the warm incremental build (no fill: it does all inline) equals a full build of the same tree.
  const edited = Object.keys(files).filter((f) => f.startsWith("json/")).slice(0, 3);
  for (const project of [deferred, inline]) {
    for (const f of edited) {
      project.write(f, `${files[f]}\n\ndef added_after_fill(x):\n    """An edit after the first build."""\n    return x\n`);
      touchLater(path.join(project.root, f));
    }
    project.write("json/extra.py", "def extra_helper():\n    return 42\n");
    project.remove("http/cookies.py");
  }
  let refilled = false;
  const incremental = await buildIndex(cfgD, { embedder, pool, cache, fill: () => (refilled = true) });
  expect(incremental.files_changed).toBe(edited.length + 1);
  expect(incremental.filling).toBeUndefined();
  expect(refilled).toBe(false);
  await buildIndex(cfgI, { embedder, pool, force: true });
  expect(dump(deferred.root)).toEqual(dump(inline.root));
});

/** A stop signal that fires once the fill has looked at it `n` times: the fill writes `n` parts, then stops. */
function stopAfterParts(n: number): AbortSignal {
  let looked = 0;
  return {
    get aborted() {
      return looked++ >= n;
    },
  } as AbortSignal;
}

it("a fill stopped between its parts keeps them and `filling`; the next build parses nothing and fills only the rest, and the index equals one built inline", async () => {
  const files = pythonFiles();
  const deferred = makeProject(files);
  const inline = makeProject(files);
  const pool = new ParsePool(2);
  cleanups.push(deferred.cleanup, inline.cleanup, () => pool.close());
  // Parts of 100 nodes: the fill's first of several is written, then it stops.
  const cfg = { ...resolveConfig(deferred.root), build: { ...resolveConfig(deferred.root).build, batchSize: 100 } };
  const embedder = await createEmbedder(cfg);
  let job: (() => Promise<BuildResult>) | undefined;
  await buildIndex(cfg, { embedder, pool, fill: (j) => (job = j), fillStop: stopAfterParts(1) });
  await expect(job!()).rejects.toMatchObject({ code: "BUILD_CANCELLED" });
  const stopped = dump(deferred.root);
  expect(stopped.meta.filling).toBe("vectors,tokens");
  const embedded = stopped.nodes.filter((n) => n.vector !== null).length;
  const counted = (stopped.files as { tokens: number }[]).filter((f) => f.tokens > 0).length;
  expect(embedded).toBeGreaterThan(0);
  expect(embedded).toBeLessThan(stopped.nodes.length);
  expect(counted).toBeGreaterThan(0);
  expect(counted).toBeLessThan(stopped.files.length);

  const next = await buildIndex(cfg, { embedder, pool });
  expect(next.files_changed).toBe(0);
  expect(next.nodes_embedded).toBe(stopped.nodes.length - embedded);
  expect(next.filling).toEqual([]);
  await buildIndex(resolveConfig(inline.root), { embedder, pool });
  expect(dump(deferred.root)).toEqual(dump(inline.root));
});

it("an index whose fill never ran (its build's process was killed) is filled by the next build, which parses only what changed since; the result equals a full build", async () => {
  const files = pythonFiles();
  const p = makeProject(files);
  const full = makeProject(files);
  const pool = new ParsePool(2);
  cleanups.push(p.cleanup, full.cleanup, () => pool.close());
  const cfg = resolveConfig(p.root);
  const embedder = await createEmbedder(cfg);
  await buildIndex(cfg, { embedder, pool, fill: () => {} }); // the job is dropped, as a killed process drops it
  expect(dump(p.root).meta.filling).toBe("vectors,tokens");
  // Its graph.json was the fill's to write too.
  const graphFile = path.join(p.root, "codegraph-out/graph.json");
  expect(fs.existsSync(graphFile)).toBe(false);
  const edited = Object.keys(files).filter((f) => f.startsWith("email/")).slice(0, 2);
  for (const project of [p, full]) {
    for (const f of edited) {
      project.write(f, `${files[f]}\n\ndef added_while_filling(x):\n    return x\n`);
      touchLater(path.join(project.root, f));
    }
  }
  let job: (() => Promise<BuildResult>) | undefined;
  const next = await buildIndex(cfg, { embedder, pool, fill: (j) => (job = j) });
  expect(next.files_changed).toBe(edited.length);
  // Answerable at once, and still saying what it fills in.
  expect(next.filling).toEqual(["vectors", "tokens"]);
  expect(dump(p.root).meta.filling).toBe("vectors,tokens");
  expect(fs.existsSync(graphFile)).toBe(true);
  const complete = await job!();
  expect(complete.filling).toEqual([]);
  const d = dump(p.root);
  expect(d.meta.filling).toBe("");
  expect(d.nodes.every((n) => n.vector !== null)).toBe(true);
  await buildIndex(resolveConfig(full.root), { embedder, pool });
  expect(d).toEqual(dump(full.root));
});
