#!/usr/bin/env node
// The second held-out set (test/bench/retrieval/heldout2.json, issue 39): 17 projects in 16 languages,
// each pinned to a commit, asked through bench-retrieval (the same engine calls, scoring and BM25
// yardstick), with figures per language and overall.
//   npm run bench:heldout [-- --json] [--corpus NAME] [--baseline REF] [--rankers hand,learned] [--mirrors DIR] [--set FILE] [--check]
// --check extracts the trees and checks the gold answers, and ranks nothing.
// Each project's pinned tree is extracted offline with `git archive` from its local mirror
// (DIR/<owner>+<name>/repo, default /work/.mirror) into .bench-cache/heldout/<name>; a tree whose
// stamp matches its commit and paths is kept. Every gold file must exist there and every gold symbol
// be defined in one of its question's gold files, else the run stops before anything ranks.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const setFile = path.resolve(opt("--set") ?? path.join(root, "test/bench/retrieval/heldout2.json"));
const mirrors = path.resolve(opt("--mirrors") ?? "/work/.mirror");
const onlyCorpus = opt("--corpus");
const spec = JSON.parse(fs.readFileSync(setFile, "utf8"));
const treesDir = path.join(root, ".bench-cache/heldout");

/** The mirror's git directory: a clone with a work tree keeps it in repo/.git, a bare one is repo. */
function gitDir(mirror) {
  const repo = path.join(mirrors, mirror, "repo");
  return fs.existsSync(path.join(repo, ".git")) ? path.join(repo, ".git") : repo;
}

/** Extracts the corpus's pinned paths at its commit into .bench-cache/heldout/<name>, unless already there. */
function extract(name, c) {
  const dest = path.join(treesDir, name);
  // The stamp sits beside the tree, not in it, so it is never indexed.
  const stampFile = path.join(treesDir, `${name}.stamp`);
  const stamp = JSON.stringify({ commit: c.commit, paths: c.paths });
  if (fs.existsSync(dest) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, "utf8") === stamp) return;
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  const tar = execFileSync("git", ["--git-dir", gitDir(c.mirror), "archive", "--format=tar", c.commit, "--", ...c.paths], { maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", dest], { input: tar });
  fs.writeFileSync(stampFile, stamp);
}

// A definition of `name` in any of the 16 languages, by the line it starts on (a grep-like scan):
// a declaration keyword before it, a method or C function head, a Lua/JS table field holding a
// function, or a shell function.
const KEYWORDS = "def|fun|func|function|fn|class|struct|object|interface|trait|val|var|const|let|type|enum|static|public|private|protected|internal|inline|override|export|async";
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
function definitionPatterns(name) {
  const n = esc(name);
  return [
    new RegExp(`^\\s*.*\\b(${KEYWORDS})\\b.*(?<![\\w$])${n}(?![\\w?!])`, "m"),
    new RegExp(`^\\s*#?${n}\\s*(<[^>\\n]*>)?\\s*\\(`, "m"),
    new RegExp(`^\\s*[\\w.]*\\.?${n}\\s*[=:]\\s*(function|\\(|\\{|\\[)`, "m"),
    new RegExp(`^\\s*(local\\s+)?function\\s+[\\w.:]*\\b${n}\\b`, "m"),
    new RegExp(`^\\s*${n}\\s*\\(\\)\\s*\\{`, "m"),
    new RegExp(`^[\\w:<>&* ]*\\b${n}\\s*$`, "m"),
    new RegExp(`^[A-Za-z][\\w\\s*]*\\b${n}\\s*\\(`, "m"),
  ];
}

function checkGold() {
  const failures = [];
  for (const q of spec.questions) {
    if (onlyCorpus && q.corpus !== onlyCorpus) continue;
    const dir = path.join(treesDir, q.corpus);
    const sources = [];
    for (const f of q.gold_files) {
      const p = path.join(dir, f);
      if (fs.existsSync(p)) sources.push(fs.readFileSync(p, "utf8"));
      else failures.push(`${q.id}: gold file ${f} is not in ${q.corpus}'s tree`);
    }
    for (const s of q.gold_symbols ?? []) {
      const pats = definitionPatterns(s);
      if (!sources.some((src) => pats.some((re) => re.test(src)))) failures.push(`${q.id}: ${s} is not defined in ${q.gold_files.join(", ")}`);
    }
  }
  return failures;
}

for (const [name, c] of Object.entries(spec.corpora)) if (!onlyCorpus || name === onlyCorpus) extract(name, c);
const failures = checkGold();
if (failures.length) {
  console.error(`bench-heldout: ${failures.length} gold answers do not check:\n${failures.join("\n")}`);
  process.exit(1);
}
if (args.includes("--check")) {
  console.log(`bench-heldout: ${spec.questions.length} gold answers check in ${Object.keys(spec.corpora).length} trees under ${path.relative(root, treesDir)}`);
  process.exit(0);
}

// bench-retrieval over the extracted trees, its report as JSON.
const forward = [];
for (const flag of ["--corpus", "--baseline", "--rankers"]) if (opt(flag)) forward.push(flag, opt(flag));
const out = execFileSync(process.execPath, [path.join(root, "scripts/bench-retrieval.mjs"), "--questions", setFile, "--corpora", treesDir, "--json", ...forward], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 28 });
const report = JSON.parse(out);
const setName = path.basename(setFile, ".json");

/** Question-weighted means of the corpora's figures, grouped by a key of the corpus. */
function aggregate(sets, keyOf) {
  const groups = new Map();
  for (const [name, c] of Object.entries(sets[setName].corpora)) {
    const key = keyOf(name);
    const g = groups.get(key) ?? { questions: 0, corpora: [], sums: {} };
    g.questions += c.questions;
    g.corpora.push(name);
    const figures = { recall: c.codemem.recall, mrr: c.codemem.mrr, symbol_mrr: c.codemem.symbol_mrr, tokens: c.codemem.mean_tokens, files: c.codemem.mean_files_cited, bm25_recall: c.bm25_top3.recall, bm25_mrr: c.bm25_top3.mrr };
    for (const [k, v] of Object.entries(c.mrr_by_ranker ?? {})) figures[`mrr_${k}`] = v;
    for (const [k, v] of Object.entries(figures)) g.sums[k] = (g.sums[k] ?? 0) + v * c.questions;
    groups.set(key, g);
  }
  return Object.fromEntries([...groups].map(([k, g]) => [k, { questions: g.questions, corpora: g.corpora, ...Object.fromEntries(Object.entries(g.sums).map(([f, s]) => [f, s / g.questions])) }]));
}
const byLanguage = (sets) => aggregate(sets, (name) => spec.corpora[name].language);
const overall = (sets) => aggregate(sets, () => "overall").overall;
const summary = { set: setName, languages: byLanguage(report.sets), overall: overall(report.sets) };
if (report.baseline) summary.baseline = { ref: report.baseline.ref, languages: byLanguage(report.baseline.sets), overall: overall(report.baseline.sets) };

if (args.includes("--json")) {
  console.log(JSON.stringify({ ...summary, report }, null, 2));
  process.exit(0);
}
const f = (x) => (x === undefined ? "-" : x.toFixed(3));
const line = (label, g) =>
  `  ${label.padEnd(11)} ${String(g.questions).padStart(3)} q  MRR ${f(g.mrr)}  symbol MRR ${f(g.symbol_mrr)}  recall ${f(g.recall)}  tokens ${g.tokens.toFixed(0).padStart(5)}  files ${f(g.files)}  |  BM25 top-3 MRR ${f(g.bm25_mrr)} recall ${f(g.bm25_recall)}`;
for (const [name, c] of Object.entries(report.corpora)) {
  const s = report.sets[setName].corpora[name];
  console.log(`${name.padEnd(22)} ${spec.corpora[name].language.padEnd(10)} ${String(c.files).padStart(4)} files ${String(c.nodes).padStart(6)} nodes  MRR ${f(s.codemem.mrr)} symbol MRR ${f(s.codemem.symbol_mrr)} recall ${f(s.codemem.recall)}  BM25 MRR ${f(s.bm25_top3.mrr)}${s.misses.length ? `  misses: ${s.misses.join(" ")}` : ""}`);
}
console.log(`\n== ${setName} by language (codemem search MRR and query-context recall over gold files; symbol MRR: first result that is a gold symbol in a gold file)`);
for (const [lang, g] of Object.entries(summary.languages).sort(([a], [b]) => a.localeCompare(b))) console.log(line(lang, g));
console.log(line("overall", summary.overall));
const rankers = Object.keys(summary.overall).filter((k) => k.startsWith("mrr_")).map((k) => k.slice(4));
if (rankers.length) {
  console.log(`\n== search MRR by ranker (${rankers.join(" | ")}), the same builds`);
  for (const [lang, g] of [...Object.entries(summary.languages).sort(([a], [b]) => a.localeCompare(b)), ["overall", summary.overall]]) console.log(`  ${lang.padEnd(11)} ${String(g.questions).padStart(3)} q  ${rankers.map((k) => f(g[`mrr_${k}`])).join(" | ")}`);
}
if (summary.baseline) {
  console.log(`\n== the same at ${summary.baseline.ref}`);
  for (const [lang, g] of Object.entries(summary.baseline.languages).sort(([a], [b]) => a.localeCompare(b))) console.log(line(lang, g));
  console.log(line("overall", summary.baseline.overall));
}
