#!/usr/bin/env node
// Figures for the postgres backend on synthetic nodes (vectors clustered by topic, like real embeddings): one full apply, search latencies,
// one incremental apply. Needs the server of scripts/setup-postgres.sh and a built dist/.
//   N=100000 DIM=384 node scripts/bench-postgres.mjs
// Env: N (nodes), DIM, BATCH (batch size), KEEP=1 keeps the schema, CODEMEM_TEST_PG_URL / _PASSWORD_FILE.
import fs from "node:fs";
import { PostgresStore } from "../dist/daemon/store/postgres.js";
import { Retriever } from "../dist/daemon/retrieve/retriever.js";

const N = Number(process.env.N ?? 100_000);
const DIM = Number(process.env.DIM ?? 384);
const BATCH = Number(process.env.BATCH ?? 1000);
const PER_FILE = 50;
const VOCAB = 30_000;
const dbUrl = process.env.CODEMEM_TEST_PG_URL || "postgres://codemem@127.0.0.1:5432/codemem_test";
const password = fs.readFileSync(process.env.CODEMEM_TEST_PG_PASSWORD_FILE || "/tmp/codemem-pg-password", "utf8").split("\n")[0].trim();
const schema = `codemem_bench_${N}_${DIM}_c`;
const settings = { backend: "postgres", dbUrl, password, schema, poolSize: 4 };

// Deterministic pseudo-random numbers (mulberry32), so runs compare.
let seed = 42;
const rand = () => {
  let t = (seed = (seed + 0x6d2b79f5) | 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const syll = ["ba", "ko", "ru", "mi", "te", "lo", "ne", "si", "pa", "du", "fa", "gi", "ho", "ju", "ve", "zo", "xa", "qu", "wi", "ye"];
const vocab = Array.from({ length: VOCAB }, (_, i) => {
  let w = "";
  for (let x = i + 1; x > 0; x = Math.floor(x / 20)) w += syll[x % 20];
  return w + "x";
});
/** Word ranks roughly Zipf-distributed (log-uniform): a few words are everywhere, most are rare. */
const word = () => vocab[Math.min(VOCAB - 1, Math.floor(Math.exp(rand() * Math.log(VOCAB))) - 1)];
const words = (n) => Array.from({ length: n }, word).join(" ");
const unit = () => {
  const v = new Float32Array(DIM);
  let s = 0;
  for (let i = 0; i < DIM; i++) s += (v[i] = rand() - 0.5) ** 2;
  s = Math.sqrt(s);
  for (let i = 0; i < DIM; i++) v[i] /= s;
  return v;
};
// Embeddings of real code are not spread evenly over the sphere (where nearest neighbours are barely
// nearer than anything else and no index can find them): they gather by topic. Nodes of a file sit
// around one of CLUSTERS topic centres (cosine ~0.75 to it, ~0.55 to each other); queries too.
const CLUSTERS = 2000;
const NOISE = 0.045; // per dimension: |noise|^2 = 384 * 0.045^2 = 0.78
const centres = Array.from({ length: CLUSTERS }, unit);
const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
const around = (cluster) => {
  const c = centres[cluster % CLUSTERS];
  const v = new Float32Array(DIM);
  let s = 0;
  for (let i = 0; i < DIM; i++) s += (v[i] = c[i] + NOISE * gauss()) ** 2;
  s = Math.sqrt(s);
  for (let i = 0; i < DIM; i++) v[i] /= s;
  return v;
};
const query = () => around(Math.floor(rand() * CLUSTERS));

function makeDelta(count, fileOffset = 0) {
  const nodes = [];
  const files = [];
  const communityOf = new Map();
  for (let f = 0; f * PER_FILE < count; f++) {
    const path = `src/m${f + fileOffset}/file${f + fileOffset}.py`;
    files.push(path);
    const fileBody = [];
    for (let i = 0; i < PER_FILE && f * PER_FILE + i < count; i++) {
      const name = words(2);
      const body = words(30);
      fileBody.push(name, body);
      const id = `${path}::${i}`;
      communityOf.set(id, f % 200);
      nodes.push({
        node: { id, name: name.replace(" ", "_"), type: i === 0 ? "module" : "function", file_path: path, description: "", community: 0, qualified_name: name, signature: `def ${name}()`, docstring: words(6), line_start: i * 10 + 1, line_end: i * 10 + 9, language: "python", code: `def f():\n    ${body}\n`, bases: [] },
        textHash: `h${id}`,
        lexical: { name, qualified: name, signature: name, doc: words(6), path: path.replace(/[/.]/g, " "), body },
        vector: around(f + fileOffset),
      });
    }
    nodes[nodes.length - Math.min(PER_FILE, count - f * PER_FILE)].fileWords = fileBody.join(" ");
  }
  return {
    removedFiles: [],
    upsertFiles: files.map((path) => ({ row: { path, hash: "x", size: 1000, language: "python", tokens: 100, line_count: 500, mtime_ms: 1 }, extract: { path, language: "python", moduleDoc: "", lineCount: 500, defs: [], calls: [], imports: [], tokens: 100 } })),
    replaceNodesOf: files,
    nodes,
    edgesAdded: nodes.slice(1).map((n, i) => ({ source: nodes[i].node.id, target: n.node.id, type: "calls" })),
    edgesRemoved: [],
    communities: Array.from({ length: 200 }, (_, id) => ({ id, name: `c${id}`, description: "", size: 1, files: [] })),
    communityOf,
    meta: { embedder: "bench" },
  };
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const ms = (t) => Math.round(t * 10) / 10;
const mem = () => Math.round(process.memoryUsage().rss / 1e6);

const existing = await PostgresStore.open(settings, { mode: "read" }).catch(() => undefined);
if (existing && (await existing.catalog()).length === N && process.env.REBUILD !== "1") {
  console.log(`reusing ${schema} (REBUILD=1 to rebuild)`);
} else {
  let t = performance.now();
  const delta = makeDelta(N);
  console.log(`generated ${N} nodes × ${DIM} dims in ${ms((performance.now() - t) / 1000)} s (rss ${mem()} MB)`);
  const store = await PostgresStore.open(settings, { mode: "build", dim: DIM, batchSize: BATCH, force: true });
  t = performance.now();
  await store.apply(delta);
  console.log(`full apply (fresh schema, indexes built after load): ${ms((performance.now() - t) / 1000)} s`);
  await store.close();
}
await existing?.close();

const store = await PostgresStore.open(settings, { mode: "read" });
console.log(`size: ${Math.round((await store.sizeBytes()) / 1e6)} MB`);
let t = performance.now();
const catalog = await store.catalog();
console.log(`catalog of ${catalog.length} nodes: ${ms(performance.now() - t)} ms`);

const lex = [], lexFiles = [], near = [];
let hits = 0;
for (let i = 0; i < 60; i++) {
  const q = Array.from({ length: 3 + (i % 3) }, word);
  t = performance.now();
  hits += (await store.lexicalNodes(q, 120)).length;
  if (i >= 10) lex.push(performance.now() - t);
  t = performance.now();
  await store.lexicalFiles(q, 30);
  if (i >= 10) lexFiles.push(performance.now() - t);
  t = performance.now();
  await store.nearest(query(), 120);
  if (i >= 10) near.push(performance.now() - t);
}
console.log(`lexicalNodes(3-5 words, 120): p50 ${ms(pct(lex, 50))} ms, p95 ${ms(pct(lex, 95))} ms (avg ${Math.round(hits / 60)} hits)`);
console.log(`lexicalFiles(3-5 words, 30): p50 ${ms(pct(lexFiles, 50))} ms, p95 ${ms(pct(lexFiles, 95))} ms`);
console.log(`nearest(120): p50 ${ms(pct(near, 50))} ms, p95 ${ms(pct(near, 95))} ms`);

// The whole search path the daemon runs (lexical + whole-file + vector candidates from the store,
// fusion, file prior, graph bonus over the in-memory catalog), with synthetic query vectors.
t = performance.now();
const retriever = await Retriever.open(store);
console.log(`retriever warm-up (catalog, adjacency, communities): ${ms((performance.now() - t) / 1000)} s (rss ${mem()} MB)`);
const synthetic = { id: "bench", dim: DIM, embed: async (texts) => texts.map(() => query()) };
const full = [];
for (let i = 0; i < 60; i++) {
  const q = Array.from({ length: 3 + (i % 3) }, word).join(" ");
  t = performance.now();
  await retriever.search(q, synthetic, 10);
  if (i >= 10) full.push(performance.now() - t);
}
console.log(`search (full retriever path, limit 10): p50 ${ms(pct(full, 50))} ms, p95 ${ms(pct(full, 95))} ms  [target p50 ≤ 50 ms at 1M nodes]`);

// Each stored vector should come back first when searched for (at the search path's 120 candidates).
let found = 0;
const probe = Array.from({ length: 20 }, (_, i) => catalog[Math.floor((i * catalog.length) / 20)].rowid);
const vecs = await store.vectors(probe);
for (const [rowid, v] of vecs) {
  const ann = await store.nearest(v, 120);
  if (ann[0]?.rowid === rowid || ann[0]?.sim > 0.999) found++;
}
console.log(`self-match found first for ${found}/${vecs.size} stored vectors`);

// Recall@10 of the HNSW index against an exact scan, for fresh query vectors.
{
  const pg = (await import("pg")).default;
  const u = new URL(dbUrl);
  u.password = password;
  const c = new pg.Client({ connectionString: u.toString(), options: `-c search_path=${schema},public -c jit=off` });
  await c.connect();
  let hit = 0, total = 0;
  for (let i = 0; i < 10; i++) {
    const q = query();
    const ann = (await store.nearest(q, 120)).slice(0, 10).map((x) => x.rowid);
    await c.query("BEGIN; SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off");
    const exact = (await c.query("SELECT rowid FROM vectors ORDER BY embedding <=> $1::vector LIMIT 10", [`[${[...q].join(",")}]`])).rows.map((r) => Number(r.rowid));
    await c.query("COMMIT");
    hit += exact.filter((r) => ann.includes(r)).length;
    total += exact.length;
  }
  await c.end();
  console.log(`HNSW recall@10 against an exact scan (10 queries, ef_search 120): ${(hit / total).toFixed(2)}`);
}
await store.close();

const writer = await PostgresStore.open(settings, { mode: "build", dim: DIM, batchSize: BATCH });
const small = makeDelta(PER_FILE, 0);
small.communityUpdates = new Map();
t = performance.now();
await writer.apply(small);
console.log(`incremental apply of one 50-node file: ${ms(performance.now() - t)} ms`);
await writer.close();

if (process.env.KEEP !== "1") {
  const pg = (await import("pg")).default;
  const u = new URL(dbUrl);
  u.password = password;
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await c.end();
}
