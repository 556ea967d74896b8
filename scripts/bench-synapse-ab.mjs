#!/usr/bin/env node
// A/B of synapse recall on the retrieval benchmark: after a simulated work session on one area of a
// project, are that area's files ranked higher, and is recall no worse?
// Usage: node scripts/bench-synapse-ab.mjs [--corpus go-net] [--area http/]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { ProjectEngine } = await import(path.join(root, "dist/daemon/engine.js"));
const args = process.argv.slice(2);
const opt = (n, d) => { const i = args.indexOf(n); return i >= 0 ? args[i + 1] : d; };
const corpus = opt("--corpus", "go-net");
const area = opt("--area", "http/");
const spec = JSON.parse(fs.readFileSync(path.join(root, "test/bench/retrieval/questions.json"), "utf8"));
execFileSync("bash", [path.join(root, "scripts/fetch-corpora.sh")], { stdio: ["ignore", "ignore", "inherit"] });

const work = path.join(root, ".bench-cache/work", `synapse-ab-${corpus}`);
fs.rmSync(work, { recursive: true, force: true });
fs.cpSync(path.join(root, spec.corpora[corpus].dir), work, { recursive: true });
const qs = spec.questions.filter((q) => q.corpus === corpus);
const inArea = (q) => q.gold_files.every((g) => g.startsWith(area));

let sessionFiles = new Set();
async function measure(recallOn) {
  fs.writeFileSync(path.join(work, "codemem.toml"), `[query]\nsynapse_recall = ${recallOn}\n`);
  const e = await ProjectEngine.open(work, { sideEffects: false });
  const rows = [];
  for (const q of qs) {
    const s = await e.search({ project_path: work, query: q.question, limit: 10 });
    const a = await e.query({ project_path: work, question: q.question });
    const rank = s.results.findIndex((r) => q.gold_files.includes(r.file_path));
    const cited = new Set(a.citations.map((c) => c.file_path));
    const share = s.results.filter((r) => sessionFiles.has(r.file_path)).length / Math.max(1, s.results.length);
    rows.push({ area: inArea(q), rr: rank >= 0 ? 1 / (rank + 1) : 0, recall: q.gold_files.filter((g) => cited.has(g)).length / q.gold_files.length, share });
  }
  await e.close();
  const agg = (f) => { const xs = rows.filter(f); const m = (k) => xs.reduce((s, r) => s + r[k], 0) / xs.length; return { n: xs.length, mrr: m("rr"), recall: m("recall"), share: m("share") }; };
  return { area: agg((r) => r.area), other: agg((r) => !r.area) };
}

// Build, then a simulated session on the area through the daemon's dispatch path (side effects on):
// the assistant opens the area's files' outlines and searches for their symbols, three passes.
const engine = await ProjectEngine.open(work);
await engine.build({ project_path: work, force: true });
const areaFiles = [...(await engine.retriever()).files.keys()].filter((f) => f.startsWith(area));
const goldFiles = new Set(qs.filter(inArea).flatMap((q) => q.gold_files));
const session = [...goldFiles, ...areaFiles.filter((f) => !goldFiles.has(f)).slice(0, 10)];
let calls = 0;
for (let pass = 0; pass < 3; pass++) {
  for (const f of session) {
    if (!(await engine.retriever()).files.has(f)) continue; // e.g. generated files, which are not indexed
    const sk = await engine.dispatch("skeleton", { project_path: work, file_path: f });
    calls++;
    for (const sym of sk.symbols.slice(0, 3)) {
      await engine.dispatch("search", { project_path: work, query: sym.name, limit: 8 });
      calls++;
    }
  }
}
const st = engine.synapses().stats(3);
sessionFiles = new Set(session);
await engine.close();

const off = await measure(false);
const on = await measure(true);
const f = (x) => x.toFixed(3);
console.log(`synapse A/B on ${corpus}, area "${area}": session of ${calls} tool calls over ${session.length} files → ${st.edges} synapse edges (${st.ltp_edges} LTP)`);
for (const part of ["area", "other"]) {
  console.log(`  ${part.padEnd(5)} questions (${on[part].n}): MRR ${f(off[part].mrr)} → ${f(on[part].mrr)} (lift ${f(on[part].mrr - off[part].mrr)}), recall ${f(off[part].recall)} → ${f(on[part].recall)}, share of top-10 results in the session's files ${f(off[part].share)} → ${f(on[part].share)}`);
}
