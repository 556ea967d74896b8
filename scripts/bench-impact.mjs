#!/usr/bin/env node
// Impact on real history (issue 35): for commits that changed source and test files together, take
// the tree at the commit's parent, index it (with the co-change learned from the history up to the
// parent), run impact on the changed source files, and score recall@10 of the test files the commit
// changed. Compared in the same run with three simple baselines on the same index: (1) tests
// importing the changed files, (2) tests named after them (test_x.py, x_test.go, x.test.js,
// test/x.js), (3) their union (named first). Target: impact ≥ 1.2 × the best baseline's recall@10.
//
// Commit rule (mechanical): walking `git log --topo-order --no-merges` from the mirror's HEAD, newest
// first, a commit is taken when it has one parent, changes at most 12 files, modifies (status M, so
// they exist at the parent) at least one source file that is not test code and at least one test
// file, both in a language codemem reads. The newest --per-repo (default 40) are taken, then run
// oldest first.
//
// Trees: one `git clone --shared` of each mirror (offline, objects borrowed) under
// .bench-cache/impact/, checked out at each parent in turn, so one index per repository is updated
// incrementally from parent to parent and the history up to the parent is a real git history.
//
// Usage: node scripts/bench-impact.mjs [--per-repo 40] [--depth 3] [REPO...]
//   REPO: owner+name under /work/.mirror (or $CODEMEM_MIRRORS); default the six below.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { ProjectEngine } = await import(path.join(root, "dist/daemon/engine.js"));
const { languageForPath } = await import(path.join(root, "dist/daemon/index/languages/registry.js"));
const { isTestPath } = await import(path.join(root, "dist/daemon/index/test-code.js"));
const { impactOf } = await import(path.join(root, "dist/daemon/retrieve/impact.js"));

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); if (i < 0) return d; const v = args[i + 1]; args.splice(i, 2); return v; };
const PER_REPO = Number(opt("--per-repo", "40"));
const DEPTH = Number(opt("--depth", "3"));
const MAX_FILES = 12;
const K = 10;
const mirrors = process.env.CODEMEM_MIRRORS || "/work/.mirror";
const repos = args.length ? args : ["psf+requests", "pallets+flask", "spf13+cobra", "gin-gonic+gin", "expressjs+express", "sindresorhus+got"];
const cache = path.join(root, ".bench-cache/impact");
fs.mkdirSync(cache, { recursive: true });

const git = (dir, a) => execFileSync("git", ["-C", dir, ...a], { encoding: "utf8", maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "pipe"] });
const isCode = (f) => languageForPath(f) !== undefined;

/** The commits the rule takes, oldest first: { sha, parent, sources, tests }. */
function selectCommits(gitDir) {
  const out = git(gitDir, ["-c", "core.quotepath=off", "log", "--topo-order", "--no-merges", "--no-renames", "--name-status", "--format=\x01%H %P", "HEAD"]);
  const picked = [];
  for (const rec of out.split("\x01")) {
    if (picked.length >= PER_REPO) break;
    const [head, ...lines] = rec.trim().split("\n");
    if (!head) continue;
    const [sha, ...parents] = head.split(" ");
    if (parents.length !== 1) continue;
    const changes = lines.filter(Boolean).map((l) => l.split("\t"));
    if (changes.length === 0 || changes.length > MAX_FILES) continue;
    const modified = changes.filter(([s]) => s === "M").map(([, f]) => f).filter(isCode);
    const sources = modified.filter((f) => !isTestPath(f));
    const tests = modified.filter((f) => isTestPath(f));
    if (sources.length && tests.length) picked.push({ sha, parent: parents[0], sources, tests });
  }
  return picked.reverse();
}

/** Strips test markers from a file's name: test_x.py, x_test.go, x.test.js, x.spec.ts, XTest.java → x. */
const stem = (f) => path.basename(f).replace(/\.[^.]+$/, "").replace(/^test_|_test$|[._](test|spec)$|Tests?$/i, "").toLowerCase();

/** Baseline 2: test files named after a changed file, nearest directory first. */
function named(testFiles, sources) {
  const want = new Set(sources.map(stem));
  const dirs = new Set(sources.map((s) => path.dirname(s)));
  return testFiles.filter((t) => want.has(stem(t))).sort((a, b) => Number(dirs.has(path.dirname(b))) - Number(dirs.has(path.dirname(a))) || (a < b ? -1 : 1));
}

/** Baseline 1: test files importing a changed file, the most changed files imported first. */
async function importing(r, sources) {
  const n = new Map();
  for (const e of await r.store.importers(sources)) if (isTestPath(e.source)) n.set(e.source, (n.get(e.source) ?? 0) + 1);
  return [...n].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([f]) => f);
}

/** impact: the operation; graph: its walk without co-change; then the three baselines. */
const COLUMNS = ["impact", "graph", "imports", "named", "union"];
const BASELINES = ["imports", "named", "union"];
const union = (a, b) => [...new Set([...a, ...b])];
const recallAt = (ranked, gold) => ranked.slice(0, K).filter((f) => gold.has(f)).length / gold.size;

async function runRepo(name) {
  const mirror = path.join(mirrors, name, "repo");
  const tree = path.join(cache, name);
  if (!fs.existsSync(path.join(tree, ".git"))) execFileSync("git", ["clone", "-q", "--shared", "--no-checkout", mirror, tree]);
  // From the mirror's HEAD: the clone's is left detached at the last parent a run checked out.
  const commits = selectCommits(mirror);
  const sums = { ...Object.fromEntries(COLUMNS.map((k) => [k, 0])), n: 0 };
  let engine;
  let first = true;
  const t0 = Date.now();
  for (const c of commits) {
    git(tree, ["checkout", "-q", "-f", "--detach", c.parent]);
    git(tree, ["clean", "-q", "-f", "-d", "-e", "codegraph-out", "-e", ".codemem"]);
    engine ??= await ProjectEngine.open(tree, { sideEffects: false });
    const tb = Date.now();
    await engine.build({ project_path: tree });
    const tl = Date.now();
    // The first parent reads its newest 2000 commits; later ones (descendants, in this order) add theirs.
    await engine.memory.learnHistory({ commits: 2000, maxFiles: 30, reread: first });
    first = false;
    if (process.env.BENCH_TIMES) console.error(`build ${tl - tb} ms, history ${Date.now() - tl} ms`);
    const r = await engine.retriever();
    const sources = c.sources.filter((f) => r.files.has(f));
    const gold = new Set(c.tests.filter((f) => r.files.has(f)));
    if (!sources.length || !gold.size) continue;
    const testFiles = [...r.files.keys()].filter((f) => r.isTest(f));
    const imp = await engine.impact({ project_path: tree, files: sources, depth: DEPTH, budget: 20000 });
    // Ablation: the same walk without the learned co-change (the graph alone).
    const graphOnly = await impactOf(r, { seeds: sources.flatMap((f) => r.nodesOf(f)), files: sources, depth: DEPTH, budget: 20000 });
    const ranked = { impact: imp.tests.map((t) => t.file_path), graph: graphOnly.tests.map((t) => t.file_path), imports: await importing(r, sources), named: named(testFiles, sources) };
    ranked.union = union(ranked.named, ranked.imports);
    for (const k of COLUMNS) sums[k] += recallAt(ranked[k], gold);
    sums.n++;
  }
  await engine?.close();
  const avg = (k) => (sums.n ? sums[k] / sums.n : 0);
  return { repo: name, commits: sums.n, ...Object.fromEntries(COLUMNS.map((k) => [k, avg(k)])), seconds: Math.round((Date.now() - t0) / 1000) };
}

const rows = [];
for (const name of repos) {
  const row = await runRepo(name);
  rows.push(row);
  console.log(JSON.stringify(row));
}
const n = rows.reduce((s, r) => s + r.commits, 0);
const overall = (k) => rows.reduce((s, r) => s + r[k] * r.commits, 0) / n;
const o = Object.fromEntries(COLUMNS.map((k) => [k, overall(k)]));
const best = BASELINES.map((k) => [k, o[k]]).sort((a, b) => b[1] - a[1])[0];
const f = (x) => x.toFixed(3);
console.log(`\nrecall@${K} of the tests each commit changed (depth ${DEPTH}, ≤${PER_REPO} commits per repository)`);
console.log(["repo".padEnd(20), "commits", ...COLUMNS.map((k) => k.padStart(7))].join("  "));
const line = (name, commits, r) => console.log([name.padEnd(20), String(commits).padStart(7), ...COLUMNS.map((k) => f(r[k]).padStart(7))].join("  "));
for (const r of rows) line(r.repo, r.commits, r);
line("overall", n, o);
console.log(`best baseline: ${best[0]} ${f(best[1])}; impact ${f(o.impact)} = ${best[1] > 0 ? ((o.impact / best[1] - 1) * 100).toFixed(1) : "∞"} % relative (target ≥ 20 %)`);
