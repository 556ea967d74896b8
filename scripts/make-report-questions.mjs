#!/usr/bin/env node
// Report-style questions (issue 18, part 2; every language, issue 39) from what is real on this machine:
// no issue tracker can be reached, so each question is the message of a fix commit of a public project
// (subject and body, trailers dropped), as an assistant would paste a bug report; its gold is the source
// files the fix modified (tests, docs, examples, benchmarks, vendored code and build scripts left out),
// and its corpus is the tree at the fix's parent commit. These are commit-message reports, not
// issue-tracker reports: they often describe the fix as well as the bug, and some name the file.
//
// Selection is mechanical (no commit picked or dropped by hand; scripts/report-selection.mjs), in
// history order, newest first, at most --cap per project:
//   a non-merge commit whose body has at least MIN_BODY characters, whose subject or body speaks of
//   a defect (BUGGY), whose subject is not a release, a dependency bump, docs or tests (NOT_A_FIX),
//   that modifies 1 to 3 source files (an extension of a language codemem indexes) that are not tests
//   or other non-shipped code by the language's conventions and existed at its parent, and whose
//   subject is not a repeat (cherry-picks to another branch).
// Each question records its language: the language of its gold files (questionLanguage).
//
// test/bench/reports/questions.json (73 questions over requests, flask, express and got, no cap) was
// made by the first version of this script (commit 1b1090e: .py/.js/.ts only); it is kept as
// it was so its figures stay comparable. test/bench/reports/questions-lang.json is this version's output
// over every project below.
//
// Usage: npm run build && node scripts/make-report-questions.mjs [--cap N] [GITDIR...] > test/bench/reports/questions-lang.json
//   GITDIR defaults to the mirrors below under $CODEMEM_REPORT_REPOS (default /work/.mirror/<owner>+<name>/repo,
//   or its .git when the mirror is a checkout).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { headerLanguageOf, isTestOrOther, questionLanguage, reportOf } from "./report-selection.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { languageForPath } = await import(path.join(root, "dist/daemon/index/languages/registry.js"));
const languageOf = (f) => languageForPath(f)?.id;

export const PROJECTS = [
  "psf/requests", "pallets/flask", "expressjs/express", "sindresorhus/got",
  "gin-gonic/gin", "spf13/cobra", "jqlang/jq", "redis/hiredis", "fmtlib/fmt", "jbeder/yaml-cpp", "gabime/spdlog",
  "google/gson", "square/javapoet", "square/okhttp", "JakeWharton/timber", "serde-rs/json", "rust-lang/log",
  "sinatra/sinatra", "lostisland/faraday", "guzzle/guzzle", "slimphp/Slim", "bats-core/bats-core", "nvm-sh/nvm",
  "restsharp/RestSharp", "App-vNext/Polly", "Alamofire/Alamofire", "scopt/scopt", "Olivine-Labs/busted",
  // Added 2026-11-28 for the languages with one question or none (TypeScript, Scala, Elixir, Haskell, Dart, Zig).
  "pmndrs/zustand", "immerjs/immer", "com-lihaoyi/fastparse", "com-lihaoyi/upickle", "elixir-plug/plug", "michalmuskala/jason",
  "haskell/aeson", "haskell/stylish-haskell", "dart-lang/args", "dart-lang/shelf", "Hejsil/zig-clap", "zigtools/zls",
];

const args = process.argv.slice(2);
const capAt = args.indexOf("--cap");
const cap = capAt >= 0 ? Number(args.splice(capAt, 2)[1]) : 15;
const mirrors = process.env.CODEMEM_REPORT_REPOS ?? "/work/.mirror";
const mirrorGitDir = (p) => {
  const dir = path.join(mirrors, p.replace("/", "+"), "repo");
  return fs.existsSync(path.join(dir, ".git")) ? path.join(dir, ".git") : dir;
};
const repos = args.length ? args.map((d) => ({ project: path.basename(path.dirname(d.replace(/\/\.git$/, ""))).replace("+", "/"), dir: d })) : PROJECTS.map((p) => ({ project: p, dir: mirrorGitDir(p) }));
const git = (dir, a) => execFileSync("git", ["--git-dir", dir, ...a], { encoding: "utf8", maxBuffer: 1 << 30 });

const questions = [];
const projects = {};
for (const { project, dir } of repos) {
  projects[project] = { git: dir };
  const seen = new Set();
  let taken = 0;
  const log = git(dir, ["log", "--no-merges", "--format=%H%x00%P%x00%s%x00%b%x01", "HEAD"]);
  for (const rec of log.split("\x01\n")) {
    if (taken >= cap) break;
    const [sha, parents, subject, rawBody] = rec.replace(/^\n/, "").split("\x00");
    if (!sha || !parents || parents.includes(" ") || seen.has(subject)) continue;
    const question = reportOf(subject, rawBody);
    if (!question) continue;
    const changed = git(dir, ["diff-tree", "--no-commit-id", "-r", "--name-status", "--no-renames", sha]).trim().split("\n").map((l) => l.split("\t"));
    const gold = changed.filter(([st, f]) => st === "M" && languageOf(f) && !isTestOrOther(f)).map(([, f]) => f);
    if (gold.length < 1 || gold.length > 3) continue;
    seen.add(subject);
    taken++;
    const language = questionLanguage(gold, languageOf, () => headerLanguageOf(git(dir, ["ls-tree", "-r", "--name-only", parents]).split("\n"), languageOf));
    questions.push({ id: `${project.split("/")[1]}-${sha.slice(0, 10)}`, project, language, commit: sha, parent: parents, question, gold });
  }
  process.stderr.write(`${project}: ${taken} questions\n`);
}
process.stdout.write(JSON.stringify({ description: `Commit-message reports (not issue-tracker reports), every indexed language: the message of a fix commit as the question, the non-test source files it modified as gold (their language as the question's), the tree at its parent as corpus; the newest ${cap} qualifying commits per project. Built by scripts/make-report-questions.mjs.`, cap, projects, questions }, null, 1) + "\n");
