#!/usr/bin/env node
// Co-change prediction from a repository's history (issue 17): learn from the first 80 % of the
// commits, then for each later commit that changed 2–10 source files and each file in it, rank the
// other files; report recall@5 and MRR of the files that really changed with it. Compared in the same
// run with three baselines over the same commits: raw co-change counts, graph neighbours (imports
// and calls of our own index built from the tree at the split), and the most recently changed files.
//
// --product measures what a user's assistant gets instead of a replay into the store: a clone of the
// repository checked out at the split (offline, `git clone --shared`), `codemem build --history 100000`
// through the real CLI and daemon, then the MCP tool `codemem_synaptic_neighbors` over the SDK's
// client, seeded with each file of each later commit; the baselines read the commits the product read
// (those reachable from the split), under the names of the tree at the split. Two ceilings follow
// (bounds, not methods: they read the later commits): the best fixed order, per seed, of its known
// co-change partners, and of any files; the tool answers from the seed alone and cannot beat either.
//
// Usage: node scripts/bench-cochange.mjs [--split 0.8] [--no-graph] [--product] GITDIR...
//   GITDIR: a repository with its history, bare or not (e.g. `git clone --bare URL`); the defaults
//   are the repositories under $CODEMEM_COCHANGE_REPOS, else under .bench-cache/cochange/ (one
//   directory per project). Measured on pallets/flask, psf/requests, expressjs/express and
//   sindresorhus/got (docs/synapses.md, "History").
// Nothing is written to any project's store: the learned store is a temporary file.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import Database from "better-sqlite3";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { LOG_FORMAT, parseLog } = await import(path.join(root, "dist/daemon/synapse/history.js"));
const { SynapseStore, historyDecayOf } = await import(path.join(root, "dist/daemon/synapse/store.js"));
const { languageForPath } = await import(path.join(root, "dist/daemon/index/languages/registry.js"));
const { ProjectEngine } = await import(path.join(root, "dist/daemon/engine.js"));

const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); if (i < 0) return d; const v = args[i + 1]; args.splice(i, 2); return v; };
const flag = (n) => { const i = args.indexOf(n); if (i >= 0) args.splice(i, 1); return i >= 0; };
const splitAt = Number(opt("--split", "0.8"));
const noGraph = flag("--no-graph");
const product = flag("--product");
const MAX_FILES = 30; // the bulk cap ([synapses] history_max_files default), for every method alike
const K = 5;
let repos = args;
const reposDir = process.env.CODEMEM_COCHANGE_REPOS || path.join(root, ".bench-cache/cochange");
if (repos.length === 0 && fs.existsSync(reposDir)) {
  const dir = reposDir;
  repos = fs.readdirSync(dir).map((d) => path.join(dir, d)).filter((d) => fs.statSync(d).isDirectory());
}
if (repos.length === 0) {
  console.error(`usage: node scripts/bench-cochange.mjs GITDIR... (repositories with their history, e.g. git clone --bare), or put them under ${reposDir}`);
  process.exit(2);
}

const git = (dir, a) => execFileSync("git", ["-C", dir, ...a], { encoding: "utf8", maxBuffer: 1 << 30 });
const isSource = (f) => languageForPath(f) !== undefined;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-cochange-"));

function rankBy(scores, self, k) {
  return [...scores.entries()].filter(([f]) => f !== self).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, k).map(([f]) => f);
}

function evaluate(cases, rank) {
  let recall = 0, rr = 0;
  for (const { file, gold } of cases) {
    const top = rank(file);
    recall += top.slice(0, K).filter((f) => gold.has(f)).length / gold.size;
    const i = top.findIndex((f) => gold.has(f));
    rr += i >= 0 ? 1 / (i + 1) : 0;
  }
  return { recall: recall / cases.length, mrr: rr / cases.length };
}

/** File-level graph neighbours from our index of the tree at `sha` (imports and calls, both directions). */
async function graphNeighbours(dir, sha, name, todayName) {
  const tree = path.join(tmp, `${name}-tree`);
  fs.mkdirSync(tree, { recursive: true });
  execFileSync("bash", ["-c", `git -C "$0" archive "$1" | tar -x -C "$2"`, dir, sha, tree]);
  const e = await ProjectEngine.open(tree, { sideEffects: false });
  await e.build({ project_path: tree, force: true });
  await e.close();
  const db = new Database(path.join(tree, "codegraph-out/codemem_db/index.db"), { readonly: true });
  const rows = db.prepare(`
    SELECT ns.file_path AS a, nt.file_path AS b, count(*) AS n FROM edges e
    JOIN symbols s1 ON s1.id = e.source JOIN symbols s2 ON s2.id = e.target
    JOIN nodes ns ON ns.id = s1.name JOIN nodes nt ON nt.id = s2.name
    WHERE e.type IN ('imports', 'calls') AND ns.file_path <> nt.file_path GROUP BY 1, 2`).all();
  db.close();
  const out = new Map();
  const add = (a, b, n) => { const m = out.get(a) ?? new Map(); m.set(b, (m.get(b) ?? 0) + n); out.set(a, m); };
  for (const r of rows) {
    add(todayName(r.a), todayName(r.b), r.n);
    add(todayName(r.b), todayName(r.a), r.n);
  }
  fs.rmSync(tree, { recursive: true, force: true });
  return out;
}

function synapseRanker(train, params, depth) {
  const file = path.join(tmp, `s-${Math.random().toString(36).slice(2)}.db`);
  const store = SynapseStore.open(file, params);
  for (let i = 0; i < train.length; i += 500) {
    store.learnHistory(train.slice(i, i + 500).map((c) => ({ sha: c.sha, at: c.at, files: c.files.length, ids: c.root ? [] : c.files.filter(isSource) })), { maxFiles: MAX_FILES });
  }
  return { rank: (f) => store.neighbors([f], { depth, k: 10 }).map((n) => n.id), close: () => store.close() };
}

/** Raw co-change counts and the most recently changed files over `train`, files kept by `keep`, same bulk cap. */
function baselines(train, keep) {
  const pair = new Map();
  const lastChange = new Map();
  for (const c of train) {
    const src = c.files.filter(keep);
    for (const f of src) lastChange.set(f, c.at);
    if (c.root || c.files.length > MAX_FILES || src.length < 2) continue;
    for (const a of src) {
      const m = pair.get(a) ?? new Map();
      for (const b of src) if (b !== a) m.set(b, (m.get(b) ?? 0) + 1);
      pair.set(a, m);
    }
  }
  const recent = [...lastChange.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([f]) => f);
  return {
    // Raw counts, ties broken toward the file changed more recently (the baseline's best reading).
    byCount: (f) => [...(pair.get(f) ?? new Map()).entries()].sort((a, b) => b[1] - a[1] || (lastChange.get(b[0]) ?? 0) - (lastChange.get(a[0]) ?? 0)).slice(0, 10).map(([g]) => g),
    byRecent: (f) => recent.filter((g) => g !== f).slice(0, 10),
    partnersOf: (f) => pair.get(f) ?? new Map(),
  };
}

/**
 * Not a method, a bound: for each seed, `candidates` (e.g. its known co-change partners) in the order
 * that suits the seed's later commits best (by their share of its gold). A ranking that depends on the
 * seed alone, as the tool's does, cannot beat it on those candidates.
 */
function fixedOrderCeiling(cases, candidates) {
  const mass = new Map();
  for (const { file, gold } of cases) {
    const m = mass.get(file) ?? new Map();
    const known = candidates(file);
    for (const g of gold) if (known === undefined || known.has(g)) m.set(g, (m.get(g) ?? 0) + 1 / gold.size);
    mass.set(file, m);
  }
  return (f) => [...(mass.get(f) ?? new Map()).entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10).map(([g]) => g);
}

/** For each later commit with 2–10 source files, each file in it and the others as its gold. */
function casesOf(test) {
  const cases = [];
  for (const c of test) {
    const src = [...new Set(c.files.filter(isSource))];
    if (src.length < 2 || src.length > 10) continue;
    for (const f of src) cases.push({ file: f, gold: new Set(src.filter((g) => g !== f)) });
  }
  return cases;
}

const logOf = (dir, range) => git(dir, ["-c", "core.quotepath=off", "log", range, "--no-merges", "-M", "-z", "--name-status", `--format=${LOG_FORMAT}`]);

/**
 * The product's answer (--product): the tree at the split built by the CLI with its whole history,
 * then the MCP tool seeded with each file of the cases; the baselines over the commits it read.
 */
async function productRun(dir, name) {
  const tree = path.join(tmp, name);
  execFileSync("git", ["clone", "-q", "--shared", "--no-checkout", dir, tree]);
  const head = git(tree, ["rev-parse", "HEAD"]).trim();
  const all = parseLog(logOf(tree, head)).reverse();
  const split = all[Math.floor(all.length * splitAt) - 1].sha;
  git(tree, ["checkout", "-q", "--detach", split]);
  const train = parseLog(logOf(tree, split)).reverse();
  // Later commits name files as HEAD does; the tree at the split (and the product) by their names then.
  const today = new Map();
  const test = parseLog(logOf(tree, `${split}..${head}`), today).reverse();
  const atSplit = new Set(git(tree, ["ls-tree", "-r", "-z", "--name-only", split]).split("\0").filter(Boolean));
  const back = new Map([...today].filter(([old]) => atSplit.has(old)).map(([old, now]) => [now, old]));
  for (const c of test) c.files = c.files.map((f) => back.get(f) ?? f);
  const cases = casesOf(test);
  const { byCount, byRecent, partnersOf } = baselines(train, (f) => isSource(f) && atSplit.has(f));

  const cli = path.join(root, "dist/client/cli.js");
  const t0 = performance.now();
  const built = JSON.parse(execFileSync(process.execPath, [cli, "build", tree, "--history", "100000", "--json"], { encoding: "utf8", maxBuffer: 1 << 28 }));
  const buildMs = performance.now() - t0;
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { stopDaemon } = await import(path.join(root, "dist/client/rpc.js"));
  const client = new Client({ name: "bench-cochange", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.join(root, "dist/client/mcp.js"), tree], stderr: "ignore" }));
  const answers = new Map();
  try {
    for (const { file } of cases) {
      if (answers.has(file)) continue;
      const r = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: [file] } });
      const files = r.isError ? [] : [...new Set(r.structuredContent.neighbors.map((n) => n.file_path))].filter((f) => f !== file);
      answers.set(file, files);
    }
  } finally {
    await client.close();
    await stopDaemon(tree);
  }
  const rows = [
    { method: "raw co-change counts", ...evaluate(cases, byCount) },
    { method: "recently changed files", ...evaluate(cases, byRecent) },
    { method: "product (CLI build + MCP synaptic_neighbors)", ...evaluate(cases, (f) => answers.get(f)) },
    // Bounds, not baselines: the best fixed order of each seed's known partners, of any files.
    { method: "  ceiling: best order of the seed's partners", ...evaluate(cases, fixedOrderCeiling(cases, (f) => new Set(partnersOf(f).keys()))) },
    { method: "  ceiling: best order of any files", ...evaluate(cases, fixedOrderCeiling(cases, () => undefined)) },
  ];
  const h = built.history ?? {};
  console.log(`\n${name}: split at ${split.slice(0, 10)}, ${train.length} commits before it, ${test.length} after; ${cases.length} ranking cases (${answers.size} seeds); build with history: ${Math.round(buildMs)} ms, ${h.commits} commits read, ${h.learned} learned`);
  fs.rmSync(tree, { recursive: true, force: true });
  return rows;
}

const summary = [];
for (const dir of repos) {
  const name = path.basename(dir.replace(/\/repo$/, "").replace(/\.git$/, ""));
  if (product) {
    const rows = await productRun(dir, name);
    console.log("method".padEnd(50) + "recall@5   MRR");
    for (const r of rows) console.log(r.method.padEnd(50) + r.recall.toFixed(3).padEnd(11) + r.mrr.toFixed(3));
    const [counts, recent, mine, partners] = rows;
    const best = counts.recall >= recent.recall ? counts : recent;
    const lift = mine.recall / best.recall - 1;
    const bound = partners.recall / best.recall - 1;
    console.log(`best baseline: ${best.method} (recall@5 ${best.recall.toFixed(3)}); product ${lift >= 0 ? "+" : ""}${(lift * 100).toFixed(1)} % relative; the partners' ceiling ${bound >= 0 ? "+" : ""}${(bound * 100).toFixed(1)} %`);
    summary.push({ name, lift, mrrLift: mine.mrr / Math.max(counts.mrr, recent.mrr) - 1 });
    continue;
  }
  const out = git(dir, ["-c", "core.quotepath=off", "log", "HEAD", "--no-merges", "-M", "-z", "--name-status", `--format=${LOG_FORMAT}`]);
  const commits = parseLog(out).reverse();
  const cut = Math.floor(commits.length * splitAt);
  const train = commits.slice(0, cut);
  const test = commits.slice(cut);
  const t0 = performance.now();
  const { byCount, byRecent } = baselines(train, isSource);
  const cases = casesOf(test);

  const rows = [];
  rows.push({ method: "raw co-change counts", ...evaluate(cases, byCount) });
  rows.push({ method: "recently changed files", ...evaluate(cases, byRecent) });
  if (!noGraph) {
    // Names in the tree at the split are mapped to today's names (renames since), as history is.
    const since = git(dir, ["-c", "core.quotepath=off", "log", `${train[train.length - 1].sha}..HEAD`, "--no-merges", "-M", "-z", "--name-status", `--format=${LOG_FORMAT}`]);
    const names = new Map();
    parseLog(since, names);
    const g = await graphNeighbours(dir, train[train.length - 1].sha, name, (p) => names.get(p) ?? p);
    rows.push({ method: "graph neighbours (imports, calls)", ...evaluate(cases, (f) => rankBy(g.get(f) ?? new Map(), f, 10)) });
  }
  const best = rows.reduce((a, b) => (b.recall > a.recall ? b : a));
  const t1 = performance.now();
  const s = synapseRanker(train, {}, 2);
  const learnMs = performance.now() - t1;
  const syn = { method: "synapses (history replay, default parameters)", ...evaluate(cases, s.rank) };
  s.close();
  rows.push(syn);
  // Sensitivity (not tuning: the default above was fixed before this run): history ageing and depth.
  for (const [label, params, depth] of [["no ageing", { historyDecay: 1 }, 2], ["half-life 5 of a file's commits", { historyDecay: historyDecayOf(5) }, 2], ["half-life 80", { historyDecay: historyDecayOf(80) }, 2], ["depth 1", {}, 1]]) {
    const v = synapseRanker(train, params, depth);
    rows.push({ method: `  sensitivity: ${label}`, ...evaluate(cases, v.rank) });
    v.close();
  }
  console.log(`\n${name}: ${commits.length} commits (${train.length} learned, ${test.length} held out), ${cases.length} ranking cases; replay of ${train.length} commits into the store: ${Math.round(learnMs)} ms`);
  console.log("method".padEnd(50) + "recall@5   MRR");
  for (const r of rows) console.log(r.method.padEnd(50) + r.recall.toFixed(3).padEnd(11) + r.mrr.toFixed(3));
  const lift = syn.recall / best.recall - 1;
  console.log(`best baseline: ${best.method} (recall@5 ${best.recall.toFixed(3)}); synapses ${lift >= 0 ? "+" : ""}${(lift * 100).toFixed(1)} % relative`);
  summary.push({ name, lift, synRecall: syn.recall, best: best.recall, mrrLift: syn.mrr / Math.max(...rows.slice(0, rows.indexOf(syn)).map((r) => r.mrr)) - 1 });
  void t0;
}
const avg = summary.reduce((s, r) => s + r.lift, 0) / summary.length;
const avgMrr = summary.reduce((s, r) => s + r.mrrLift, 0) / summary.length;
console.log(`\naverage relative lift of recall@5 over the best baseline: ${(avg * 100).toFixed(1)} % (target ≥ 10 %, and ahead on every project: ${summary.every((r) => r.lift > 0) ? "yes" : "no"}); MRR over the best baseline MRR: ${(avgMrr * 100).toFixed(1)} %`);
fs.rmSync(tmp, { recursive: true, force: true });
