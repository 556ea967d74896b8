#!/usr/bin/env node
// Rough figures for the LanceDB backend on synthetic nodes: a full apply, search latencies,
// incremental applies small and large, optimize. Needs a built dist/.
//   N=20000 DIM=384 node scripts/bench-lance.mjs
// Env: N (nodes), DIM, DIR (index directory; a temp one by default, removed unless KEEP=1).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LanceStore } from "../dist/daemon/store/lance.js";

const N = Number(process.env.N ?? 20_000);
const DIM = Number(process.env.DIM ?? 384);
const PER_FILE = 10;
const dir = process.env.DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), "codemem-bench-lance-"));

// Seeded xorshift: runs compare.
let s = 0x9e3779b9;
const rnd = () => {
  s ^= s << 13;
  s ^= s >>> 17;
  s ^= s << 5;
  return (s >>> 0) / 4294967296;
};
// 20k made-up words drawn log-uniformly: a few common, most rare, as identifiers are.
const letters = "abcdefghijklmnopqrstuvwxyz";
const vocab = Array.from({ length: 20_000 }, (_, i) => {
  let w = "";
  for (let x = i + 7; x > 0; x = Math.floor(x / 26)) w += letters[x % 26];
  return w + "q";
});
const word = () => vocab[Math.floor(Math.exp(rnd() * Math.log(vocab.length))) - 1];
const words = (n) => Array.from({ length: n }, word).join(" ");
const gauss = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
// Embeddings cluster: 300 topic centres plus noise, normalised.
const centres = Array.from({ length: 300 }, () => Float32Array.from({ length: DIM }, gauss));
const unit = (c = centres[Math.floor(rnd() * centres.length)]) => {
  const v = Float32Array.from(c, (x) => x + 0.9 * gauss());
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

function makeDelta(fileFrom, fileCount) {
  const nodes = [];
  const files = [];
  const communityOf = new Map();
  for (let f = fileFrom; f < fileFrom + fileCount; f++) {
    const file = `src/pkg${f % 97}/mod${f}.py`;
    files.push(file);
    const fileWords = [];
    for (let i = 0; i < PER_FILE; i++) {
      const name = words(2);
      const body = words(60);
      fileWords.push(name, body);
      const id = i === 0 ? file : `${file}::${name.replace(" ", "_")}_${i}`;
      communityOf.set(id, f % 200);
      nodes.push({
        node: { id, name: name.replace(" ", "_"), type: i === 0 ? "module" : "function", file_path: file, description: "", community: 0, qualified_name: name, signature: `def ${name.replace(" ", "_")}(a, b)`, docstring: words(12), line_start: i * 20 + 1, line_end: i * 20 + 19, language: "python", code: `def f(a, b):\n    ${body}\n`.repeat(3), bases: [], parent: i === 0 ? undefined : file },
        textHash: `h-${id}`,
        lexical: { name, qualified: name, signature: name, doc: words(12), path: file.replace(/[/._]/g, " "), body },
        vector: unit(),
      });
    }
    nodes[nodes.length - PER_FILE].fileWords = fileWords.join(" ");
  }
  return {
    removedFiles: [],
    upsertFiles: files.map((p) => ({ row: { path: p, hash: "x", size: 4000, language: "python", tokens: 900, line_count: 200, mtime_ms: 1 }, extract: { path: p, language: "python", moduleDoc: "", lineCount: 200, defs: [], calls: [], imports: [], tokens: 900 } })),
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
const r1 = (x) => Math.round(x * 10) / 10;
const mb = (b) => Math.round(b / 1e6);
const time = async (f) => {
  const t = performance.now();
  const r = await f();
  return [performance.now() - t, r];
};

async function searches(store, label) {
  const lex = [];
  const files = [];
  const near = [];
  const code = [];
  let hits = 0;
  for (let i = 0; i < 60; i++) {
    const q = Array.from({ length: 3 + (i % 3) }, word);
    const [a, r] = await time(() => store.lexicalNodes(q, 120));
    const [b] = await time(() => store.lexicalFiles(q, 30));
    const [c, nn] = await time(() => store.nearest(unit(), 120));
    const [d] = await time(() => store.code(nn[0].rowid));
    hits += r.length;
    // The first ten warm the caches.
    if (i >= 10) lex.push(a), files.push(b), near.push(c), code.push(d);
  }
  console.log(`${label}: lexicalNodes(3-5 words, 120) p50 ${r1(pct(lex, 50))} ms p95 ${r1(pct(lex, 95))} ms (avg ${Math.round(hits / 60)} hits); lexicalFiles(30) p50 ${r1(pct(files, 50))} ms; nearest(120) p50 ${r1(pct(near, 50))} ms p95 ${r1(pct(near, 95))} ms; code() p50 ${r1(pct(code, 50))} ms`);
}

const files = Math.ceil(N / PER_FILE);
let [t, delta] = await time(() => makeDelta(0, files));
console.log(`generated ${delta.nodes.length} nodes × ${DIM} dims in ${r1(t / 1000)} s`);
const w = await LanceStore.open(dir, { mode: "build", dim: DIM, force: true });
[t] = await time(() => w.apply(delta));
console.log(`full apply: ${r1(t / 1000)} s, index ${mb(await w.sizeBytes())} MB, rss ${mb(process.memoryUsage().rss)} MB`);
delta = undefined;

const r = await LanceStore.open(dir, { mode: "read" });
[t] = await time(() => r.catalog());
console.log(`catalog: ${Math.round(t)} ms`);
await searches(r, "after full apply");

// Re-index one file, then 30 files: the first leaves a tail Lance scans, the second folds it in.
for (const count of [1, 30]) {
  const d = makeDelta(0, count);
  d.communityUpdates = new Map();
  [t] = await time(() => w.apply(d));
  console.log(`incremental apply of ${count} file(s) (${count * PER_FILE} nodes): ${Math.round(t)} ms`);
  await r.refresh(d.replaceNodesOf);
  await searches(r, `  after it`);
}
[t] = await time(() => w.optimize());
console.log(`optimize: ${r1(t / 1000)} s, index ${mb(await w.sizeBytes())} MB`);
await r.refresh([]);
await searches(r, "after optimize");
await Promise.all([w.close(), r.close()]);
if (process.env.KEEP !== "1" && !process.env.DIR) fs.rmSync(dir, { recursive: true, force: true });
