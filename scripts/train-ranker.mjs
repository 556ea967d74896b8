#!/usr/bin/env node
// Trains the learned ranker (daemon/retrieve/ranker-model.json) on questions mined from projects held
// apart from every benchmark: the first sentence of a documented definition (its docstring then
// blanked in the indexed copy, so the question is not found by its own words) with the definition's
// file as gold, and the subject of a fix commit with the source files it changed as gold. Each
// project is indexed as codemem indexes it, every question asked through Retriever.candidates, and
// each candidate's featureVector (daemon/retrieve/features.ts, what serving reads) labelled by
// whether its file is gold.
//
//   npm run train:ranker            (mine, index, train, write the model)
//   node scripts/train-ranker.mjs --no-write   (report only)
//
// Model selection is by cross-validation over the training projects (4 folds, whole projects per
// fold): the family (pointwise or pairwise logistic), L2 strength and whether the hand score is a
// feature. No benchmark set is read. Deterministic: a fixed seed picks the questions; training is
// full-batch gradient descent from zero.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = (p) => path.join(root, "dist", p);
const { ProjectEngine } = await import(dist("daemon/engine.js"));
const { resolveConfig } = await import(dist("shared/config.js"));
const { discover, inspectContent } = await import(dist("daemon/index/walk.js"));
const { Extractor } = await import(dist("daemon/index/extract.js"));
const { resolveGraph } = await import(dist("daemon/index/resolve.js"));
const { contentWords } = await import(dist("daemon/index/text.js"));
const { isTestPath } = await import(dist("daemon/index/test-code.js"));
const { seededRandom } = await import(dist("shared/random.js"));
const { FEATURES, featureVector } = await import(dist("daemon/retrieve/features.js"));
const { RANKER_FORMAT } = await import(dist("daemon/retrieve/ranker.js"));

/** The training projects: none is a corpus of a benchmark set (test/bench/**). */
const PROJECTS = {
  "encode+httpx": "python",
  "sirupsen+logrus": "go",
  "spf13+viper": "go",
  "axios+axios": "javascript",
  "rust-lang+regex": "rust",
  "apache+commons-lang": "java",
  "DaveGamble+cJSON": "c",
  "google+googletest": "cpp",
  "ruby+rake": "ruby",
  "symfony+console": "php",
  "serilog+serilog": "csharp",
  "square+moshi": "kotlin",
  "SwiftyJSON+SwiftyJSON": "swift",
  "scala+scala-parser-combinators": "scala",
  "leafo+lapis": "lua",
  "pyenv+pyenv": "bash",
};
const MIRRORS = "/work/.mirror";
const SEED = 39;
const DOC_QUESTIONS = 50;
const FIX_QUESTIONS = 50;
/** Candidates kept per question: the hand ranking's best (every gold one besides). */
const KEEP = 150;
const FOLDS = 4;
/** Full-batch steps of Adam (step 0.05): the loss has flattened by then on these data. */
const ITERATIONS = 200;

const args = process.argv.slice(2);
const cache = path.join(root, ".bench-cache/ranker");
const log = (msg, extra = {}) => console.error(JSON.stringify({ level: "info", msg, ...extra }));
fs.mkdirSync(path.join(cache, "data"), { recursive: true });

function gitDir(name) {
  const d = path.join(MIRRORS, name, "repo");
  return fs.existsSync(path.join(d, ".git")) ? path.join(d, ".git") : d;
}
const git = (name, ...a) => execFileSync("git", ["--git-dir", gitDir(name), ...a], { encoding: "utf8", maxBuffer: 1 << 28 });

/** A word count that makes a question: enough content words to be more than a name. */
const enoughWords = (s, n) => contentWords(s).length >= n;

function shuffle(xs, rand) {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** The first sentence of a docstring's first paragraph. */
function firstSentence(doc) {
  const para = doc.split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
  return (para.match(/^.*?[.!?](?=\s|$)/)?.[0] ?? para).trim();
}

/**
 * Removes a node's docstring text from its file's lines (comment markers stay); false when a line
 * of it was not found near the node, the lines then unchanged.
 */
function blankDoc(lines, node) {
  const doc = node.docstring.split("\n").map((l) => l.trim()).filter((l) => l.length >= 2);
  if (!doc.length) return false;
  const from = Math.max(0, node.line_start - 1 - doc.length - 40);
  const to = Math.min(lines.length, node.line_end);
  const edits = [];
  let at = from;
  for (const d of doc) {
    let i = at;
    while (i < to && !lines[i].includes(d)) i++;
    if (i >= to) return false;
    edits.push([i, d]);
    at = i;
  }
  for (const [i, d] of edits) lines[i] = lines[i].replace(d, "");
  return true;
}

/** Documented definitions: their first sentence asked, their docstring blanked in `dir`. */
async function docQuestions(dir, rand) {
  const cfg = resolveConfig(dir);
  const extractor = new Extractor();
  const extracts = [];
  for (const c of discover(cfg).files) {
    if (isTestPath(c.path)) continue;
    const buf = fs.readFileSync(c.abs);
    if (inspectContent(c.path, buf)) continue;
    try {
      extracts.push(await extractor.extract(c.path, buf.toString("utf8"), c.language));
    } catch {
      // unparsable file: not asked about
    }
  }
  const nodes = resolveGraph(extracts).nodes.filter((n) => n.type !== "module" && n.docstring.trim());
  const picked = [];
  const seen = new Set();
  for (const n of shuffle(nodes, rand)) {
    if (picked.length >= DOC_QUESTIONS) break;
    const q = firstSentence(n.docstring);
    if (q.length < 20 || !enoughWords(q, 4) || /^(copyright|license|todo|deprecated|author|see |@)/i.test(q) || seen.has(q)) continue;
    const file = path.join(dir, n.file_path);
    const lines = fs.readFileSync(file, "utf8").split("\n");
    if (!blankDoc(lines, n)) continue;
    fs.writeFileSync(file, lines.join("\n"));
    seen.add(q);
    picked.push({ kind: "doc", question: q, gold: [n.file_path], node: n.qualified_name });
  }
  return picked;
}

/** Subjects of fix commits with the source files they changed (that still exist) as gold. */
function fixQuestions(name, indexed) {
  const out = [];
  const logText = git(name, "log", "--no-merges", "-n", "4000", "--format=%x01%s", "--name-only", "HEAD");
  for (const entry of logText.split("\x01").slice(1)) {
    if (out.length >= FIX_QUESTIONS) break;
    const [subject, ...rest] = entry.split("\n");
    if (!/\b(fix(e[sd]|ing)?|bug|crash(es)?|error|wrong|incorrect|broken|regression|fail(s|ure)?)\b/i.test(subject)) continue;
    const q = subject.replace(/\(#\d+\)|#\d+|https?:\/\/\S+/g, " ").replace(/^\s*(\[[^\]]*\]\s*)+/, "").replace(/^\w+(\([^)]*\))?!?:\s*/, "").trim();
    if (!enoughWords(q, 3)) continue;
    const changed = rest.map((l) => l.trim()).filter(Boolean);
    const gold = changed.filter((f) => indexed.has(f) && !isTestPath(f));
    // A sweep over many files is no question about a place in the code.
    if (gold.length < 1 || gold.length > 3 || changed.length > 8) continue;
    out.push({ kind: "fix", question: q, gold });
  }
  return out;
}

/**
 * The build that indexes the projects and makes each question's candidates and features (dist/daemon
 * and dist/shared): data cached by another build (a feature computed anew under the same name, a rule
 * or an extractor changed) is made again, not reused.
 */
const CODE = (() => {
  const h = createHash("sha256");
  for (const top of ["daemon", "shared"]) {
    for (const f of fs.readdirSync(dist(top), { recursive: true }).map(String).filter((f) => f.endsWith(".js")).sort()) h.update(f).update(fs.readFileSync(dist(path.join(top, f))));
  }
  return h.digest("hex").slice(0, 12);
})();

/** One project's questions and labelled candidates, cached by its commit, the feature list and CODE. */
async function projectData(name) {
  const head = git(name, "rev-parse", "HEAD").trim();
  const key = `${head}:${FEATURES.join(",")}:${DOC_QUESTIONS}:${FIX_QUESTIONS}:${KEEP}:${SEED}:${CODE}`;
  const out = path.join(cache, "data", `${name}.json`);
  if (fs.existsSync(out)) {
    const d = JSON.parse(fs.readFileSync(out, "utf8"));
    if (d.key === key) return d;
  }
  const t0 = performance.now();
  const dir = path.join(cache, "src", name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("bash", ["-c", `git --git-dir "$0" archive HEAD | tar -x -C "$1"`, gitDir(name), dir]);
  const rand = seededRandom(SEED);
  const docs = await docQuestions(dir, rand);
  const engine = await ProjectEngine.open(dir, { sideEffects: false });
  try {
    const built = await engine.build({ project_path: dir, force: true });
    const r = await engine.retriever();
    const e = await engine.embedder();
    const questions = [...docs, ...fixQuestions(name, new Set(r.files.keys()))];
    const rows = [];
    for (const q of questions) {
      const gold = new Set(q.gold);
      const cands = (await r.candidates(q.question, e)).sort((a, b) => b.hit.score - a.hit.score || (a.hit.node.id < b.hit.node.id ? -1 : 1));
      const kept = cands.filter((c, i) => i < KEEP || gold.has(c.hit.node.file_path));
      rows.push({
        kind: q.kind,
        question: q.question,
        gold: q.gold,
        cands: kept.map((c) => ({ file: c.hit.node.file_path, y: gold.has(c.hit.node.file_path) ? 1 : 0, hand: +c.hit.score.toFixed(6), x: featureVector(c.signals).map((v) => +v.toFixed(5)) })),
      });
    }
    const d = { key, name, language: PROJECTS[name], head, nodes: built.node_count, files: built.files_indexed, questions: rows };
    fs.writeFileSync(out, JSON.stringify(d));
    log("project", { name, nodes: built.node_count, doc: docs.length, fix: rows.length - docs.length, s: Math.round((performance.now() - t0) / 1000) });
    return d;
  } finally {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---- training ---------------------------------------------------------------------------------

const FILE_REPEAT = 0.7;
/** Reciprocal rank of the first gold file in the top 10, ordered as search shows them (retriever.ts diversify). */
function reciprocalRank(cands, score) {
  const pool = cands.map((c, i) => ({ c, s: score(c, i) })).sort((a, b) => b.s - a.s).slice(0, 40);
  const shown = new Map();
  for (let rank = 0; rank < 10 && pool.length; rank++) {
    let best = 0;
    let bestScore = -Infinity;
    pool.forEach((p, i) => {
      const s = p.s * FILE_REPEAT ** (shown.get(p.c.file) ?? 0);
      if (s > bestScore) [best, bestScore] = [i, s];
    });
    const [p] = pool.splice(best, 1);
    if (p.c.y) return 1 / (rank + 1);
    shown.set(p.c.file, (shown.get(p.c.file) ?? 0) + 1);
  }
  return 0;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function standardiser(questions, use) {
  const rows = questions.flatMap((q) => q.cands.map((c) => c.x));
  const mu = use.map((j) => mean(rows.map((x) => x[j])));
  const sd = use.map((j, k) => Math.sqrt(mean(rows.map((x) => (x[j] - mu[k]) ** 2))) || 1);
  return { mu, sd, z: (x) => use.map((j, k) => (x[j] - mu[k]) / sd[k]) };
}

/**
 * Full-batch gradient descent (Adam) on the logistic loss: pointwise over candidates (each question
 * weighing as one), or pairwise (gold against others, see below).
 */
function fit(questions, { family, l2, use }) {
  const st = standardiser(questions, use);
  const qs = questions.filter((q) => q.cands.some((c) => c.y)).map((q) => q.cands.map((c) => ({ z: st.z(c.x), y: c.y })));
  const d = use.length;
  const w = new Float64Array(d + 1);
  const m = new Float64Array(d + 1);
  const v = new Float64Array(d + 1);
  const examples = [];
  for (const cs of qs) {
    if (family === "pointwise") for (const c of cs) examples.push({ z: c.z, y: c.y, weight: 1 / cs.length });
    else {
      // The hand ranking's 5 best gold candidates against its 30 best others.
      const pos = cs.filter((c) => c.y).slice(0, 5);
      const neg = cs.filter((c) => !c.y).slice(0, 30);
      for (const p of pos) for (const n of neg) examples.push({ z: p.z.map((x, k) => x - n.z[k]), y: 1, weight: 1 / (pos.length * neg.length) });
    }
  }
  // Flat arrays: the passes over ~2·10^5 examples stay seconds.
  const n = examples.length;
  const Z = new Float64Array(n * d);
  const Y = new Float64Array(n);
  const W = new Float64Array(n);
  examples.forEach((e, i) => {
    Z.set(e.z, i * d);
    Y[i] = e.y;
    W[i] = e.weight;
  });
  const total = W.reduce((s, x) => s + x, 0);
  const pointwise = family === "pointwise" ? 1 : 0;
  for (let t = 1; t <= ITERATIONS; t++) {
    const g = new Float64Array(d + 1);
    for (let i = 0; i < n; i++) {
      const o = i * d;
      let s = pointwise * w[d];
      for (let k = 0; k < d; k++) s += w[k] * Z[o + k];
      const err = (1 / (1 + Math.exp(-s)) - Y[i]) * W[i];
      for (let k = 0; k < d; k++) g[k] += err * Z[o + k];
      g[d] += pointwise * err;
    }
    for (let k = 0; k <= d; k++) {
      const gk = g[k] / total + (k < d ? l2 * w[k] : 0);
      m[k] = 0.9 * m[k] + 0.1 * gk;
      v[k] = 0.999 * v[k] + 0.001 * gk * gk;
      w[k] -= (0.05 * (m[k] / (1 - 0.9 ** t))) / (Math.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  return {
    weights: Array.from(w.slice(0, d)),
    bias: w[d],
    mean: st.mu,
    scale: st.sd,
    score: (x) => {
      let s = w[d];
      for (let k = 0; k < d; k++) s += (w[k] * (x[use[k]] - st.mu[k])) / st.sd[k];
      return s;
    },
  };
}

const data = [];
for (const name of Object.keys(PROJECTS)) {
  try {
    data.push(await projectData(name));
  } catch (err) {
    log("project skipped", { name, error: err.message });
  }
}

const all = FEATURES.map((_, j) => j);
const noHand = all.filter((j) => FEATURES[j] !== "hand");
const configs = [];
// A few families and strengths, not a search: pairwise at two L2 strengths, pointwise at two.
for (const [family, l2s] of [["pairwise", [0.01, 0.1]], ["pointwise", [0.1, 1]]]) for (const l2 of l2s) for (const [feats, use] of [["all", all], ["no-hand", noHand]]) configs.push({ family, l2, feats, use });

// Folds of whole projects, so a project's questions never validate a model trained on its others.
const names = data.map((d) => d.name).sort();
const foldOf = new Map(names.map((n, i) => [n, i % FOLDS]));
const byKind = (qs) => ({ all: mean(qs.map((q) => q.rr)), doc: mean(qs.filter((q) => q.kind === "doc").map((q) => q.rr)), fix: mean(qs.filter((q) => q.kind === "fix").map((q) => q.rr)) });
const f3 = (x) => +x.toFixed(3);

const handRR = data.flatMap((d) => d.questions.map((q) => ({ kind: q.kind, rr: reciprocalRank(q.cands, (c) => c.hand) })));
log("hand rules", { mrr: f3(byKind(handRR).all), doc: f3(byKind(handRR).doc), fix: f3(byKind(handRR).fix) });
const results = [];
for (const cfg of configs) {
  const rr = [];
  for (let f = 0; f < FOLDS; f++) {
    const train = data.filter((d) => foldOf.get(d.name) !== f).flatMap((d) => d.questions);
    const model = fit(train, cfg);
    for (const d of data.filter((x) => foldOf.get(x.name) === f)) for (const q of d.questions) rr.push({ kind: q.kind, rr: reciprocalRank(q.cands, (c) => model.score(c.x)) });
  }
  const m = byKind(rr);
  results.push({ cfg, m });
  log("cross-validated", { family: cfg.family, l2: cfg.l2, features: cfg.feats, mrr: f3(m.all), doc: f3(m.doc), fix: f3(m.fix) });
}
results.sort((a, b) => b.m.all - a.m.all);
const chosen = results[0];
const hand = byKind(handRR);

const sizes = {};
for (const d of data) {
  const s = (sizes[d.language] ??= { projects: [], doc: 0, fix: 0, candidates: 0 });
  s.projects.push(d.name);
  s.doc += d.questions.filter((q) => q.kind === "doc").length;
  s.fix += d.questions.filter((q) => q.kind === "fix").length;
  s.candidates += d.questions.reduce((n, q) => n + q.cands.length, 0);
}
console.log("training data (questions per language: docstring / fix commit, candidates):");
for (const [lang, s] of Object.entries(sizes)) console.log(`  ${lang.padEnd(11)} ${String(s.doc).padStart(3)} doc ${String(s.fix).padStart(3)} fix ${String(s.candidates).padStart(6)} candidates  (${s.projects.join(", ")})`);
console.log(`cross-validated MRR (${FOLDS} folds of whole projects), hand rules: ${f3(hand.all)} (doc ${f3(hand.doc)}, fix ${f3(hand.fix)})`);
for (const r of results) console.log(`  ${r.cfg.family.padEnd(9)} l2 ${String(r.cfg.l2).padEnd(5)} ${r.cfg.feats.padEnd(7)} MRR ${f3(r.m.all)} (doc ${f3(r.m.doc)}, fix ${f3(r.m.fix)})${r === chosen ? "  <- chosen" : ""}`);

const final = fit(data.flatMap((d) => d.questions), chosen.cfg);
const model = {
  format: RANKER_FORMAT,
  family: chosen.cfg.family === "pointwise" ? "logistic" : "pairwise-logistic",
  features: chosen.cfg.use.map((j) => FEATURES[j]),
  mean: final.mean.map((x) => +x.toFixed(6)),
  scale: final.scale.map((x) => +x.toFixed(6)),
  weights: final.weights.map((x) => +x.toFixed(6)),
  bias: +final.bias.toFixed(6),
  trained: {
    command: "npm run train:ranker",
    seed: SEED,
    l2: chosen.cfg.l2,
    projects: Object.fromEntries(data.map((d) => [d.name, d.head])),
    questions: { doc: handRR.filter((q) => q.kind === "doc").length, fix: handRR.filter((q) => q.kind === "fix").length },
    cross_validated_mrr: { model: f3(chosen.m.all), hand: f3(hand.all) },
  },
};
console.log("weights (standardised):", Object.fromEntries(model.features.map((f, k) => [f, +model.weights[k].toFixed(3)])));
if (!args.includes("--no-write")) {
  const file = path.join(root, "daemon/retrieve/ranker-model.json");
  fs.writeFileSync(file, JSON.stringify(model, null, 1) + "\n");
  console.log(`wrote ${path.relative(root, file)}`);
}
