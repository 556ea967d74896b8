#!/usr/bin/env node
// Stability benchmark: do answers hold still? Each question set is asked three times in one daemon
// (side effects on, as an assistant's calls are), then the whole run is repeated in a fresh daemon
// over a fresh build. Prints, per set: answers that changed between passes (and how many got worse),
// answers that differ between the two runs, and search MRR per pass.
//   npm run bench:stability [-- --questions FILE ...] [--dist DIR] [--json]
// Sets default to those whose corpora are fetched under .bench-cache/corpora; with none at hand,
// test/bench/retrieval/self.json on a copy of this repository's tree (git ls-files).
// --dist DIR runs another build's daemon (e.g. an older commit's dist/) for a before/after figure.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const dist = path.resolve(opt("--dist") ?? path.join(root, "dist"));
const { callDaemon, stopDaemon, closeConnections } = await import(path.join(dist, "client/rpc.js"));
const PASSES = 3;
const RUNS = 2;
const LIMIT = 10;

const given = args.flatMap((a, i) => (args[i - 1] === "--questions" ? [path.resolve(a)] : []));
const defaults = ["questions.json", "dev.json", "heldout.json"].map((f) => path.join(root, "test/bench/retrieval", f));
const fetched = (file) => Object.values(JSON.parse(fs.readFileSync(file, "utf8")).corpora).every((c) => fs.existsSync(path.join(root, c.dir)));
const files = given.length ? given : defaults.filter(fetched).length ? defaults.filter(fetched) : [path.join(root, "test/bench/retrieval/self.json")];

/** A work copy of a corpus (this repository's tracked files for ".": its own tree, without .git or builds). */
function workCopy(name, dir) {
  const work = path.join(root, ".bench-cache/work", `stability-${name}`);
  fs.rmSync(work, { recursive: true, force: true });
  if (path.resolve(root, dir) === root) {
    for (const f of execFileSync("git", ["-C", root, "ls-files"], { encoding: "utf8" }).split("\n").filter(Boolean)) {
      fs.mkdirSync(path.dirname(path.join(work, f)), { recursive: true });
      fs.copyFileSync(path.join(root, f), path.join(work, f));
    }
  } else fs.cpSync(path.join(root, dir), work, { recursive: true });
  return work;
}

/** One run: a fresh build in a fresh daemon, then PASSES passes over the questions; per pass and question the ranking and its reciprocal rank. */
async function run(work, qs) {
  fs.rmSync(path.join(work, ".codemem"), { recursive: true, force: true });
  const built = await callDaemon(work, "build", { project_path: work });
  // A whole-tree build answers before its vectors are written (its answers say `filling`): the passes
  // start once they are, as the rule is about the daemon that wrote them.
  const t0 = Date.now();
  while (built.filling?.length && (await callDaemon(work, "stats", { project_path: work })).freshness.filling) await new Promise((r) => setTimeout(r, 100));
  if (built.filling?.length) console.error(JSON.stringify({ level: "info", msg: "fill written", corpus: path.basename(work), waited_s: (Date.now() - t0) / 1000 }));
  const passes = [];
  for (let p = 0; p < PASSES; p++) {
    const rows = [];
    for (const q of qs) {
      const s = await callDaemon(work, "search", { project_path: work, query: q.question, limit: LIMIT });
      const a = await callDaemon(work, "query", { project_path: work, question: q.question });
      const rank = s.results.findIndex((r) => q.gold_files.includes(r.file_path));
      rows.push({
        key: JSON.stringify([s.results.map((r) => r.id), a.citations.map((c) => c.node_id)]),
        rr: rank >= 0 ? 1 / (rank + 1) : 0,
        lexicalOnly: (s.freshness.warming ?? []).length > 0 || (s.freshness.filling ?? []).length > 0,
        synapse: s.results.filter((r) => r.via.includes("synapse")).length,
      });
    }
    passes.push(rows);
  }
  await stopDaemon(work, { timeoutMs: 20_000 }).catch(() => undefined);
  return passes;
}

const changed = (a, b) => a.filter((r, i) => r.key !== b[i].key).length;
const worse = (a, b) => a.filter((r, i) => b[i].rr < r.rr).length;
const mrr = (rows) => rows.reduce((s, r) => s + r.rr, 0) / rows.length;
const report = [];
for (const file of files) {
  const spec = JSON.parse(fs.readFileSync(file, "utf8"));
  for (const [name, c] of Object.entries(spec.corpora)) {
    const qs = spec.questions.filter((q) => q.corpus === name && q.gold_files?.length);
    if (!qs.length) continue;
    const work = workCopy(name, c.dir);
    const runs = [];
    for (let r = 0; r < RUNS; r++) runs.push(await run(work, qs));
    const row = {
      set: path.basename(file, ".json"),
      corpus: name,
      questions: qs.length,
      changed_between_passes: runs.map((ps) => ps.slice(1).map((p) => changed(ps[0], p))),
      worse_on_later_pass: runs.map((ps) => ps.slice(1).map((p) => worse(ps[0], p))),
      changed_between_runs: runs[0].map((p, i) => changed(p, runs[1][i])),
      mrr_per_pass: runs.map((ps) => ps.map((p) => Math.round(mrr(p) * 1000) / 1000)),
      lexical_only_answers: runs.map((ps) => ps.map((p) => p.filter((r) => r.lexicalOnly).length)),
      synapse_hits: runs.map((ps) => ps.map((p) => p.reduce((s, r) => s + r.synapse, 0))),
    };
    report.push(row);
    if (!args.includes("--json")) {
      console.log(`${row.set}/${row.corpus} (${row.questions} questions, ${dist})`);
      for (let r = 0; r < RUNS; r++) {
        console.log(`  run ${r + 1}: MRR per pass ${row.mrr_per_pass[r].join(" / ")}; changed vs pass 1: ${row.changed_between_passes[r].join(", ")} (worse ${row.worse_on_later_pass[r].join(", ")}); lexical-only ${row.lexical_only_answers[r].join("/")}; synapse hits ${row.synapse_hits[r].join("/")}`);
      }
      console.log(`  run 1 vs run 2, per pass: ${row.changed_between_runs.join(", ")} changed`);
    }
  }
}
await closeConnections();
if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));
