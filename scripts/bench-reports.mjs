#!/usr/bin/env node
// Report-style questions (issue 18, part 2; every language, issue 39): a long question pasted whole, the
// way an assistant passes a bug report on. The question files hold commit-message reports (the message
// of a fix commit; not issue-tracker reports, which cannot be reached from here), the non-test source
// files the fix modified as gold, the parent commit whose tree is the corpus and (questions-lang.json)
// the gold files' language; scripts/make-report-questions.mjs built them. The tree at each parent is
// extracted from the project's git directory (git archive) into .bench-cache/reports/<owner+name>@<parent>/
// and indexed there once: the index stays beside it, so every question of that tree, and every later run,
// reuses it. Then one `search` per question ranks files.
//
// Reported per language, per project and overall: the gold file first among the distinct files, a gold
// file within the first 5, every gold file within the first 5, MRR over the first 10 files, the answer's
// o200k tokens (the JSON the MCP server sends) and search latency.
//
//   node scripts/bench-reports.mjs [--json] [--lang go,rust] [--project gin-gonic/gin] [--only ID,...]
//                                  [--questions FILE]   (default test/bench/reports/questions-lang.json)
//                                  [--out FILE]         (the --json report written there as well, after each tree)
//                                  [--per-project N]    (the first N trees of each project: its newest fixes)
//
// A search that groups by file (`group_by: "file"`) is used where the operation offers it; otherwise
// (an older codemem) the distinct files of the first 100 symbol results, in order. An older codemem
// that refuses a question for its length is counted as a miss, and measured again on the question cut
// to the length it accepts (reported beside, as `cut`).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { ProjectEngine } = await import(path.join(root, "dist/daemon/engine.js"));
const ops = await import(path.join(root, "dist/shared/operations.js"));
const { countTokens } = await import(path.join(root, "dist/shared/tokens.js"));

const args = process.argv.slice(2);
const opt = (n) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : undefined; };
const list = (n) => opt(n)?.split(",");
const file = path.resolve(opt("--questions") ?? path.join(root, "test/bench/reports/questions-lang.json"));
const [only, langs, projectsWanted] = [list("--only"), list("--lang"), list("--project")];
const spec = JSON.parse(fs.readFileSync(file, "utf8"));
const questions = spec.questions.filter((q) => (!only || only.includes(q.id)) && (!langs || langs.includes(q.language)) && (!projectsWanted || projectsWanted.includes(q.project)));
const mirrors = process.env.CODEMEM_REPORT_REPOS;
function gitDir(project) {
  if (!mirrors) return spec.projects[project].git;
  const dir = path.join(mirrors, project.replace("/", "+"), "repo");
  return fs.existsSync(path.join(dir, ".git")) ? path.join(dir, ".git") : dir;
}

const shape = ops.search.input.shape;
const grouped = "group_by" in shape;
const maxLength = shape.query.maxLength ?? shape.query._zod?.bag?.maximum ?? Infinity;
const TOP = 10;

/**
 * The tree at a fix's parent, extracted once for every question on it; undefined when the mirror
 * cannot give all of it (a snapshot may leave its largest blobs out): a partial tree is no corpus.
 */
function corpus(project, parent) {
  const dir = path.join(root, ".bench-cache/reports", `${project.replace("/", "+")}@${parent.slice(0, 12)}`);
  if (!fs.existsSync(path.join(dir, ".corpus-source"))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    try {
      execFileSync("bash", ["-c", 'set -o pipefail; git --git-dir "$0" archive "$1" | tar -x -C "$2"', gitDir(project), parent, dir], { stdio: ["ignore", "ignore", "pipe"] });
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      console.error(`${project} at ${parent.slice(0, 12)}: the mirror cannot give its tree (${String(err.stderr).split("\n")[0]}); its questions are left out and counted as unavailable`);
      return undefined;
    }
    fs.writeFileSync(path.join(dir, ".corpus-source"), `${project} ${parent}\n`);
  }
  return dir;
}

/** The ranked distinct files of one search, and the answer's size in tokens. */
async function rankFiles(engine, dir, text) {
  if (grouped) {
    const res = await engine.search({ project_path: dir, query: text, limit: TOP, group_by: "file" });
    return { files: res.results.map((r) => r.file_path), tokens: countTokens(JSON.stringify(res)) };
  }
  const res = await engine.search({ project_path: dir, query: text, limit: 100 });
  const files = [];
  for (const r of res.results) if (!files.includes(r.file_path)) files.push(r.file_path);
  return { files: files.slice(0, TOP), tokens: countTokens(JSON.stringify(res)) };
}

// Trees in turns over the projects (the first tree of each, then the second...), so a run cut short
// (--per-project, or a signal: the figures so far are printed) still speaks of every project.
const byTree = new Map();
for (const q of questions) {
  const key = `${q.project} ${q.parent}`;
  if (!byTree.has(key)) byTree.set(key, []);
  byTree.get(key).push(q);
}
const perProject = Number(opt("--per-project") ?? Infinity);
const treesOf = new Map();
for (const qs of byTree.values()) {
  if (!treesOf.has(qs[0].project)) treesOf.set(qs[0].project, []);
  if (treesOf.get(qs[0].project).length < perProject) treesOf.get(qs[0].project).push(qs);
}
const trees = [];
for (let i = 0; trees.length < [...treesOf.values()].reduce((n, t) => n + t.length, 0); i++) for (const t of treesOf.values()) if (t[i]) trees.push(t[i]);

const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : null);
const summarise = (rs) => ({
  questions: rs.length,
  first: rs.filter((r) => r.rank === 1).length / rs.length,
  top5: rs.filter((r) => r.rank >= 1 && r.rank <= 5).length / rs.length,
  all_top5: rs.filter((r) => r.all_top5).length / rs.length,
  mrr: rs.reduce((s, r) => s + (r.rank ? 1 / r.rank : 0), 0) / rs.length,
  answer_tokens_p50: median(rs.filter((r) => r.tokens !== undefined).map((r) => r.tokens)),
  refused: rs.filter((r) => r.refused).length,
  search_p50_ms: median(rs.filter((r) => r.ms !== undefined).map((r) => r.ms)),
});
const groups = (key) => Object.fromEntries([...new Set(rows.map((r) => r[key]))].sort().map((k) => [k, summarise(rows.filter((r) => r[key] === k))]));
function reportSoFar() {
  return { questions_file: path.relative(root, file), grouped, max_length: maxLength, trees: treesDone, unavailable, run_s: Math.round((performance.now() - started) / 1000), overall: summarise(rows), languages: groups("language"), projects: groups("project") };
}
function writeReport(out) {
  fs.writeFileSync(out, JSON.stringify({ ...reportSoFar(), rows }, null, 1) + "\n");
}
function printReport() {
  const report = reportSoFar();
  if (args.includes("--json")) return console.log(JSON.stringify({ ...report, rows }, null, 1));
  const pc = (x) => `${(100 * x).toFixed(0).padStart(3)} %`;
  const line = (name, s) => console.log(`${name.padEnd(22)} ${String(s.questions).padStart(3)} q  first ${pc(s.first)}  top5 ${pc(s.top5)}  all-gold-top5 ${pc(s.all_top5)}  MRR ${s.mrr.toFixed(2)}  answer ${s.answer_tokens_p50 ?? "-"} tok  search p50 ${s.search_p50_ms?.toFixed(0)} ms${s.refused ? `  ${s.refused} refused for length` : ""}`);
  console.log("\nper project");
  for (const [p, s] of Object.entries(report.projects)) line(p, s);
  console.log("\nper language");
  for (const [l, s] of Object.entries(report.languages)) line(l, s);
  line("overall", report.overall);
  console.log(`${rows.length} questions on ${treesDone} trees in ${report.run_s} s${unavailable.length ? `; ${unavailable.length} unavailable (tree not in the mirror): ${unavailable.join(", ")}` : ""}`);
}

const rows = [];
/** Questions whose tree the mirror could not give (not counted in any figure). */
const unavailable = [];
const started = performance.now();
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { printReport(); process.exit(130); });
let treesDone = 0;
for (const qs of trees) {
  const dir = corpus(qs[0].project, qs[0].parent);
  if (!dir) {
    unavailable.push(...qs.map((q) => q.id));
    continue;
  }
  const engine = await ProjectEngine.open(dir, { sideEffects: false });
  const tb = performance.now();
  await engine.build({ project_path: dir });
  const buildMs = performance.now() - tb;
  await rankFiles(engine, dir, qs[0].question.slice(0, Math.min(200, maxLength))); // warm
  for (const q of qs) {
    const row = { id: q.id, project: q.project, language: q.language ?? "unknown", chars: q.question.length, gold: q.gold, build_ms: buildMs };
    try {
      const t = performance.now();
      Object.assign(row, await rankFiles(engine, dir, q.question));
      row.ms = performance.now() - t;
    } catch (err) {
      if (err.code !== "INVALID_ARGUMENT") throw err;
      row.refused = true;
      row.files = [];
      row.cut = (await rankFiles(engine, dir, q.question.slice(0, maxLength))).files;
    }
    const rank = (files) => files.findIndex((f) => q.gold.includes(f)) + 1;
    row.rank = rank(row.files);
    row.all_top5 = q.gold.every((g) => row.files.slice(0, 5).includes(g));
    if (row.cut) row.cut_rank = rank(row.cut);
    rows.push(row);
    if (!args.includes("--json")) console.log(`${String(row.rank || "-").padStart(3)} ${row.refused ? `refused (cut: ${row.cut_rank || "-"})` : `${row.ms.toFixed(0)} ms`}  ${q.language?.padEnd(10) ?? ""} ${q.id}  ${q.gold.join(", ")}  <- ${row.files.slice(0, 3).join(", ")}`);
  }
  await engine.close();
  treesDone++;
  if (opt("--out")) writeReport(opt("--out"));
}

printReport();
