#!/usr/bin/env node
// Docstring/code pairs for training the code-search model (scripts/train-model.py), one JSON file
// per training package under .bench-cache/model-pairs/<package>.json, kept while the package's
// .corpus-source stamp is unchanged (packages are fetched by scripts/fetch-train-corpora.sh; the
// retrieval benchmark's corpora are never among them).
//
//   node scripts/model-pairs.mjs [--follow]
//   node scripts/model-pairs.mjs --eval     (tuning data: .bench-cache/model-eval.json)
//
// A pair is [summary words, code words, node name, file path]: the first paragraph of a node's
// docstring against the text the embedder reads for the node (scripts/../daemon/index/documents.ts
// embeddingText) without the docstring, both as stemmed content words, exactly as the embedder
// tokenises them. --follow keeps polling for packages until fetch-train-corpora.sh has finished.
//
// --eval writes what train-model.py measures itself on: for the corpora of the tuning question sets
// (questions.json, dev.json; heldout.json is never read here), every node's words, file and
// built-in vector parts, and every question's words, term weights (IDF over the corpus' nodes, as
// the retriever weighs them) and built-in vector parts.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = (p) => path.join(root, "dist", p);
const { resolveConfig } = await import(dist("shared/config.js"));
const { discover, inspectContent } = await import(dist("daemon/index/walk.js"));
const { Extractor } = await import(dist("daemon/index/extract.js"));
const { resolveGraph } = await import(dist("daemon/index/resolve.js"));
const { childNamesByParent, embeddingText } = await import(dist("daemon/index/documents.js"));
const { contentWords, stem } = await import(dist("daemon/index/text.js"));

const trainDir = path.join(root, ".bench-cache/train");
const outDir = path.join(root, ".bench-cache/model-pairs");
const follow = process.argv.includes("--follow");
const log = (msg, extra = {}) => console.error(JSON.stringify({ level: "info", msg, ...extra }));
const words = (text) => contentWords(text).map(stem);
fs.mkdirSync(outDir, { recursive: true });
const extractor = new Extractor();

async function extractAll(dir) {
  const cfg = resolveConfig(dir);
  const extracts = [];
  for (const c of discover(cfg).files) {
    const buf = fs.readFileSync(c.abs);
    if (inspectContent(c.path, buf)) continue;
    try {
      extracts.push(await extractor.extract(c.path, buf.toString("utf8"), c.language));
    } catch {
      // unparsable file: skipped
    }
  }
  return extracts;
}

if (process.argv.includes("--eval")) {
  const { HashFeatures } = await import(dist("daemon/index/embed/hash-features.js"));
  const { WordVectors } = await import(dist("daemon/index/embed/word-vectors.js"));
  const hash = new HashFeatures(256);
  const wv = WordVectors.load(path.join(root, "daemon/index/embed/code-words.bin"));
  const specs = ["questions.json", "dev.json"].map((f) => JSON.parse(fs.readFileSync(path.join(root, "test/bench/retrieval", f), "utf8")));
  const out = {};
  const arr = (v) => Array.from(v, (x) => +x.toFixed(5));
  for (const [name, c] of Object.entries(specs[0].corpora)) {
    const extracts = await extractAll(path.join(root, c.dir));
    const g = resolveGraph(extracts);
    const children = childNamesByParent(g.nodes);
    const texts = g.nodes.map((n) => embeddingText(n, children.get(n.id) ?? []));
    const df = new Map();
    for (const t of texts) for (const w of new Set(words(t))) df.set(w, (df.get(w) ?? 0) + 1);
    const N = texts.length;
    const weight = (w) => (df.has(w) ? Math.log((N + 1) / (df.get(w) + 1)) + 1 : Math.log(N + 1) + 1);
    const questions = specs.flatMap((s) => s.questions.filter((q) => q.corpus === name)).map((q) => ({
      id: q.id,
      words: words(q.question),
      weights: words(q.question).map(weight),
      gold: q.gold_files,
      hash: arr(hash.vector(q.question, weight)),
      wv: arr(wv.vector(q.question, weight)),
    }));
    out[name] = { files: g.nodes.map((n) => n.file_path), words: texts.map(words), hash: texts.map((t) => arr(hash.vector(t))), wv: texts.map((t) => arr(wv.vector(t))), questions };
    log("eval corpus", { corpus: name, nodes: N, questions: questions.length });
  }
  fs.writeFileSync(path.join(root, ".bench-cache/model-eval.json"), JSON.stringify(out));
  process.exit(0);
}

async function pairsOf(dir) {
  const extracts = await extractAll(dir);
  const g = resolveGraph(extracts);
  const children = childNamesByParent(g.nodes);
  const pairs = [];
  for (const n of g.nodes) {
    const summary = n.docstring.split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
    if (summary.length < 20 || /^(copyright|license|todo|deprecated|author)/i.test(summary)) continue;
    const q = words(summary).slice(0, 48);
    const c = words(embeddingText({ ...n, docstring: "" }, children.get(n.id) ?? []));
    if (q.length >= 3 && c.length >= 2) pairs.push([q.join(" "), c.join(" "), n.name, n.file_path]);
  }
  return { files: extracts.length, pairs };
}

const done = new Set();
for (;;) {
  const names = fs.existsSync(trainDir) ? fs.readdirSync(trainDir).filter((d) => !d.startsWith(".")).sort() : [];
  let fresh = 0;
  for (const name of names) {
    const stampFile = path.join(trainDir, name, ".corpus-source");
    if (done.has(name) || !fs.existsSync(stampFile)) continue;
    const stamp = fs.readFileSync(stampFile, "utf8").trim();
    const out = path.join(outDir, `${name}.json`);
    done.add(name);
    if (fs.existsSync(out) && JSON.parse(fs.readFileSync(out, "utf8")).stamp === stamp) continue;
    const t0 = performance.now();
    const { files, pairs } = await pairsOf(path.join(trainDir, name));
    fs.writeFileSync(out, JSON.stringify({ stamp, pairs }));
    fresh++;
    log("pairs", { package: name, files, pairs: pairs.length, ms: Math.round(performance.now() - t0) });
  }
  // Packages no longer fetched are not trained on.
  for (const f of fs.readdirSync(outDir)) if (!names.includes(f.replace(/\.json$/, ""))) fs.rmSync(path.join(outDir, f));
  const fetching = follow && fs.readdirSync("/proc").some((p) => /^\d+$/.test(p) && safeRead(`/proc/${p}/cmdline`).includes("fetch-train-corpora.sh"));
  if (!fetching) break;
  if (fresh === 0) await new Promise((r) => setTimeout(r, 5000));
}
log("done", { packages: done.size });

function safeRead(f) {
  try {
    return fs.readFileSync(f, "utf8");
  } catch {
    return "";
  }
}
