#!/usr/bin/env node
// Report-style questions (issue 18, part 2): a long question pasted whole, the way an assistant passes
// a bug report on. test/bench/reports/questions.json holds commit-message reports (the message of a
// fix commit; not issue-tracker reports, which cannot be reached from here), the non-test source
// files the fix modified as gold, and the parent commit whose tree is the corpus
// (scripts/make-report-questions.mjs built it). For each question the tree at the parent is
// extracted from the project's git directory (git archive) into .bench-cache/reports/<id>/ and
// indexed; then one `search` call ranks files. Reported: the gold file first among the distinct
// files, and within the first 5, per project and overall, with search latency.
//
//   node scripts/bench-reports.mjs [--json] [--only ID,...] [--questions FILE]
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

const args = process.argv.slice(2);
const opt = (n) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : undefined; };
const file = path.resolve(opt("--questions") ?? path.join(root, "test/bench/reports/questions.json"));
const only = opt("--only")?.split(",");
const spec = JSON.parse(fs.readFileSync(file, "utf8"));
const questions = spec.questions.filter((q) => !only || only.includes(q.id));
const mirrors = process.env.CODEMEM_REPORT_REPOS;
const gitDir = (project) => (mirrors ? path.join(mirrors, project.replace("/", "+"), "repo") : spec.projects[project].git);

const shape = ops.search.input.shape;
const grouped = "group_by" in shape;
const maxLength = shape.query.maxLength ?? shape.query._zod?.bag?.maximum ?? Infinity;

/** The tree at the fix's parent, extracted once. */
function corpus(q) {
  const dir = path.join(root, ".bench-cache/reports", q.id);
  if (!fs.existsSync(path.join(dir, ".corpus-source"))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    execFileSync("bash", ["-c", 'git --git-dir "$0" archive "$1" | tar -x -C "$2"', gitDir(q.project), q.parent, dir]);
    fs.writeFileSync(path.join(dir, ".corpus-source"), `${q.project} ${q.parent}\n`);
  }
  return dir;
}

async function rankFiles(engine, dir, text) {
  if (grouped) return (await engine.search({ project_path: dir, query: text, limit: 10, group_by: "file" })).results.map((r) => r.file_path);
  const files = [];
  for (const r of (await engine.search({ project_path: dir, query: text, limit: 100 })).results) if (!files.includes(r.file_path)) files.push(r.file_path);
  return files;
}

const rows = [];
for (const q of questions) {
  const dir = corpus(q);
  const engine = await ProjectEngine.open(dir, { sideEffects: false });
  await engine.build({ project_path: dir });
  const row = { id: q.id, project: q.project, chars: q.question.length, gold: q.gold };
  try {
    await rankFiles(engine, dir, q.question.slice(0, Math.min(200, maxLength))); // warm
    const t = performance.now();
    row.files = await rankFiles(engine, dir, q.question);
    row.ms = performance.now() - t;
  } catch (err) {
    if (err.code !== "INVALID_ARGUMENT") throw err;
    row.refused = true;
    row.files = [];
    row.cut = await rankFiles(engine, dir, q.question.slice(0, maxLength));
  }
  await engine.close();
  const rank = (files) => files.findIndex((f) => q.gold.includes(f)) + 1;
  row.rank = rank(row.files);
  if (row.cut) row.cut_rank = rank(row.cut);
  rows.push(row);
  if (!args.includes("--json")) console.log(`${String(row.rank || "-").padStart(3)} ${row.refused ? `refused (cut: ${row.cut_rank || "-"})` : `${row.ms.toFixed(0)} ms`}  ${q.id}  ${q.gold.join(", ")}  <- ${(row.files ?? []).slice(0, 3).join(", ")}`);
}

const summarise = (rs) => ({
  questions: rs.length,
  first: rs.filter((r) => r.rank === 1).length / rs.length,
  top5: rs.filter((r) => r.rank >= 1 && r.rank <= 5).length / rs.length,
  refused: rs.filter((r) => r.refused).length,
  search_p50_ms: rs.filter((r) => r.ms !== undefined).map((r) => r.ms).sort((a, b) => a - b)[Math.floor(rs.filter((r) => r.ms !== undefined).length / 2)] ?? null,
});
const report = { grouped, max_length: maxLength, overall: summarise(rows), projects: {} };
for (const p of [...new Set(rows.map((r) => r.project))]) report.projects[p] = summarise(rows.filter((r) => r.project === p));
if (args.includes("--json")) console.log(JSON.stringify({ ...report, rows }, null, 1));
else {
  const pc = (x) => `${(100 * x).toFixed(1)} %`;
  for (const [p, s] of [...Object.entries(report.projects), ["overall", report.overall]]) {
    console.log(`${p.padEnd(18)} ${String(s.questions).padStart(3)} questions: gold first ${pc(s.first)}, in first 5 files ${pc(s.top5)}${s.refused ? `, ${s.refused} refused for length` : ""}, search p50 ${s.search_p50_ms?.toFixed(0)} ms`);
  }
}
