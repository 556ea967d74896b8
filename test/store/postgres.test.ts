import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { PostgresStore } from "../../dist/daemon/store/postgres.js";
import { checkPostgresBackend } from "../../dist/daemon/store/check-postgres.js";
import type { BuildDelta, LexicalFields } from "../../dist/daemon/store/types.js";
import type { StoreSettings } from "../../dist/shared/config.js";
import { expectCode, rowids } from "../helpers.js";
import { dropTestDatabase, pgTestClient, pgTestSettings, randomSchema } from "../helpers-pg.js";

const DIM = 8;
let server: { dbUrl: string; password: string };
let admin: pg.Client;
const schemas: string[] = [];

beforeAll(async () => {
  server = await pgTestSettings();
  admin = await pgTestClient();
});

afterAll(async () => {
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE; DROP SCHEMA IF EXISTS "${s}__next" CASCADE`);
  await admin.end();
});

/** Settings for a fresh schema, dropped after the file's tests. */
function settings(over: Partial<StoreSettings> = {}): StoreSettings {
  const schema = over.schema ?? randomSchema();
  schemas.push(schema);
  return { backend: "postgres", dbUrl: server.dbUrl, password: server.password, schema, poolSize: 2, ...over };
}

function withPort(url: string, port: number): string {
  const u = new URL(url);
  u.port = String(port);
  return u.toString();
}

/** Unit vector along axis `i` (mod DIM), tilted slightly towards the next axis so no two are equal. */
function axis(i: number, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  v[i % dim] = 1;
  v[(i + 1) % dim] = 0.05 * ((i % 5) + 1) / 5;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

interface NodeSpec {
  name: string;
  type?: string;
  body?: string;
  doc?: string;
  vector?: Float32Array;
}

/** A delta adding `files` (each with a module node carrying the file's words and the given nodes). */
function delta(files: Record<string, NodeSpec[]>, extra: Partial<BuildDelta> = {}): BuildDelta {
  const nodes: BuildDelta["nodes"] = [];
  const communityOf = new Map<string, number>();
  let k = 0;
  for (const [path, specs] of Object.entries(files)) {
    const moduleId = `${path}::module`;
    const pathWords = path.replace(/[^a-z0-9]+/gi, " ").trim();
    const allWords = specs.map((s) => `${s.name.replace(/_/g, " ")} ${s.body ?? ""}`).join(" ");
    nodes.push(entry(path, { name: path.split("/").pop()!.replace(/\.\w+$/, ""), type: "module", vector: axis(k++) }, moduleId, pathWords, allWords));
    communityOf.set(moduleId, 0);
    for (const s of specs) {
      const id = `${path}::${s.name}`;
      nodes.push(entry(path, { ...s, vector: s.vector ?? axis(k++) }, id, pathWords));
      communityOf.set(id, 1);
    }
  }
  const upsertFiles = Object.keys(files).map((path) => ({
    row: { path, hash: `h-${path}`, size: 100, language: "python", tokens: 10, line_count: 5, mtime_ms: 1700000000000.5 },
    extract: { path, language: "python" as const, moduleDoc: "", lineCount: 5, defs: [], calls: [], imports: [], tokens: 10 },
  }));
  return {
    removedFiles: [],
    upsertFiles,
    replaceNodesOf: Object.keys(files),
    nodes,
    edgesAdded: [],
    edgesRemoved: [],
    communities: [{ id: 0, name: "modules", description: "module nodes", size: 1, files: Object.keys(files) }],
    communityOf,
    meta: { embedder: "test-embedder", node_count: String(nodes.length) },
    ...extra,
  };
}

function entry(path: string, s: NodeSpec, id: string, pathWords: string, fileWords?: string): BuildDelta["nodes"][number] {
  const words = s.name.replace(/_/g, " ");
  const lexical: LexicalFields = { name: words, qualified: words, signature: "", doc: s.doc ?? "", path: pathWords, body: s.body ?? "" };
  return {
    node: {
      id,
      name: s.name,
      type: (s.type ?? "function") as "function",
      file_path: path,
      description: "",
      community: 0,
      qualified_name: s.name,
      signature: `def ${s.name}()`,
      docstring: s.doc ?? "",
      line_start: 1,
      line_end: 3,
      language: "python",
      code: `def ${s.name}():\n    ${s.body ?? "pass"}\n`,
      bases: [],
    },
    textHash: `t-${id}`,
    lexical,
    vector: s.vector!,
    ...(fileWords !== undefined ? { fileWords } : {}),
  };
}

async function build(s: StoreSettings, d: BuildDelta, opts: { dim?: number; force?: boolean; batchSize?: number } = {}): Promise<void> {
  const store = await PostgresStore.open(s, { mode: "build", dim: opts.dim ?? DIM, force: opts.force, batchSize: opts.batchSize });
  try {
    await store.apply(d);
  } finally {
    await store.close();
  }
}

async function reading<T>(s: StoreSettings, f: (store: PostgresStore) => Promise<T>): Promise<T> {
  const store = await PostgresStore.open(s, { mode: "read" });
  try {
    return await f(store);
  } finally {
    await store.close();
  }
}

async function rowidOf(store: PostgresStore, id: string): Promise<number> {
  const n = (await store.catalog()).find((c) => c.id === id);
  if (!n) throw new Error(`no node ${id}`);
  return n.rowid;
}

describe("opening", () => {
  it("needs a database URL", async () => {
    await expectCode(PostgresStore.open({ backend: "postgres", schema: "codemem_x", poolSize: 1 }, { mode: "read" }), "CONFIG_INVALID");
  });

  it("reports an unreachable server with its host and port", async () => {
    const s = settings({ dbUrl: withPort(server.dbUrl, 1) });
    const err = await PostgresStore.open(s, { mode: "read" }).catch((e: unknown) => e as { code: string; message: string });
    expect((err as { code: string }).code).toBe("BACKEND_UNREACHABLE");
    expect((err as Error).message).toContain("127.0.0.1:1");
  });

  it("reports a wrong password without printing it", async () => {
    const secret = "not-the-password-Zq9x";
    const err = (await PostgresStore.open(settings({ password: secret }), { mode: "read" }).catch((e: unknown) => e)) as Error & { code: string; toJSON(): unknown };
    expect(err.code).toBe("BACKEND_AUTH_FAILED");
    expect(err.message).toMatch(/CODEMEM_DB_PASSWORD/);
    expect(err.message).not.toContain(secret);
    expect(JSON.stringify(err.toJSON())).not.toContain(secret);
    expect(String(err.stack)).not.toContain(secret);
  });

  it("reports a missing password as an authentication failure", async () => {
    const s = settings();
    delete s.password;
    await expectCode(PostgresStore.open(s, { mode: "read" }), "BACKEND_AUTH_FAILED");
  });

  it("reports a missing database", async () => {
    const u = new URL(server.dbUrl);
    u.pathname = "/codemem_no_such_db";
    const err = (await PostgresStore.open(settings({ dbUrl: u.toString() }), { mode: "read" }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe("BACKEND_UNREACHABLE");
    expect(err.message).toContain("createdb");
  });

  it("reads of a project never built answer INDEX_MISSING, and so does a build without a vector width", async () => {
    const s = settings();
    await expectCode(PostgresStore.open(s, { mode: "read" }), "INDEX_MISSING");
    await expectCode(PostgresStore.open(s, { mode: "build" }), "INDEX_MISSING");
  });

  it("a database without pgvector enabled: BACKEND_UNSUPPORTED to build, INDEX_MISSING to read, and the check says why", async () => {
    const db = `codemem_novec_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`CREATE DATABASE ${db}`);
    try {
      const u = new URL(server.dbUrl);
      u.pathname = `/${db}`;
      const s = settings({ dbUrl: u.toString() });
      // pgvector is not a trusted extension: only a superuser may enable it.
      const err = (await PostgresStore.open(s, { mode: "build", dim: DIM }).catch((e: unknown) => e)) as Error & { code: string };
      expect(err.code).toBe("BACKEND_UNSUPPORTED");
      expect(err.message).toContain("CREATE EXTENSION vector");
      await expectCode(PostgresStore.open(s, { mode: "read" }), "INDEX_MISSING");
      const check = await checkPostgresBackend(s);
      expect(check.ok).toBe(false);
      expect(check.checks.at(-1)).toMatchObject({ name: "vector extension", ok: false });
      expect(check.checks.at(-1)!.detail).toContain("superuser");
    } finally {
      await dropTestDatabase(admin, db);
    }
  });

  it("location names the database and schema but not the password", async () => {
    const s = settings();
    const store = await PostgresStore.open(s, { mode: "build", dim: DIM });
    expect(store.location).toContain(`#${s.schema}`);
    expect(store.location).toContain("127.0.0.1:5432/codemem_test");
    expect(store.location).not.toContain(server.password);
    await store.close();
  });
});

describe("reading and writing", () => {
  it("round-trips a build and applies an incremental one", async () => {
    const s = settings();
    const d1 = delta({ "pkg/a.py": [{ name: "parse_config", body: "read yaml file" }], "pkg/b.py": [{ name: "send_mail", body: "smtp" }] });
    d1.edgesAdded = [{ source: "pkg/a.py::parse_config", target: "pkg/b.py::send_mail", type: "calls" }, { source: "pkg/a.py::module", target: "pkg/a.py::parse_config", type: "contains" }];
    await build(s, d1);
    const first = await reading(s, async (store) => {
      expect(await store.meta()).toMatchObject({ embedder: "test-embedder", dim: String(DIM) });
      expect((await store.files()).map((f) => f.path)).toEqual(["pkg/a.py", "pkg/b.py"]);
      expect((await store.files())[0]).toEqual({ path: "pkg/a.py", hash: "h-pkg/a.py", size: 100, language: "python", tokens: 10, line_count: 5, mtime_ms: 1700000000000.5 });
      expect((await store.extracts()).map((e) => e.path)).toEqual(["pkg/a.py", "pkg/b.py"]);
      expect(await store.edges()).toHaveLength(2);
      expect(await store.communities()).toEqual([{ id: 0, name: "modules", description: "module nodes", size: 1, files: ["pkg/a.py", "pkg/b.py"] }]);
      const catalog = await store.catalog();
      expect(catalog).toHaveLength(4);
      const parse = catalog.find((n) => n.name === "parse_config")!;
      expect(parse).toMatchObject({ type: "function", file_path: "pkg/a.py", community: 1, line_start: 1, parent: null });
      expect(await store.code(parse.rowid)).toContain("def parse_config");
      expect(await store.code(999_999)).toBe("");
      const vecs = await store.vectors([parse.rowid, 999_999]);
      expect([...vecs.keys()]).toEqual([parse.rowid]);
      expect(Array.from(vecs.get(parse.rowid)!)).toEqual(Array.from(axis(1)));
      const hashes = await store.nodeHashes(["pkg/a.py"]);
      expect(hashes.get("pkg/a.py::parse_config")).toEqual({ rowid: parse.rowid, textHash: "t-pkg/a.py::parse_config" });
      expect((await store.catalog(["pkg/b.py", "pkg/a.py"])).map((n) => n.file_path)).toEqual(["pkg/b.py", "pkg/b.py", "pkg/a.py", "pkg/a.py"]);
      expect(await store.sizeBytes()).toBeGreaterThan(0);
      return catalog;
    });

    // Incremental: a.py changes, b.py is removed, one edge goes, the community of a kept node moves.
    const d2 = delta({ "pkg/a.py": [{ name: "parse_settings", body: "read toml file" }] });
    d2.removedFiles = ["pkg/b.py"];
    d2.replaceNodesOf = ["pkg/a.py"];
    d2.edgesRemoved = [d1.edgesAdded[0]];
    d2.communityUpdates = new Map();
    d2.meta = { built_at: "later" };
    await build(s, d2);
    await reading(s, async (store) => {
      const catalog = await store.catalog();
      expect(catalog.map((n) => n.id).sort()).toEqual(["pkg/a.py::module", "pkg/a.py::parse_settings"]);
      expect(Math.min(...catalog.map((n) => n.rowid))).toBeGreaterThan(Math.max(...first.map((n) => n.rowid)));
      expect((await store.files()).map((f) => f.path)).toEqual(["pkg/a.py"]);
      expect(await store.edges()).toEqual([{ source: "pkg/a.py::module", target: "pkg/a.py::parse_config", type: "contains" }]);
      expect(await store.meta()).toMatchObject({ embedder: "test-embedder", built_at: "later" });
      expect(rowids(await store.lexicalNodes(["smtp"], 10))).toEqual([]);
      expect(rowids(await store.lexicalFiles(["mail"], 10))).toEqual([]);
      expect(await store.vectors(first.map((n) => n.rowid))).toEqual(new Map());
      await store.optimize();
    });
  });

  it("keeps two projects in one database apart", async () => {
    const a = settings();
    const b = settings();
    await build(a, delta({ "x.py": [{ name: "alpha_handler", body: "alpha" }] }));
    await build(b, delta({ "x.py": [{ name: "beta_handler", body: "beta" }] })); // same ids and paths
    await reading(a, async (store) => {
      expect((await store.catalog()).map((n) => n.name).sort()).toEqual(["alpha_handler", "x"]);
      expect(rowids(await store.lexicalNodes(["beta"], 10))).toEqual([]);
      expect(rowids(await store.lexicalNodes(["alpha"], 10))).toEqual([await rowidOf(store, "x.py::alpha_handler")]);
    });
    await reading(b, async (store) => {
      expect((await store.catalog()).map((n) => n.name).sort()).toEqual(["beta_handler", "x"]);
      expect(rowids(await store.lexicalNodes(["alpha"], 10))).toEqual([]);
    });
  });

  it("a failing apply leaves the previous index intact", async () => {
    const s = settings();
    await build(s, delta({ "a.py": [{ name: "keep_me" }], "b.py": [{ name: "other" }] }));
    const before = await reading(s, async (store) => ({ catalog: await store.catalog(), files: await store.files(), meta: await store.meta(), edges: await store.edges() }));

    // Deletes a.py's nodes, writes files and nodes, then hits a duplicate node id in the second batch.
    const bad = delta({ "a.py": [{ name: "n1" }, { name: "n2" }, { name: "n3" }] }, { meta: { embedder: "broken" } });
    bad.nodes.push({ ...bad.nodes[1] });
    bad.edgesAdded = [{ source: "a.py::n1", target: "a.py::n2", type: "calls" }];
    const store = await PostgresStore.open(s, { mode: "build", dim: DIM, batchSize: 2 });
    await expect(store.apply(bad)).rejects.toThrow();
    // The same store (and pool) still works afterwards.
    expect((await store.catalog()).length).toBe(before.catalog.length);
    await store.close();

    await reading(s, async (r) => {
      expect(await r.catalog()).toEqual(before.catalog);
      expect(await r.files()).toEqual(before.files);
      expect(await r.meta()).toEqual(before.meta);
      expect(await r.edges()).toEqual(before.edges);
      expect(rowids(await r.lexicalNodes(["keep"], 5))).toEqual([before.catalog.find((n) => n.name === "keep_me")!.rowid]);
    });
  });

  it("a failing first build leaves no index behind", async () => {
    const s = settings();
    const bad = delta({ "a.py": [{ name: "n1" }] });
    bad.nodes.push({ ...bad.nodes[1] });
    const store = await PostgresStore.open(s, { mode: "build", dim: DIM });
    await expect(store.apply(bad)).rejects.toThrow();
    await store.close();
    await expectCode(PostgresStore.open(s, { mode: "read" }), "INDEX_MISSING");
  });

  it("rejects vectors of another width before writing anything", async () => {
    const s = settings();
    await build(s, delta({ "a.py": [{ name: "f" }] }));
    const store = await PostgresStore.open(s, { mode: "build", dim: DIM });
    await expectCode(store.apply(delta({ "a.py": [{ name: "g", vector: axis(0, 4) }] })), "INDEX_EMBEDDER_MISMATCH");
    await store.close();
  });

  it("writes a 2,500-node delta in batches of 1000, first and incremental", async () => {
    const s = settings();
    const files: Record<string, NodeSpec[]> = {};
    for (let f = 0; f < 50; f++) files[`big/f${f}.py`] = Array.from({ length: 49 }, (_, i) => ({ name: `fn_${f}_${i}`, body: i === 48 && f === 49 ? "needle" : "hay" }));
    const d = delta(files);
    expect(d.nodes).toHaveLength(2500);
    await build(s, d, { batchSize: 1000 });
    await reading(s, async (store) => {
      const catalog = await store.catalog();
      expect(catalog).toHaveLength(2500);
      expect((await store.vectors(catalog.map((n) => n.rowid))).size).toBe(2500);
      expect(rowids(await store.lexicalNodes(["needle"], 5))).toEqual([await rowidOf(store, "big/f49.py::fn_49_48")]);
      expect(rowids(await store.lexicalFiles(["needle"], 5))).toEqual([await rowidOf(store, "big/f49.py::module")]);
      expect((await store.files()).length).toBe(50);
      expect((await store.nodeHashes(Object.keys(files))).size).toBe(2500);
    });
    // The same nodes again, as an incremental replacement of every file (indexes kept in place).
    await build(s, delta(files), { batchSize: 1000 });
    await reading(s, async (store) => {
      expect(await store.catalog()).toHaveLength(2500);
      expect(rowids(await store.lexicalNodes(["needle"], 5))).toEqual([await rowidOf(store, "big/f49.py::fn_49_48")]);
    });
  });
});

describe("schema and migrations", () => {
  it("re-opening and concurrent opens apply each migration once", async () => {
    const s = settings();
    // Two first builds at once: both commit, one after the other, and the index is whole.
    const [x, y] = await Promise.all([PostgresStore.open(s, { mode: "build", dim: DIM }), PostgresStore.open(s, { mode: "build", dim: DIM })]);
    await Promise.all([x.apply(delta({ "a.py": [{ name: "first" }] })), y.apply(delta({ "a.py": [{ name: "second" }] }))]);
    await Promise.all([x.close(), y.close()]);
    const names = await reading(s, async (store) => (await store.catalog()).map((n) => n.name));
    expect(names.length).toBe(2);
    expect(["first", "second"]).toContain(names.find((n) => n !== "a"));

    for (let i = 0; i < 3; i++) await (await PostgresStore.open(s, { mode: "build", dim: DIM })).close();
    const stores = await Promise.all([
      ...Array.from({ length: 4 }, () => PostgresStore.open(s, { mode: "build", dim: DIM })),
      ...Array.from({ length: 4 }, () => PostgresStore.open(s, { mode: "read" })),
    ]);
    await Promise.all(stores.map((st) => st.close()));
    const rows = await admin.query(`SELECT version FROM "${s.schema}".schema_migrations`);
    expect(rows.rows).toEqual([{ version: 1 }, { version: 2 }]);
  });

  it("an edge's dispatch confidence round-trips, a changed one replaces the edge, and degrees leave candidates out", async () => {
    const s = settings();
    const direct = { source: "a.py::caller", target: "a.py::Base.area", type: "calls" };
    const candidate = { source: "a.py::caller", target: "a.py::Square.area", type: "calls", dispatch: 0.5 };
    await build(s, delta({ "a.py": [{ name: "caller" }, { name: "Base.area" }, { name: "Square.area" }] }, { edgesAdded: [direct, candidate] }));
    const sorted = (es: object[]) => [...es].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    await reading(s, async (store) => {
      expect(sorted(await store.edges())).toEqual(sorted([direct, candidate]));
      expect(sorted(await store.neighbors(["a.py::Square.area"]))).toEqual([candidate]);
      expect((await store.degrees(["calls"])).get("a.py::Square.area")).toBeUndefined();
      expect((await store.degrees(["calls"])).get("a.py::Base.area")).toBe(1);
    });
    // A third implementer: the resolver removes the edge at 0.5 and adds it at 0.333.
    const now = { ...candidate, dispatch: 0.333 };
    await build(s, { ...delta({}), replaceNodesOf: [], upsertFiles: [], communities: [], communityOf: new Map(), edgesRemoved: [candidate], edgesAdded: [now] });
    await reading(s, async (store) => expect(sorted(await store.edges())).toEqual(sorted([direct, now])));
  });

  it("an index made before the dispatch column gains it when opened (migration 2)", async () => {
    const s = settings();
    await build(s, delta({ "a.py": [{ name: "f" }] }));
    await admin.query(`ALTER TABLE "${s.schema}".edges DROP COLUMN dispatch; DELETE FROM "${s.schema}".schema_migrations WHERE version = 2`);
    const edge = { source: "a.py::f", target: "a.py::f", type: "calls", dispatch: 1 };
    await build(s, { ...delta({}), replaceNodesOf: [], upsertFiles: [], communities: [], communityOf: new Map(), edgesAdded: [edge] });
    await reading(s, async (store) => expect(await store.edges()).toEqual([edge]));
  });

  it("an index of a newer schema is INDEX_CORRUPT until a forced build replaces it", async () => {
    const s = settings();
    await build(s, delta({ "a.py": [{ name: "f" }] }));
    await admin.query(`INSERT INTO "${s.schema}".schema_migrations (version, name) VALUES (999, 'from the future')`);
    await expectCode(PostgresStore.open(s, { mode: "read" }), "INDEX_CORRUPT");
    await expectCode(PostgresStore.open(s, { mode: "build", dim: DIM }), "INDEX_CORRUPT");
    await build(s, delta({ "a.py": [{ name: "g" }] }), { force: true });
    await reading(s, async (store) => expect((await store.catalog()).map((n) => n.name).sort()).toEqual(["a", "g"]));
  });

  it("a forced build of another width swaps the index in at commit; readers see the old one until then", async () => {
    const s = settings();
    await build(s, delta({ "a.py": [{ name: "old_fn" }] }));
    const reader = await PostgresStore.open(s, { mode: "read" });
    const builder = await PostgresStore.open(s, { mode: "build", dim: 4, force: true });
    expect(await builder.meta()).toEqual({ schema_version: "2", dim: "4" });
    expect(await builder.catalog()).toEqual([]);
    expect((await reader.catalog()).map((n) => n.name).sort()).toEqual(["a", "old_fn"]);

    // A forced build that fails keeps the old index.
    const bad = delta({ "a.py": [{ name: "x", vector: axis(0, 4) }] });
    bad.nodes[0].vector = axis(1, 4);
    bad.nodes.push({ ...bad.nodes[1] });
    await expect(builder.apply(bad)).rejects.toThrow();
    expect((await reader.catalog()).map((n) => n.name).sort()).toEqual(["a", "old_fn"]);

    const good = delta({ "a.py": [{ name: "new_fn", vector: axis(2, 4) }] });
    good.nodes[0].vector = axis(3, 4);
    await builder.apply(good);
    await builder.close();
    expect((await reader.catalog()).map((n) => n.name).sort()).toEqual(["a", "new_fn"]);
    expect((await reader.meta()).dim).toBe("4");
    const hit = await reader.nearest(axis(2, 4), 1);
    expect(hit[0].rowid).toBe(await rowidOf(reader, "a.py::new_fn"));
    await reader.close();
    const left = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [`${s.schema}__next`]);
    expect(left.rows).toEqual([]);
  });
});

describe("search", () => {
  let s: StoreSettings;
  beforeAll(async () => {
    s = settings();
    await build(
      s,
      delta({
        "src/config.py": [
          { name: "parse_config", doc: "Read the settings file", body: "open yaml load", vector: axis(2) },
          { name: "write_config", body: "dump yaml", vector: axis(3) },
        ],
        "src/net.py": [
          { name: "send_request", body: "parse response headers then retry", vector: axis(5) },
          { name: "open_socket", body: "connect tcp", vector: axis(6) },
        ],
      }),
    );
  });

  it("lexical search ranks name matches over body matches and stems words", async () => {
    await reading(s, async (store) => {
      const parse = await rowidOf(store, "src/config.py::parse_config");
      const send = await rowidOf(store, "src/net.py::send_request");
      expect(rowids(await store.lexicalNodes(["parse"], 10))).toEqual([parse, send]);
      expect(rowids(await store.lexicalNodes(["parsing"], 10))).toEqual([parse, send]);
      expect(rowids(await store.lexicalNodes(["parse"], 1))).toEqual([parse]);
      // OR of the words; a node matching both comes first.
      const r = rowids(await store.lexicalNodes(["yaml", "dump"], 10));
      expect(r[0]).toBe(await rowidOf(store, "src/config.py::write_config"));
      expect(new Set(r)).toEqual(new Set([parse, r[0]]));
      expect(rowids(await store.lexicalNodes(["tcp", "nothing_here_zz"], 10))).toEqual([await rowidOf(store, "src/net.py::open_socket")]);
    });
  });

  it("lexical search treats query syntax and stop words as plain text", async () => {
    await reading(s, async (store) => {
      expect(rowids(await store.lexicalNodes(["the", "and"], 10))).toEqual([]);
      expect(rowids(await store.lexicalNodes([], 10))).toEqual([]);
      for (const w of ["a'b", "&", "|", "!yaml", "yaml:*", "(", "'; DROP TABLE nodes; --", "\\", ":A"]) {
        rowids(await store.lexicalNodes([w], 10));
      }
      expect((rowids(await store.lexicalNodes(["!yaml"], 10))).length).toBe(2);
      expect(await store.catalog()).toHaveLength(6);
    });
  });

  it("lexical file search answers module nodes", async () => {
    await reading(s, async (store) => {
      expect(rowids(await store.lexicalFiles(["retry"], 5))).toEqual([await rowidOf(store, "src/net.py::module")]);
      expect(rowids(await store.lexicalFiles(["config"], 5))).toEqual([await rowidOf(store, "src/config.py::module")]);
    });
  });

  it("nearest answers by cosine similarity through the HNSW index", async () => {
    await reading(s, async (store) => {
      const hits = await store.nearest(axis(5), 3);
      expect(hits).toHaveLength(3);
      expect(hits[0].rowid).toBe(await rowidOf(store, "src/net.py::send_request"));
      expect(hits[0].sim).toBeCloseTo(1, 5);
      expect(hits[1].sim).toBeLessThanOrEqual(hits[0].sim);
      expect(hits[2].sim).toBeLessThanOrEqual(hits[1].sim);
      expect(await store.nearest(axis(2), 100)).toHaveLength(6);
      const plan = await admin.query(`SET enable_seqscan = off; EXPLAIN SELECT rowid FROM "${s.schema}".vectors ORDER BY embedding <=> '${JSON.stringify(Array.from(axis(5)))}' LIMIT 3`);
      expect(JSON.stringify((plan as unknown as pg.QueryResult[])[1].rows)).toContain("vectors_embedding");
      await admin.query("RESET enable_seqscan");
    });
  });
});

describe("lexical ranking", () => {
  it("weighs each word by how rare it is in the index (ts_rank alone has no IDF)", async () => {
    const s = settings();
    const files: Record<string, NodeSpec[]> = {
      "w/many.py": Array.from({ length: 60 }, (_, i) => ({ name: `fn_${i}`, body: "common common helper" })),
      "w/one.py": [{ name: "lonely", body: "rare helper" }],
    };
    await build(s, delta(files));
    await reading(s, async (store) => {
      const lonely = await rowidOf(store, "w/one.py::lonely");
      const hits = await store.lexicalNodes(["common", "rare"], 10);
      expect(hits[0].rowid).toBe(lonely);
      expect(hits[0].score).toBeGreaterThan(hits[1].score);
    });
  });
});

describe("search at scale", () => {
  it("leaves words found in very many rows out of the match but not out of the rank", async () => {
    // 25,000 nodes, all but the module nodes saying "common": past the 20,000-row match limit.
    const s = settings();
    const files: Record<string, NodeSpec[]> = {};
    for (let f = 0; f < 500; f++) {
      files[`w/f${f}.py`] = Array.from({ length: 49 }, (_, i) => ({ name: `fn_${f}_${i}`, body: f % 100 === 7 && i === 3 ? "common rare" : "common" }));
    }
    await build(s, delta(files), { batchSize: 5000 });
    await reading(s, async (store) => {
      const rare = await Promise.all([7, 107, 207, 307, 407].map((f) => rowidOf(store, `w/f${f}.py::fn_${f}_3`)));
      expect(new Set(rowids(await store.lexicalNodes(["common", "rare"], 120)))).toEqual(new Set(rare));
      expect(new Set(rowids(await store.lexicalNodes(["rare"], 120)))).toEqual(new Set(rare));
      // Only common words: the least common one still matches, up to the limit.
      const common = rowids(await store.lexicalNodes(["common"], 120));
      expect(common).toHaveLength(120);
    });
  }, 120_000);
});

describe("backend-check", () => {
  it("passes against the test server", async () => {
    const r = await checkPostgresBackend(settings());
    expect(r.checks.filter((c) => !c.ok)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.checks.map((c) => c.name)).toEqual(["database URL", "TCP reachable", "login", "server version", "vector extension", "scratch index", "project index"]);
    expect(JSON.stringify(r)).not.toContain(server.password);
  });

  it("names the failing step for a bad port, a wrong password and a missing URL", async () => {
    const port = await checkPostgresBackend(settings({ dbUrl: withPort(server.dbUrl, 1) }));
    expect(port.ok).toBe(false);
    expect(port.checks.at(-1)).toMatchObject({ name: "TCP reachable", ok: false });
    expect(port.checks.at(-1)!.detail).toContain("127.0.0.1:1");

    const secret = "wrong-Pw-77";
    const auth = await checkPostgresBackend(settings({ password: secret }));
    expect(auth.checks.at(-1)).toMatchObject({ name: "login", ok: false });
    expect(auth.checks.at(-1)!.detail).toMatch(/CODEMEM_DB_PASSWORD/);
    expect(JSON.stringify(auth)).not.toContain(secret);

    const none = await checkPostgresBackend({ backend: "postgres", schema: "codemem_x", poolSize: 1 });
    expect(none.checks).toHaveLength(1);
    expect(none.checks[0]).toMatchObject({ name: "database URL", ok: false });
  });
});

describe("a server that goes away and comes back", () => {
  it("fails reads with BACKEND_UNREACHABLE while it is gone, never crashes the process, and reads again once it is back", async () => {
    // A TCP proxy in front of the test server that can cut every connection and refuse new ones.
    const target = new URL(server.dbUrl);
    let up = true;
    const open = new Set<net.Socket>();
    const proxy = net.createServer((c) => {
      if (!up) return void c.destroy();
      const s = net.connect(Number(target.port || 5432), target.hostname);
      for (const x of [c, s]) {
        open.add(x);
        x.on("error", () => {});
        x.on("close", () => (open.delete(x), c.destroy(), s.destroy()));
      }
      c.pipe(s);
      s.pipe(c);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const viaProxy = new URL(server.dbUrl);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String((proxy.address() as net.AddressInfo).port);
    const s = settings({ dbUrl: viaProxy.toString() });
    const crashes: unknown[] = [];
    const onCrash = (err: unknown) => crashes.push(err);
    process.on("uncaughtException", onCrash);
    try {
      await build(s, delta({ "pkg/a.py": [{ name: "parse_config", body: "read yaml file" }] }));
      await reading(s, async (store) => {
        const read = () => Promise.all([store.lexicalNodes(["parse", "config"], 5), store.nearest(axis(1), 5)]);
        expect((await read())[0].length).toBeGreaterThan(0);
        up = false;
        for (const x of open) x.destroy();
        for (let i = 0; i < 3; i++) await expectCode(read(), "BACKEND_UNREACHABLE");
        up = true;
        const [lex, near] = await read();
        expect(lex.length).toBeGreaterThan(0);
        expect(near.length).toBeGreaterThan(0);
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(crashes).toEqual([]);
    } finally {
      process.off("uncaughtException", onCrash);
      await new Promise((r) => proxy.close(r));
    }
  });
});
