#!/usr/bin/env node
// Trains the word vectors of the built-in embedder (daemon/index/embed/code-words.bin) on
// documented code from many projects (scripts/fetch-train-corpora.sh), never on the retrieval
// benchmark's corpora: a neural bag of words whose docstring summaries and code (name, signature,
// path, body identifiers) are pulled together by an in-batch contrastive loss, so that words of
// questions land near the words of the code that answers them.
//
//   node scripts/train-embedder.mjs [--epochs N] [--dim D] [--vocab V] [--no-fetch] [--out FILE]
//
// Prints, per epoch, the vector-only file MRR on the tuning question sets (questions.json and
// dev.json; heldout.json is never read here) for the learned vectors alone and combined with the
// hashed features, next to the hashed features alone.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { inflateRawSync } from "node:zlib";
import Database from "better-sqlite3";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = (p) => path.join(root, "dist", p);
const { embeddingText } = await import(dist("daemon/index/documents.js"));
const { contentWords, stem } = await import(dist("daemon/index/text.js"));
const { writeWordVectors } = await import(dist("daemon/index/embed/word-vectors.js"));
const { HashFeatures } = await import(dist("daemon/index/embed/hash-features.js"));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const EPOCHS = Number(opt("--epochs", 3));
const DIM = Number(opt("--dim", 128));
const VOCAB = Number(opt("--vocab", 40000));
const BATCH = Number(opt("--batch", 512));
const TAU = Number(opt("--tau", 0.05));
const LR = Number(opt("--lr", 0.08));
/** Probability of hiding from the code side a word the summary also uses: forces associations between different words. */
const MASK = Number(opt("--mask", 0.5));
/** Share of batches drawn from one package: negatives from the same domain teach finer distinctions. */
const GROUPED = Number(opt("--grouped", 0.5));
const MIN_COUNT = 5;
const OUT = path.resolve(opt("--out", path.join(root, "daemon/index/embed/code-words.bin")));
const pairsDir = path.join(root, ".bench-cache/model-pairs");

const log = (...a) => console.error("train-embedder:", ...a);
const words = (text) => contentWords(text).map(stem);

// 1. Pairs (docstring summary → code without its docstring) from every training corpus, as
// scripts/model-pairs.mjs writes them per package (it keeps a package's pairs while its stamp holds).
if (!args.includes("--no-fetch")) execFileSync("bash", [path.join(root, "scripts/fetch-train-corpora.sh")], { stdio: ["ignore", "ignore", "inherit"] });
execFileSync(process.execPath, [path.join(root, "scripts/model-pairs.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
const pairs = [];
for (const f of fs.readdirSync(pairsDir).filter((f) => f.endsWith(".json")).sort()) {
  const pkg = f.replace(/\.json$/, "");
  for (const [q, c] of JSON.parse(fs.readFileSync(path.join(pairsDir, f), "utf8")).pairs) pairs.push([q, c, pkg]);
}
log(`${pairs.length} pairs`);

// 2. Vocabulary and SIF weights a/(a + p(w)): frequent words count less.
const counts = new Map();
for (const [q, c] of pairs) for (const w of `${q} ${c}`.split(" ")) counts.set(w, (counts.get(w) ?? 0) + 1);
const vocab = [...counts.entries()].filter(([, n]) => n >= MIN_COUNT).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, VOCAB).map(([w]) => w);
const index = new Map(vocab.map((w, i) => [w, i]));
const total = [...counts.values()].reduce((a, b) => a + b, 0);
const SIF_A = 1e-3;
const weight = Float32Array.from(vocab, (w) => SIF_A / (SIF_A + counts.get(w) / total));
log(`vocabulary ${vocab.length} words (min count ${MIN_COUNT}), ${pairs.length} pairs`);
const ids = (text) => Int32Array.from(text.split(" ").map((w) => index.get(w)).filter((i) => i !== undefined));
const data = pairs.map(([q, c, pkg]) => [ids(q), ids(c), pkg]).filter(([q, c]) => q.length >= 2 && c.length >= 1);

// 3. Model: one table for both sides; text vector = normalised SIF-weighted sum of word vectors.
let seed = Number(opt("--seed", 7));
const rand = () => {
  let t = (seed = (seed + 0x6d2b79f5) | 0);
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const E = new Float32Array(vocab.length * DIM).map(() => (rand() - 0.5) * 0.2);
const G = new Float32Array(vocab.length * DIM).fill(1e-6); // Adagrad accumulators

function encode(tokens, out, o) {
  for (let d = 0; d < DIM; d++) out[o + d] = 0;
  for (const t of tokens) {
    const w = weight[t];
    const b = t * DIM;
    for (let d = 0; d < DIM; d++) out[o + d] += w * E[b + d];
  }
  let s = 0;
  for (let d = 0; d < DIM; d++) s += out[o + d] * out[o + d];
  return Math.sqrt(s) || 1;
}

function step(batch) {
  const B = batch.length;
  const U = new Float32Array(B * DIM), V = new Float32Array(B * DIM);
  const nu = new Float32Array(B), nv = new Float32Array(B);
  for (let i = 0; i < B; i++) {
    nu[i] = encode(batch[i][0], U, i * DIM);
    nv[i] = encode(batch[i][1], V, i * DIM);
    for (let d = 0; d < DIM; d++) {
      U[i * DIM + d] /= nu[i];
      V[i * DIM + d] /= nv[i];
    }
  }
  // S = U V^T / tau; symmetric cross-entropy with the diagonal as targets.
  const S = new Float32Array(B * B);
  for (let i = 0; i < B; i++)
    for (let j = 0; j < B; j++) {
      let s = 0;
      for (let d = 0; d < DIM; d++) s += U[i * DIM + d] * V[j * DIM + d];
      S[i * B + j] = s / TAU;
    }
  const dS = new Float32Array(B * B);
  // Cross-entropy of each row (question → code) and each column (code → question); element k of
  // line `l` sits at S[l * along + k * across].
  let loss = 0;
  const crossEntropy = (along, across) => {
    for (let l = 0; l < B; l++) {
      let m = -Infinity;
      for (let k = 0; k < B; k++) m = Math.max(m, S[l * along + k * across]);
      let z = 0;
      for (let k = 0; k < B; k++) z += Math.exp(S[l * along + k * across] - m);
      loss += -(S[l * along + l * across] - m - Math.log(z));
      for (let k = 0; k < B; k++) dS[l * along + k * across] += (Math.exp(S[l * along + k * across] - m) / z - (l === k ? 1 : 0)) / B;
    }
  };
  crossEntropy(B, 1);
  crossEntropy(1, B);
  // Gradients of the unit vectors, then through the normalisation to the word rows.
  const dU = new Float32Array(B * DIM), dV = new Float32Array(B * DIM);
  for (let i = 0; i < B; i++)
    for (let j = 0; j < B; j++) {
      const g = dS[i * B + j] / TAU;
      if (g === 0) continue;
      for (let d = 0; d < DIM; d++) {
        dU[i * DIM + d] += g * V[j * DIM + d];
        dV[j * DIM + d] += g * U[i * DIM + d];
      }
    }
  const grad = new Map();
  const back = (X, dX, norms, side) => {
    for (let i = 0; i < B; i++) {
      let dot = 0;
      for (let d = 0; d < DIM; d++) dot += X[i * DIM + d] * dX[i * DIM + d];
      const gi = new Float32Array(DIM);
      for (let d = 0; d < DIM; d++) gi[d] = (dX[i * DIM + d] - X[i * DIM + d] * dot) / norms[i];
      for (const t of batch[i][side]) {
        let acc = grad.get(t);
        if (!acc) grad.set(t, (acc = new Float32Array(DIM)));
        const w = weight[t];
        for (let d = 0; d < DIM; d++) acc[d] += w * gi[d];
      }
    }
  };
  back(U, dU, nu, 0);
  back(V, dV, nv, 1);
  for (const [t, g] of grad) {
    const b = t * DIM;
    for (let d = 0; d < DIM; d++) {
      G[b + d] += g[d] * g[d];
      E[b + d] -= (LR * g[d]) / Math.sqrt(G[b + d]);
    }
  }
  return loss / (2 * B);
}

// 4. Evaluation on the tuning questions: rank nodes of each benchmark corpus by vector alone.
const specs = ["questions.json", "dev.json"].map((f) => JSON.parse(fs.readFileSync(path.join(root, "test/bench/retrieval", f), "utf8")));
const evalCorpora = [];
for (const name of Object.keys(specs[0].corpora)) {
  const db = path.join(root, ".bench-cache/work", name, "codegraph-out/codemem_db/index.db");
  if (!fs.existsSync(db)) {
    log(`no index for ${name} (run npm run bench:retrieval once); skipping its evaluation`);
    continue;
  }
  const d = new Database(db, { readonly: true });
  const rows = d.prepare("SELECT n.id, n.name, n.type, n.file_path, n.qualified_name, n.signature, n.docstring, t.text, n.parent FROM nodes n JOIN node_text t ON t.rowid = n.rowid").all().map(({ text, ...r }) => ({ ...r, code: JSON.parse(inflateRawSync(text).toString("utf8"))[0] }));
  d.close();
  const kids = new Map();
  for (const r of rows) if (r.parent) (kids.get(r.parent) ?? kids.set(r.parent, []).get(r.parent)).push(r.name);
  const texts = rows.map((r) => embeddingText(r, kids.get(r.id) ?? []));
  const questions = specs.flatMap((s) => s.questions.filter((q) => q.corpus === name));
  evalCorpora.push({ name, rows, texts, questions });
}
const hash = new HashFeatures(256);
function evaluate() {
  const out = {};
  for (const c of evalCorpora) {
    const enc = (text) => {
      const t = ids(words(text).join(" "));
      const v = new Float32Array(DIM);
      const n = t.length ? encode(t, v, 0) : 1;
      for (let d = 0; d < DIM; d++) v[d] /= n;
      return v;
    };
    const L = c.texts.map(enc), H = c.texts.map((t) => hash.vector(t));
    const score = { hashed: 0, learned: 0, both: 0 };
    for (const q of c.questions) {
      const lq = enc(q.question), hq = hash.vector(q.question);
      for (const mode of Object.keys(score)) {
        const sims = c.rows.map((_, i) => {
          let l = 0, h = 0;
          for (let d = 0; d < DIM; d++) l += lq[d] * L[i][d];
          for (let d = 0; d < hq.length; d++) h += hq[d] * H[i][d];
          return mode === "hashed" ? h : mode === "learned" ? l : 0.5 * h + 0.5 * l;
        });
        const order = sims.map((s, i) => [s, i]).sort((a, b) => b[0] - a[0]);
        const files = [];
        for (const [, i] of order) {
          if (!files.includes(c.rows[i].file_path)) files.push(c.rows[i].file_path);
          if (files.length >= 10) break;
        }
        const r = files.findIndex((f) => q.gold_files.includes(f));
        score[mode] += r >= 0 ? 1 / (r + 1) : 0;
      }
    }
    out[c.name] = Object.fromEntries(Object.entries(score).map(([k, v]) => [k, +(v / c.questions.length).toFixed(3)]));
  }
  return out;
}

log(`training: ${data.length} pairs, dim ${DIM}, batch ${BATCH}, tau ${TAU}, lr ${LR}, ${EPOCHS} epochs`);
const masked = (pair) => {
  if (MASK <= 0) return pair;
  const inQuery = new Set(pair[0]);
  const code = pair[1].filter((t) => !inQuery.has(t) || rand() >= MASK);
  return [pair[0], code.length ? Int32Array.from(code) : pair[1]];
};
const shuffle = (xs) => {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
};
const byPackage = new Map();
for (const d of data) (byPackage.get(d[2]) ?? byPackage.set(d[2], []).get(d[2])).push(d);
for (let epoch = 1; epoch <= EPOCHS; epoch++) {
  // Batches: most mix every package; a GROUPED share holds pairs of one package only.
  const batches = [];
  const mixed = [];
  for (const list of byPackage.values()) {
    shuffle(list);
    let i = 0;
    for (; i + BATCH <= list.length && rand() < GROUPED; i += BATCH) batches.push(list.slice(i, i + BATCH));
    mixed.push(...list.slice(i));
  }
  shuffle(mixed);
  for (let i = 0; i + BATCH <= mixed.length; i += BATCH) batches.push(mixed.slice(i, i + BATCH));
  shuffle(batches);
  const t0 = performance.now();
  let loss = 0;
  for (const b of batches) loss += step(b.map(masked));
  log(`epoch ${epoch}: loss ${(loss / batches.length).toFixed(4)} over ${batches.length} batches in ${((performance.now() - t0) / 1000).toFixed(0)} s; vector-only file MRR ${JSON.stringify(evaluate())}`);
}

writeWordVectors(OUT, vocab, weight, E, DIM);
log(`wrote ${OUT} (${(fs.statSync(OUT).size / 1e6).toFixed(1)} MB)`);
