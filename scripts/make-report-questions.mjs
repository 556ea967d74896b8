#!/usr/bin/env node
// Report-style questions (issue 18, part 2) from what is real on this machine: no issue tracker can be
// reached, so each question is the message of a fix commit of a public project (subject and body,
// trailers dropped), as an assistant would paste a bug report; its gold is the source files the fix
// modified (tests, docs and examples left out), and its corpus is the tree at the fix's parent commit.
// These are commit-message reports, not issue-tracker reports: they often describe the fix as well as
// the bug, and some name the file.
//
// Selection is mechanical (no commit picked or dropped by hand), in history order, newest first:
//   a non-merge commit whose body has at least MIN_BODY characters, whose subject or body speaks of
//   a defect (BUGGY), whose subject is not a release, a dependency bump, docs or tests (NOT_A_FIX),
//   that modifies 1 to 3 non-test source files (.py, .js, .ts) which existed at its parent, and whose
//   subject is not a repeat (cherry-picks to another branch).
//
// Usage: node scripts/make-report-questions.mjs [GITDIR...] > test/bench/reports/questions.json
//   GITDIR defaults to the mirrors of psf/requests, pallets/flask, expressjs/express and
//   sindresorhus/got under $CODEMEM_REPORT_REPOS (default /work/.mirror/<owner>+<name>/repo).
import path from "node:path";
import { execFileSync } from "node:child_process";

const MIN_BODY = 250;
const BUGGY = /\b(fix|fixes|fixed|fixing|bug|error|errors|exception|traceback|fail|fails|failed|failing|failure|crash|crashes|hang|hangs|leak|broken|wrong|incorrect|regression|raises?|TypeError|ValueError|AttributeError|KeyError)\b/i;
const NOT_A_FIX = /^(v?\d+\.\d+|bump|release|update project files)|\bdocs?\b|documentation|typo|\btests?\b|\bspec\b/i;
const TEST_OR_DOCS = /(^|\/)(tests?|testsuite|testing_?|__tests__|spec|docs?|examples?|benchmarks?|artwork|scripts)(\/|$)|(^|\/)test_[^/]*$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$|(^|\/)(setup|conftest|noxfile)\.py$/;
const SOURCE = /\.(py|js|mjs|ts)$/;
const TRAILER = /^(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|PR-URL|Reviewed-By|Change-Id):.*$/gim;

const mirrors = process.env.CODEMEM_REPORT_REPOS ?? "/work/.mirror";
const repos = process.argv.slice(2).length ? process.argv.slice(2) : ["psf+requests", "pallets+flask", "expressjs+express", "sindresorhus+got"].map((r) => path.join(mirrors, r, "repo"));
const git = (dir, a) => execFileSync("git", ["--git-dir", dir, ...a], { encoding: "utf8", maxBuffer: 1 << 30 });

const questions = [];
const projects = {};
for (const dir of repos) {
  const project = path.basename(path.dirname(dir)).replace("+", "/");
  projects[project] = { git: dir };
  const seen = new Set();
  const log = git(dir, ["log", "--no-merges", "--format=%H%x00%P%x00%s%x00%b%x01", "HEAD"]);
  for (const rec of log.split("\x01\n")) {
    const [sha, parents, subject, rawBody] = rec.replace(/^\n/, "").split("\x00");
    if (!sha || !parents || parents.includes(" ")) continue;
    const body = (rawBody ?? "").replace(TRAILER, "").trim();
    if (body.length < MIN_BODY || !BUGGY.test(`${subject}\n${body}`) || NOT_A_FIX.test(subject) || seen.has(subject)) continue;
    const changed = git(dir, ["diff-tree", "--no-commit-id", "-r", "--name-status", "--no-renames", sha]).trim().split("\n").map((l) => l.split("\t"));
    const gold = changed.filter(([st, f]) => st === "M" && SOURCE.test(f) && !TEST_OR_DOCS.test(f)).map(([, f]) => f);
    if (gold.length < 1 || gold.length > 3) continue;
    seen.add(subject);
    questions.push({ id: `${project.split("/")[1]}-${sha.slice(0, 10)}`, project, commit: sha, parent: parents, question: `${subject}\n\n${body}`, gold });
  }
}
process.stdout.write(JSON.stringify({ description: "Commit-message reports (not issue-tracker reports): the message of a fix commit as the question, the non-test source files it modified as gold, the tree at its parent as corpus. Built by scripts/make-report-questions.mjs.", projects, questions }, null, 1) + "\n");
