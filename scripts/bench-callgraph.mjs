#!/usr/bin/env node
// Call graph benchmark: codemem's CALLS edges against the compilers' own resolution (TypeScript's
// checker, jedi for Python, go/types for Go, javac for Java) on real projects with their tests, for
// this head's dist, a base commit's and codegraph's graph in the same run. See docs/callgraph-bench.md.
// Usage: npm run bench:callgraph [-- --project NAME] [--base REF | --no-base] [--no-codegraph] [--json] [--details]
//        node scripts/bench-callgraph.mjs --fetch [--from DIR]   fill the cache (no network: from git
//        directories under DIR, default /work/.mirror, laid out as <owner>+<name>/repo or <name>/)
import fs from "node:fs";
import path from "node:path";
import { PROJECTS, cached, fill, treeDir } from "./callgraph/projects.mjs";
import { cachedTruth, truthVersion } from "./callgraph/truth.mjs";
import { compare, KINDS } from "./callgraph/compare.mjs";
import { baseCommit, codememGraph, distOf } from "./callgraph/codemem-graph.mjs";
import { CODEGRAPH_VERSION, codegraphCli, codegraphGraph } from "./callgraph/codegraph-graph.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt("--project");
const projects = PROJECTS.filter((p) => !only || p.name === only);

if (args.includes("--fetch")) {
  const from = opt("--from") ?? "/work/.mirror";
  for (const p of projects) {
    if (cached(root, p)) continue;
    console.error(`${p.name}: ${fill(root, p, from)} at ${p.commit}`);
  }
  process.exit(0);
}

/** The truth of each language: the module computing it and what it needs. */
const TRUTHS = {
  typescript: async (tree) => (await import("./callgraph/ts-truth.mjs")).tsTruth(tree),
  python: async (tree) => (await import("./callgraph/py-truth.mjs")).pyTruth(tree),
  go: async (tree) => (await import("./callgraph/go-truth.mjs")).goTruth(tree),
  java: async (tree) => (await import("./callgraph/java-truth.mjs")).javaTruth(tree),
};
const here = path.join(root, "scripts/callgraph");
// A truth is recomputed when its code changes or when the dependencies the compilers can see do
// (Debian's Python packages, Go sources): more of them resolve more calls.
const DEPENDENCIES = { python: "/usr/lib/python3/dist-packages", go: "/usr/share/gocode/src", java: "/usr/share/java" };
const truthFiles = fs.readdirSync(here).filter((f) => /truth/i.test(f)).sort().map((f) => path.join(here, f));
const versionOf = (language) => {
  const d = DEPENDENCIES[language];
  return truthVersion(truthFiles, d && fs.existsSync(d) ? fs.readdirSync(d).sort().join(",") : "");
};

const missing = projects.filter((p) => !cached(root, p));
if (missing.length) {
  console.error(`not in the cache: ${missing.map((p) => p.name).join(", ")}. Fill it once (offline afterwards) with\n  node scripts/bench-callgraph.mjs --fetch --from DIR\nwhere DIR holds a git clone of each (${missing.map((p) => `${p.repo} as ${p.name}/`).join(", ")}) containing the pinned commit.`);
  if (missing.length === projects.length) process.exit(1);
}

/** The graphs scored: this head's codemem, a base commit's, and codegraph's, each built from a copy of the tree. */
const work = (p, side) => path.join(root, ".bench-cache/work", `callgraph-${p.name}-${side}`);
const sides = [{ name: "head", build: (tree, p) => codememGraph(path.join(root, "dist"), tree, work(p, "head")) }];
if (!args.includes("--no-base")) {
  const commit = baseCommit(root, opt("--base"));
  const dist = distOf(root, commit);
  sides.push({ name: `base ${commit.slice(0, 9)}`, build: (tree, p) => codememGraph(dist, tree, work(p, "base")) });
}
if (!args.includes("--no-codegraph")) {
  try {
    const cli = codegraphCli(root);
    sides.push({ name: `codegraph ${CODEGRAPH_VERSION}`, build: (tree, p) => codegraphGraph(cli, tree, work(p, "codegraph")) });
  } catch (e) {
    console.error(`no codegraph column: ${e.message}`);
  }
}

const report = {};
for (const p of projects.filter((p) => cached(root, p))) {
  const tree = treeDir(root, p);
  let truth;
  try {
    truth = await cachedTruth(path.join(root, ".bench-cache/callgraph/truth"), p, versionOf(p.language), () => TRUTHS[p.language](tree));
  } catch (e) {
    report[p.name] = { error: String(e.message ?? e).split("\n")[0] };
    console.error(`${p.name}: no truth: ${report[p.name].error}`);
    continue;
  }
  report[p.name] = { language: p.language, commit: p.commit, tool: truth.tool, coverage: truth.coverage, sides: {} };
  for (const s of sides) {
    let built;
    try {
      built = s.build(tree, p);
    } catch (e) {
      report[p.name].sides[s.name] = { error: String(e.stderr || e.message || e).trim().split("\n").slice(-1)[0] };
      console.error(`${p.name}: ${s.name}: no graph: ${report[p.name].sides[s.name].error}`);
      continue;
    }
    const { graph, seconds } = built;
    const r = compare(truth, graph);
    if (!args.includes("--details")) {
      r.false_positives = r.false_positives.length;
      r.misses = r.misses.length;
    }
    report[p.name].sides[s.name] = { build_s: seconds, ...r };
  }
  if (!args.includes("--json")) print(p.name, report[p.name]);
}
if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));

function print(name, r) {
  const f = (x) => (x === null || x === undefined ? "  -  " : x.toFixed(3));
  const names = Object.keys(r.sides).filter((n) => !r.sides[n].error);
  console.log(`\n${name} (${r.language}, ${r.commit.slice(0, 9)}; truth: ${r.tool}; ${JSON.stringify(r.coverage)})`);
  console.log(`  ${"kind".padEnd(12)}${names.map((n) => `${n}: P      R      (tp/fp/fn)`.padEnd(46)).join("")}`);
  for (const k of ["all", ...KINDS]) {
    const cells = names.map((n) => {
      const s = k === "all" ? r.sides[n].overall : r.sides[n].kinds[k];
      return `${f(s.precision)}  ${f(s.recall)}  (${s.tp}/${s.fp}/${s.fn})`.padEnd(46);
    });
    console.log(`  ${k.padEnd(12)}${cells.join("")}`);
  }
  for (const n of names) {
    const s = r.sides[n];
    console.log(`  ${n}: ${s.truth_pairs} truth pairs; recursion ${s.recursion.found}/${s.recursion.pairs}; defs unmapped ${s.mapping.unmapped_defs}/${s.mapping.defs}; edges left out ${JSON.stringify(s.left_out)}; build ${s.build_s.toFixed(1)} s`);
    const d = s.dispatch;
    if (d) console.log(`  ${n}: dispatch candidates ${d.edges} (not scored as direct calls); against the truth's implementations: ${d.real} real, ${d.not_real} not, ${d.unjudged} unjudged; of its ${d.truth_pairs} (caller, implementation) pairs ${d.found} linked`);
  }
}
