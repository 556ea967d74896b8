import fs from "node:fs";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { seededRandom } from "../../dist/shared/random.js";
import { waitFor } from "../daemon/helpers.js";
import { makeProject, touchLater } from "../helpers.js";

const repo = path.resolve(__dirname, "../..");
const GO = path.join(repo, "test/fixtures/trees/go");
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function goFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(GO, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".go")) out[p] = fs.readFileSync(path.join(GO, p), "utf8");
    }
  };
  walk("");
  return out;
}

async function built(files: Record<string, string>) {
  const p = makeProject(files);
  const engine = await ProjectEngine.open(p.root, { sideEffects: false });
  cleanups.push(p.cleanup, () => engine.close());
  await engine.build({ project_path: p.root });
  return { p, engine, db: () => new Database(path.join(p.root, "codegraph-out/codemem_db/index.db"), { readonly: true }) };
}

const WORDS = ["read", "buffer", "sort", "error", "rune", "string", "write", "scan", "unicode", "template", "quick"];

/** BM25 of every matching row per word, keyed by node id (rowids differ between two builds). */
function lexicalScores(db: Database.Database): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const table of ["fts_nodes", "fts_files"]) {
    const st = db.prepare(`SELECT n.id AS id, bm25(${table}) AS s FROM ${table} f JOIN nodes n ON n.rowid = f.rowid WHERE ${table} MATCH ?`);
    for (const w of WORDS) {
      const rows = st.all(`"${w}"`) as { id: string; s: number }[];
      out[`${table}:${w}`] = Object.fromEntries(rows.map((r) => [r.id, Math.round(r.s * 1e9) / 1e9]).sort());
    }
  }
  return out;
}

describe("local index", () => {
  it("after incremental edits, adds and deletes, ranks, links and stores exactly like a build from scratch", async () => {
    const files = goFiles();
    const inc = await built(files);
    const rnd = seededRandom(7);
    const paths = Object.keys(files).sort();
    const final = { ...files };
    for (let round = 0; round < 3; round++) {
      for (const f of paths.filter(() => rnd() < 0.2)) {
        if (!(f in final)) continue;
        if (rnd() < 0.3) {
          delete final[f];
          inc.p.remove(f);
        } else {
          final[f] += `\n// Quick scan of a sorted buffer, round ${round}.\nfunc QuickScan${round}Of${path.basename(f, ".go").replace(/\W/g, "")}(b []byte) int {\n\treturn len(b) + ${round}\n}\n`;
          inc.p.write(f, final[f]);
          touchLater(path.join(inc.p.root, f));
        }
      }
      final[`extra/round${round}.go`] = `package extra\n\n// Template reads a rune from the buffer.\nfunc Template${round}(s string) string {\n\treturn s\n}\n`;
      inc.p.write(`extra/round${round}.go`, final[`extra/round${round}.go`]);
      await inc.engine.build({ project_path: inc.p.root });
    }
    const full = await built(final);

    const [a, b] = [inc.db(), full.db()];
    cleanups.push(() => a.close(), () => b.close());
    const scoresA = lexicalScores(a);
    expect(Object.values(scoresA).some((m) => Object.keys(m).length > 0)).toBe(true);
    expect(scoresA).toEqual(lexicalScores(b));

    const edgeSet = (rows: { source: string; target: string; type: string; dispatch: number | null }[]) => rows.map((e) => `${e.source} ${e.type} ${e.target} ${e.dispatch ?? ""}`).sort();
    const edgesOf = (db: Database.Database) =>
      db.prepare("SELECT s.name AS source, t.name AS target, e.type AS type, e.dispatch AS dispatch FROM edges e JOIN symbols s ON s.id = e.source JOIN symbols t ON t.id = e.target").all() as { source: string; target: string; type: string; dispatch: number | null }[];
    expect(edgeSet(edgesOf(a))).toEqual(edgeSet(edgesOf(b)));
    // No symbol outlives its last edge, and every node keeps its code and indexed texts.
    for (const db of [a, b]) {
      const orphans = db.prepare("SELECT count(*) AS n FROM symbols s WHERE NOT EXISTS (SELECT 1 FROM edges WHERE source = s.id) AND NOT EXISTS (SELECT 1 FROM edges WHERE target = s.id)").get() as { n: number };
      expect(orphans.n).toBe(0);
      const counts = db.prepare("SELECT (SELECT count(*) FROM nodes) AS nodes, (SELECT count(*) FROM node_text) AS texts, (SELECT count(*) FROM node_text t LEFT JOIN nodes n ON n.rowid = t.rowid WHERE n.rowid IS NULL) AS stray").get() as { nodes: number; texts: number; stray: number };
      expect(counts.texts).toBe(counts.nodes);
      expect(counts.stray).toBe(0);
    }
    // FTS5's own check of the contentless tables against their statistics.
    const check = new Database(path.join(inc.p.root, "codegraph-out/codemem_db/index.db"));
    cleanups.push(() => check.close());
    for (const t of ["fts_nodes", "fts_files"]) expect(() => check.exec(`INSERT INTO ${t}(${t}, rank) VALUES ('integrity-check', 0)`)).not.toThrow();
    // Code comes back whole from the deflated store.
    const answer = await inc.engine.query({ project_path: inc.p.root, question: "QuickScan2Of template: quick scan of a sorted buffer" });
    expect(JSON.stringify(answer)).toMatch(/return len\(b\) \+ [012]/);
  });

  it("leaves out of lexical search only the rows that hold nothing but common words, with every other row's BM25 exact", async () => {
    const { engine, db } = await built(goFiles());
    const store = (await engine.retriever()).store;
    const d = db();
    cleanups.push(() => d.close());
    // Rows per word in the nodes' full text: the most frequent words are "common" here.
    const rowsOf = (w: string) => new Set((d.prepare("SELECT rowid FROM fts_nodes WHERE fts_nodes MATCH ?").all(`"${w}"`) as { rowid: number }[]).map((r) => r.rowid));
    const byCount = WORDS.map((w) => ({ w, rows: rowsOf(w) })).sort((a, b) => b.rows.size - a.rows.size);
    const common = new Set(byCount.slice(0, 3).map((x) => x.w));
    const words = byCount.map((x) => x.w);
    const rare = new Set(byCount.slice(3).flatMap((x) => [...x.rows]));
    for (const [method, limit] of [["lexicalNodes", 100000], ["lexicalNodes", 25], ["lexicalFiles", 100000], ["lexicalFiles", 7]] as const) {
      const all = await store[method](words, 100000);
      const gated = await store[method](words, limit, common);
      const score = new Map(all.map((h) => [h.rowid, h.score]));
      if (method === "lexicalNodes") {
        // Exactly the rows holding a rare word, when unlimited; the best of them when limited.
        const expected = all.filter((h) => rare.has(h.rowid)).slice(0, limit);
        expect(gated.map((h) => h.rowid)).toEqual(expected.map((h) => h.rowid));
        expect(all.length).toBeGreaterThan(gated.length);
      }
      for (const h of gated) expect(h.score).toBeCloseTo(score.get(h.rowid)!, 9);
      expect(gated.length).toBeGreaterThan(0);
    }
    // Without a rare word nothing is left out.
    expect(await store.lexicalNodes([...common], 50, common)).toEqual(await store.lexicalNodes([...common], 50));
  });

  it("a forced rebuild writes a new file and swaps it in: a reader keeps the old index until then, and nothing is left beside it", async () => {
    const { p, engine } = await built(goFiles());
    const file = path.join(p.root, "codegraph-out/codemem_db/index.db");
    const before = fs.statSync(file).ino;
    const reader = await engine.retriever();
    const question = "quick scan of a sorted buffer";
    const ids = async () => (await engine.search({ project_path: p.root, query: question, limit: 5 })).results.map((r) => r.id);
    const answer = await ids();
    await engine.build({ project_path: p.root, force: true });
    // The old rows were not deleted one by one from the index in use: the file is another one.
    expect(fs.statSync(file).ino).not.toBe(before);
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith("index.db."))).toEqual([]); // no .new, no .corrupt-…
    // The reader opened before the build still answers from the old file; a new one from the new file, alike.
    expect((await reader.store.lexicalNodes(["scan"], 5)).length).toBeGreaterThan(0);
    expect(await ids()).toEqual(answer);
  });

  it("in a daemon, a forced rebuild's old reader answers until the new file's reader has loaded, then hands over", async () => {
    const files = goFiles();
    const p = makeProject(files);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false, daemon: true });
    cleanups.push(p.cleanup, () => engine.close());
    await engine.build({ project_path: p.root });
    // A whole-tree build answers before its vectors are written; the reader that takes over is the one after them.
    const filled = async () => !(await engine.stats({ project_path: p.root })).freshness.filling && (await engine.retriever()).warming.size === 0;
    await waitFor("the first build's fill", filled, 60_000, 20);
    const reader = await engine.retriever();
    const names = async () => (await engine.search({ project_path: p.root, query: "handedOverScan quick scan", limit: 10 })).results.map((r) => r.name);
    expect(await names()).not.toContain("handedOverScan");
    const [first] = Object.keys(files);
    p.write(first, `${files[first]}\n// handedOverScan is new in the rebuilt index.\nfunc handedOverScan() int { return 42 }\n`);
    const oldStats = await engine.stats({ project_path: p.root });
    const rebuilt = await engine.build({ project_path: p.root, force: true });
    // Right after the build the old reader still answers (before, the first question waited for a new one).
    expect(await engine.retriever()).toBe(reader);
    // But stats describe the index the build wrote, what it is still filling in included (they described
    // the old file until the handover: a user told to watch stats saw nothing being filled in).
    const statsAfter = engine.stats({ project_path: p.root });
    // The reader of the old file is not closed under the handover: it answers from the old index.
    expect(reader.store.replaced?.()).toBe(true);
    expect((await reader.store.lexicalNodes(["scan"], 5)).length).toBeGreaterThan(0);
    // Every question meanwhile is answered, from the old index or the new one, until the new reader takes over.
    const deadline = Date.now() + 20_000;
    let current = await engine.retriever();
    while (current === reader && Date.now() < deadline) {
      expect((await names()).length).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 5));
      current = await engine.retriever();
    }
    expect(current).not.toBe(reader);
    expect(current.store.replaced?.()).toBe(false);
    const db = new Database(path.join(p.root, "codegraph-out/codemem_db/index.db"), { readonly: true });
    const builtAt = db.prepare("SELECT value FROM meta WHERE key = 'built_at'").pluck().get();
    db.close();
    const stats = await statsAfter;
    expect(stats.last_build).toBe(builtAt);
    expect(stats.last_build).not.toBe(oldStats.last_build);
    expect(stats.node_count).toBe(rebuilt.node_count);
    expect(stats.node_count).toBeGreaterThan(oldStats.node_count);
    expect([...current.warming]).toEqual([]); // it took over warm: vectors and term weights loaded
    expect(await names()).toContain("handedOverScan");
  });

  it("stores the same texts whether a build deflates them on a thread of its own (2,000 nodes or more) or in its own, and a large build's communities, detected on a thread, for every node", async () => {
    // Part of Python's standard library, built at once, and built again directory by directory.
    const lib = "/usr/lib/python3.11";
    const dirs = ["json", "email", "http", "logging", "asyncio"];
    const files: Record<string, string> = {};
    for (const d of dirs) {
      for (const f of fs.readdirSync(path.join(lib, d))) if (f.endsWith(".py")) files[`${d}/${f}`] = fs.readFileSync(path.join(lib, d, f), "utf8");
    }
    const whole = makeProject(files);
    const parts = makeProject({});
    const [a, b] = await Promise.all([whole, parts].map((p) => ProjectEngine.open(p.root, { sideEffects: false })));
    cleanups.push(whole.cleanup, parts.cleanup, () => a.close(), () => b.close());
    expect((await a.build({ project_path: whole.root })).nodes_processed).toBeGreaterThanOrEqual(2000);
    for (const d of dirs) {
      for (const [rel, body] of Object.entries(files)) if (rel.startsWith(`${d}/`)) parts.write(rel, body);
      expect((await b.build({ project_path: parts.root })).nodes_processed).toBeLessThan(2000);
    }
    const texts = (root: string) => {
      const db = new Database(path.join(root, "codegraph-out/codemem_db/index.db"), { readonly: true });
      try {
        const rows = db.prepare("SELECT n.id AS id, t.text AS text FROM nodes n JOIN node_text t ON t.rowid = n.rowid").all() as { id: string; text: Buffer }[];
        return new Map(rows.map((r) => [r.id, inflateRawSync(r.text).toString("utf8")]));
      } finally {
        db.close();
      }
    };
    const [ta, tb] = [texts(whole.root), texts(parts.root)];
    expect(ta.size).toBeGreaterThanOrEqual(2000);
    expect([...ta.keys()].sort()).toEqual([...tb.keys()].sort());
    for (const [id, t] of ta) expect([id, t]).toEqual([id, tb.get(id)]);
    // The code is whole: a method's first line is its def.
    const [code] = JSON.parse(ta.get([...ta.keys()].find((id) => id.includes("decode"))!)!) as string[];
    expect(code).toMatch(/def \w*decode/);
    // The whole build's communities were written after the rest of its rows: every node has one, and each area counts its nodes.
    const db = new Database(path.join(whole.root, "codegraph-out/codemem_db/index.db"), { readonly: true });
    try {
      const counted = db.prepare("SELECT community, count(*) AS n FROM nodes GROUP BY community ORDER BY community").all() as { community: number; n: number }[];
      const areas = db.prepare("SELECT id, size FROM communities ORDER BY id").all() as { id: number; size: number }[];
      expect(areas.length).toBeGreaterThan(5);
      expect(counted.map((c) => [c.community, c.n])).toEqual(areas.map((a) => [a.id, a.size]));
    } finally {
      db.close();
    }
    // Read in slices (a reader opened beside a warm one), the catalog is the same, row for row.
    const store = (await a.retriever()).store;
    const whole1 = await store.catalog();
    expect(whole1.length).toBeGreaterThan(2000);
    expect(await store.catalog(undefined, { slice: 500 })).toEqual(whole1); // five slices and a part
  });
});
