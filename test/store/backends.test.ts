/**
 * One behavioural suite, run against every storage backend: the same project built, searched,
 * edited and rebuilt, the same deltas applied by hand, the same failures. A backend that passes
 * behaves, as far as codemem can tell, like every other.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig, trustProject } from "../../dist/shared/config.js";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { openStore } from "../../dist/daemon/store/open.js";
import { expectCode, makeProject, PY_PROJECT, rowids, touchLater } from "../helpers.js";
import { pgTestSettings } from "../helpers-pg.js";

type Backend = "local" | "postgres" | "lancedb";
const BACKENDS: Backend[] = ["local", "postgres", "lancedb"];

let pg: { dbUrl: string; passwordFile: string } | undefined;
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-backends-")));

beforeAll(async () => {
  const s = await pgTestSettings();
  const passwordFile = path.join(tmp, "pg-password");
  fs.writeFileSync(passwordFile, s.password + "\n", { mode: 0o600 });
  pg = { dbUrl: s.dbUrl, passwordFile };
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Project configuration selecting a backend; postgres projects get a schema of their own. */
function storeToml(backend: Backend): string {
  if (backend !== "postgres") return `[store]\nbackend = "${backend}"\n`;
  return `[store]\nbackend = "postgres"\ndb_url = "${pg!.dbUrl}"\npassword_file = "${pg!.passwordFile}"\nproject = "t_${randomBytes(5).toString("hex")}"\n`;
}

/** Drops what a postgres test project left in the shared database. */
async function dropSchema(root: string): Promise<void> {
  const cfg = resolveConfig(root);
  if (cfg.store.backend !== "postgres") return;
  const { default: pgmod } = await import("pg");
  // node-postgres lets the URL override a separate password, so the password goes into the URL.
  const url = new URL(cfg.store.dbUrl!);
  url.password = encodeURIComponent(cfg.store.password ?? "");
  const client = new pgmod.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${cfg.store.schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

function unit(values: number[]): Float32Array {
  const v = Float32Array.from(values);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

/** A hand-made delta of `count` nodes in `file`, 8-dimensional vectors, one module node with file words. */
function delta(file: string, names: string[], vectorOf: (i: number) => Float32Array, extra: Partial<Record<string, unknown>> = {}) {
  const nodes = [
    { id: file, name: path.basename(file), type: "module", qualified: file, words: `${names.join(" ")} module words` },
    ...names.map((n) => ({ id: `${file}::${n}`, name: n, type: "function", qualified: n, words: "" })),
  ];
  return {
    removedFiles: [],
    upsertFiles: [{ row: { path: file, hash: "h-" + file, size: 10, language: "python", tokens: 5, line_count: 3, mtime_ms: 1 }, extract: { path: file, language: "python", defs: [], calls: [], imports: [], tokens: 5, lineCount: 3 } }],
    replaceNodesOf: [file],
    nodes: nodes.map((n, i) => ({
      node: { id: n.id, name: n.name, type: n.type, file_path: file, qualified_name: n.qualified, signature: `def ${n.name}()`, docstring: "", description: `${n.type} ${n.name}`, line_start: i + 1, line_end: i + 1, language: "python", parent: i === 0 ? null : file, code: `def ${n.name}(): pass`, bases: [], community: 0 },
      textHash: `t-${n.id}`,
      lexical: { name: n.name.replace(/_/g, " "), qualified: n.qualified.replace(/[_/.]/g, " "), signature: "", doc: "", path: file.replace(/[/.]/g, " "), body: "" },
      vector: vectorOf(i),
      ...(i === 0 ? { fileWords: n.words.replace(/_/g, " ") } : {}),
    })),
    edgesAdded: names.length > 1 ? [{ source: `${file}::${names[0]}`, target: `${file}::${names[1]}`, type: "calls" }] : [],
    edgesRemoved: [],
    communities: [{ id: 0, name: "all", description: "everything", size: nodes.length, files: [file] }],
    communityOf: new Map(nodes.map((n) => [n.id, 0])),
    meta: { embedder: "test", built_at: new Date().toISOString() },
    ...extra,
  };
}

describe.each(BACKENDS)("backend %s", (backend) => {
  const projects: { cleanup: () => void; root: string }[] = [];
  const project = (files: Record<string, string>) => {
    const p = makeProject({ ...files, "codemem.toml": storeToml(backend) });
    trustProject(p.root); // the user's own settings file
    projects.push(p);
    return p;
  };
  afterAll(async () => {
    for (const p of projects) {
      await dropSchema(p.root);
      p.cleanup();
    }
  });

  it("builds a project and answers search, query, skeleton and stats from it", async () => {
    const p = project(PY_PROJECT);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      const b = await engine.build({ project_path: p.root });
      expect(b.files_indexed).toBe(3);
      const st = await engine.stats({ project_path: p.root });
      expect(st.backend).toBe(backend);
      expect(st.node_count).toBe(b.node_count);
      expect(st.index_bytes).toBeGreaterThan(0);
      const s = await engine.search({ project_path: p.root, query: "charge a credit card", limit: 5 });
      expect(s.results[0].id).toBe("shop/payments.py::charge_card");
      const q = await engine.query({ project_path: p.root, question: "How is tax added to an order total?" });
      expect(q.citations.map((c) => c.file_path)).toContain("shop/models.py");
      expect(q.context).toContain("apply_tax");
      const sk = await engine.skeleton({ project_path: p.root, file_path: path.join(p.root, "shop/models.py") });
      expect(sk.outline).toContain("class Order");
    } finally {
      await engine.close();
    }
  });

  it("rebuilds incrementally: edits, deletions and renames reach every answer", async () => {
    const p = project(PY_PROJECT);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      await engine.build({ project_path: p.root });
      p.write("shop/billing.py", `def issue_voucher(order):\n    """Issue a discount voucher after a refund."""\n    return 5\n`);
      const added = await engine.build({ project_path: p.root });
      expect(added.files_changed).toBe(1);
      const hit = await engine.search({ project_path: p.root, query: "discount voucher", limit: 3 });
      expect(hit.results[0].id).toBe("shop/billing.py::issue_voucher");
      p.write("shop/billing.py", `def issue_coupon(order):\n    """Issue a discount coupon after a refund."""\n    return 5\n`);
      touchLater(path.join(p.root, "shop/billing.py"));
      await engine.build({ project_path: p.root });
      const renamed = await engine.search({ project_path: p.root, query: "discount coupon voucher", limit: 10 });
      expect(renamed.results.map((r) => r.id)).toContain("shop/billing.py::issue_coupon");
      expect(renamed.results.map((r) => r.id)).not.toContain("shop/billing.py::issue_voucher");
      p.remove("shop/billing.py");
      const removed = await engine.build({ project_path: p.root });
      expect(removed.files_removed).toBe(1);
      const gone = await engine.search({ project_path: p.root, query: "discount coupon", limit: 10 });
      expect(gone.results.some((r) => r.file_path === "shop/billing.py")).toBe(false);
      const st = await engine.stats({ project_path: p.root });
      expect(st.file_count).toBe(3);
      expect(st.node_count).toBe(removed.node_count);
    } finally {
      await engine.close();
    }
  });

  it("a forced rebuild gives the same index", async () => {
    const p = project(PY_PROJECT);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      const first = await engine.build({ project_path: p.root });
      const forced = await engine.build({ project_path: p.root, force: true });
      expect(forced.nodes_processed).toBe(first.node_count);
      expect(forced.node_count).toBe(first.node_count);
      expect((await engine.search({ project_path: p.root, query: "refund an order", limit: 3 })).results[0].id).toBe("shop/payments.py::refund");
      // A call removed before a forced rebuild leaves no edge behind.
      const calls = async () => {
        const s = await openStore(resolveConfig(p.root), { mode: "read" });
        try {
          return (await s.edges()).filter((e) => e.type === "calls").map((e) => `${e.source}>${e.target}`);
        } finally {
          await s.close();
        }
      };
      expect(await calls()).toContain("shop/payments.py::refund>shop/payments.py::charge_card");
      p.write("shop/payments.py", fs.readFileSync(path.join(p.root, "shop/payments.py"), "utf8").replace('return charge_card(order, "0000")', "return None"));
      touchLater(path.join(p.root, "shop/payments.py"));
      await engine.build({ project_path: p.root, force: true });
      expect(await calls()).not.toContain("shop/payments.py::refund>shop/payments.py::charge_card");
    } finally {
      await engine.close();
    }
  });

  it("reading a project that was never built is INDEX_MISSING", async () => {
    const p = project({ "a.py": "def f():\n    return 1\n" });
    await expectCode(openStore(resolveConfig(p.root), { mode: "read" }), "INDEX_MISSING");
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      await expectCode(engine.search({ project_path: p.root, query: "f" }), "INDEX_MISSING");
    } finally {
      await engine.close();
    }
  });

  it("lexical, file and vector search answer rowids and scores best first", async () => {
    const p = project({});
    const cfg = resolveConfig(p.root);
    const store = await openStore(cfg, { mode: "build", dim: 8, batchSize: 2 });
    try {
      await store.apply(delta("pkg/net.py", ["open_socket", "parse_header", "close_socket"], (i) => unit([1, i, 0, 0, 0, 0, 0, i === 3 ? 5 : 0.1])));
      const cat = await store.catalog();
      expect(cat).toHaveLength(4);
      const rowOf = new Map(cat.map((n) => [n.id, n.rowid]));
      const lex = rowids(await store.lexicalNodes(["header"], 10));
      expect(lex[0]).toBe(rowOf.get("pkg/net.py::parse_header"));
      const files = rowids(await store.lexicalFiles(["socket"], 10));
      expect(files).toEqual([rowOf.get("pkg/net.py")]);
      // Scores grow with relevance (the retriever normalises them per question).
      const scored = await store.lexicalNodes(["socket", "header"], 10);
      expect(scored.length).toBeGreaterThanOrEqual(3);
      expect(scored.every((h) => h.score > 0)).toBe(true);
      expect(scored.map((h) => h.score)).toEqual(scored.map((h) => h.score).sort((a, b) => b - a));
      const near = await store.nearest(unit([1, 3, 0, 0, 0, 0, 0, 5]), 2);
      expect(near[0].rowid).toBe(rowOf.get("pkg/net.py::close_socket"));
      expect(near[0].sim).toBeGreaterThan(0.99);
      expect(near[0].sim).toBeGreaterThanOrEqual(near[1].sim);
      expect(await store.code(rowOf.get("pkg/net.py::open_socket")!)).toBe("def open_socket(): pass");
      expect(await store.edges()).toEqual([{ source: "pkg/net.py::open_socket", target: "pkg/net.py::parse_header", type: "calls" }]);
      expect((await store.meta()).embedder).toBe("test");
      expect((await store.files()).map((f) => f.path)).toEqual(["pkg/net.py"]);
      expect((await store.extracts())[0].path).toBe("pkg/net.py");
      const hashes = await store.nodeHashes(["pkg/net.py"]);
      expect(hashes.get("pkg/net.py::open_socket")?.textHash).toBe("t-pkg/net.py::open_socket");
      const vecs = await store.vectors([rowOf.get("pkg/net.py::close_socket")!]);
      expect([...vecs.values()][0]).toHaveLength(8);
      // Words that look like query syntax are plain words.
      expect(rowids(await store.lexicalNodes(['he"ader', "OR", "NOT", "*", "a:b"], 10))).toBeInstanceOf(Array);
      expect(rowids(await store.lexicalNodes([], 10))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("replaces a file's nodes and keeps other files' nodes", async () => {
    const p = project({});
    const cfg = resolveConfig(p.root);
    const store = await openStore(cfg, { mode: "build", dim: 8 });
    try {
      await store.apply(delta("a.py", ["alpha_one", "alpha_two"], (i) => unit([1, i, 1, 0, 0, 0, 0, 0])));
      await store.apply(delta("b.py", ["beta_one"], (i) => unit([0, i, 1, 1, 0, 0, 0, 0])));
      await store.apply(delta("a.py", ["gamma_one"], (i) => unit([0, 0, 0, 1, i, 0, 0, 0])));
      const ids = (await store.catalog()).map((n) => n.id).sort();
      expect(ids).toEqual(["a.py", "a.py::gamma_one", "b.py", "b.py::beta_one"]);
      expect(rowids(await store.lexicalNodes(["alpha"], 10))).toEqual([]);
      expect((await store.catalog(["b.py"])).map((n) => n.id).sort()).toEqual(["b.py", "b.py::beta_one"]);
      await store.apply({ ...delta("c.py", [], () => unit([1, 1, 1, 1, 1, 1, 1, 1])), removedFiles: ["b.py"], replaceNodesOf: ["c.py", "b.py"] });
      expect((await store.files()).map((f) => f.path).sort()).toEqual(["a.py", "c.py"]);
      expect((await store.catalog()).some((n) => n.file_path === "b.py")).toBe(false);
      expect((await store.nearest(unit([0, 0, 1, 1, 0, 0, 0, 0]), 10)).length).toBe(3);
    } finally {
      await store.close();
    }
  });

  it("keeps an edge's dispatch confidence, replaces it when it changes, and leaves candidates out of degrees", async () => {
    const p = project({});
    const store = await openStore(resolveConfig(p.root), { mode: "build", dim: 8 });
    const byTarget = (es: { target: string }[]) => [...es].sort((a, b) => (a.target < b.target ? -1 : 1));
    try {
      const direct = { source: "a.py::caller", target: "a.py::base_area", type: "calls" };
      const candidate = { source: "a.py::caller", target: "a.py::square_area", type: "calls", dispatch: 0.5 };
      await store.apply(delta("a.py", ["caller", "base_area", "square_area"], (i) => unit([1, i, 0, 0, 0, 0, 0, 0]), { edgesAdded: [direct, candidate] }));
      expect(byTarget((await store.edges()).filter((e) => e.type === "calls"))).toEqual([direct, candidate]);
      expect((await store.neighbors(["a.py::square_area"])).filter((e) => e.type === "calls")).toEqual([candidate]);
      const degrees = await store.degrees(["calls"]);
      expect([degrees.get("a.py::base_area"), degrees.get("a.py::square_area")]).toEqual([1, undefined]);
      const now = { ...candidate, dispatch: 0.333 };
      await store.apply({ ...delta("b.py", [], () => unit([0, 1, 0, 0, 0, 0, 0, 0])), edgesRemoved: [candidate], edgesAdded: [now] });
      expect(byTarget((await store.edges()).filter((e) => e.type === "calls"))).toEqual([direct, now]);
    } finally {
      await store.close();
    }
  });

  it("a failed apply leaves the previous index whole", async () => {
    const p = project({});
    const cfg = resolveConfig(p.root);
    const store = await openStore(cfg, { mode: "build", dim: 8 });
    try {
      await store.apply(delta("a.py", ["alpha_one", "alpha_two"], (i) => unit([1, i, 0, 0, 0, 0, 0, 0])));
      const before = (await store.catalog()).map((n) => n.id).sort();
      // The last node's vector has the wrong width: every backend must refuse it, after writing others.
      const bad = delta("b.py", ["beta_one", "beta_two", "beta_three"], (i) => (i === 3 ? new Float32Array(5).fill(0.4) : unit([0, 1, i, 0, 0, 0, 0, 0])));
      await expect(store.apply({ ...bad, removedFiles: ["a.py"], replaceNodesOf: ["a.py", "b.py"] })).rejects.toThrow();
      expect((await store.catalog()).map((n) => n.id).sort()).toEqual(before);
      expect((await store.files()).map((f) => f.path)).toEqual(["a.py"]);
      expect(rowids(await store.lexicalNodes(["beta"], 10))).toEqual([]);
    } finally {
      await store.close();
    }
    // A reader opened afterwards sees the same.
    const reader = await openStore(cfg, { mode: "read" });
    try {
      expect((await reader.catalog()).map((n) => n.id).sort()).toEqual(["a.py", "a.py::alpha_one", "a.py::alpha_two"]);
    } finally {
      await reader.close();
    }
  });

  it("a reader opened before a build sees the old index or the new one, never half", async () => {
    const p = project({});
    const cfg = resolveConfig(p.root);
    const writer = await openStore(cfg, { mode: "build", dim: 8 });
    await writer.apply(delta("a.py", ["one", "two"], (i) => unit([1, i, 0, 0, 0, 0, 0, 0])));
    const reader = await openStore(cfg, { mode: "read" });
    try {
      const names = Array.from({ length: 30 }, (_, i) => `fn_${i}`);
      const applying = writer.apply(delta("b.py", names, (i) => unit([0, 1, i, 0, 0, 0, 0, 0])));
      const counts = new Set<number>();
      for (let i = 0; i < 5; i++) counts.add((await reader.catalog()).length);
      await applying;
      for (const c of counts) expect([3, 3 + 31]).toContain(c);
      // A fresh reader sees everything.
      const after = await openStore(cfg, { mode: "read" });
      expect((await after.catalog()).length).toBe(34);
      await after.close();
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it("later commands follow the backend a build named", async () => {
    const p = makeProject(PY_PROJECT);
    projects.push(p);
    const extra = backend === "postgres" ? { db_url: pg!.dbUrl } : {};
    if (backend === "postgres") {
      fs.writeFileSync(path.join(p.root, "codemem.toml"), `[store]\npassword_file = "${pg!.passwordFile}"\nproject = "t_${randomBytes(5).toString("hex")}"\n`);
      trustProject(p.root);
    }
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      await engine.build({ project_path: p.root, backend, ...extra });
      const again = await ProjectEngine.open(p.root, { sideEffects: false });
      try {
        expect((await again.stats({ project_path: p.root })).backend).toBe(backend);
      } finally {
        await again.close();
      }
      const recorded = JSON.parse(fs.readFileSync(path.join(p.root, ".codemem/store.json"), "utf8"));
      expect(recorded.backend).toBe(backend);
      expect(JSON.stringify(recorded)).not.toContain(fs.existsSync(pg?.passwordFile ?? "") ? fs.readFileSync(pg!.passwordFile, "utf8").trim() : "\u0000");
    } finally {
      await engine.close();
    }
  });
});

describe("an unreachable database", () => {
  it("fails the build with BACKEND_UNREACHABLE and leaves the project on its current index", async () => {
    const p = makeProject(PY_PROJECT);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      await engine.build({ project_path: p.root });
      const before = await engine.search({ project_path: p.root, query: "charge a credit card", limit: 3 });
      const choice = fs.readFileSync(path.join(p.root, ".codemem/store.json"), "utf8");
      await expectCode(engine.build({ project_path: p.root, backend: "postgres", db_url: "postgres://codemem@127.0.0.1:1/codemem" }), "BACKEND_UNREACHABLE");
      expect(fs.readFileSync(path.join(p.root, ".codemem/store.json"), "utf8")).toBe(choice);
      const after = await engine.search({ project_path: p.root, query: "charge a credit card", limit: 3 });
      expect(after.results).toEqual(before.results);
      expect((await engine.stats({ project_path: p.root })).backend).toBe("local");
    } finally {
      await engine.close();
      p.cleanup();
    }
  });
});
