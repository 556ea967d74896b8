#!/usr/bin/env node
// A/B of synapse recall on ambiguous questions (issue 17): after a simulated work session in one
// area of a corpus, how often does the answer's lead file come from that area, with synapse recall
// on and off? And, in the same state, do the corpus's ordinary retrieval questions lose anything?
// Questions: test/bench/retrieval/ambiguous.json (python-stdlib) by default, or another set of the
// same format with --questions FILE (e.g. test/bench/retrieval/ambiguous-go.json on go-net); each set
// was written before tuning. The corpus is the set's `corpus`.
// Usage: node scripts/bench-focus.mjs [--questions FILE]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { ProjectEngine } = await import(path.join(root, "dist/daemon/engine.js"));
const qi = process.argv.indexOf("--questions");
if (qi >= 0 && !process.argv[qi + 1]) throw new Error("--questions needs a FILE");
const questionsFile = qi >= 0 ? path.resolve(process.argv[qi + 1]) : path.join(root, "test/bench/retrieval/ambiguous.json");
const spec = JSON.parse(fs.readFileSync(questionsFile, "utf8"));
const retrieval = JSON.parse(fs.readFileSync(path.join(root, "test/bench/retrieval/questions.json"), "utf8"));
execFileSync("bash", [path.join(root, "scripts/fetch-corpora.sh"), spec.corpus], { stdio: ["ignore", "ignore", "inherit"] });

const work = path.join(root, ".bench-cache/work", `focus-${spec.corpus}`);
fs.rmSync(work, { recursive: true, force: true });
fs.cpSync(path.join(root, retrieval.corpora[spec.corpus].dir), work, { recursive: true });
const builder = await ProjectEngine.open(work, { sideEffects: false });
await builder.build({ project_path: work, force: true });
const r = await builder.retriever();
const tokensOf = (f) => r.files.get(f)?.tokens ?? 0;
const allFiles = [...r.files.keys()];
await builder.close();

const ordinary = retrieval.questions.filter((q) => q.corpus === spec.corpus);
const areas = [...new Set(spec.questions.flatMap((q) => q.areas))].sort();
const toml = path.join(work, "codemem.toml");

/** What an assistant does in an area: outlines of its four largest files, searches for their symbols, an edit. */
async function session(area) {
  for (const f of [".codemem/synapses.db", ".codemem/synapses.db-wal", ".codemem/synapses.db-shm", ".codemem/events.jsonl"]) fs.rmSync(path.join(work, f), { force: true });
  fs.rmSync(toml, { force: true });
  const e = await ProjectEngine.open(work); // side effects on: the session teaches the store and writes events
  const files = allFiles.filter((f) => f.startsWith(area)).sort((a, b) => tokensOf(b) - tokensOf(a) || (a < b ? -1 : 1)).slice(0, 4);
  for (const f of files) {
    const sk = await e.dispatch("skeleton", { project_path: work, file_path: f });
    for (const sym of sk.symbols.slice(0, 2)) await e.dispatch("search", { project_path: work, query: sym.name, limit: 8 });
  }
  await e.dispatch("hook_event", { project_path: work, event: "post_tool_use", tool: "Edit", files: [files[0]] });
  await e.close();
  return files;
}

async function ask(recallOn, area) {
  fs.writeFileSync(toml, `[query]\nsynapse_recall = ${recallOn}\n`);
  const e = await ProjectEngine.open(work, { sideEffects: false }); // asking changes nothing
  let lead = 0, n = 0, rr = 0;
  for (const q of spec.questions.filter((x) => x.areas.includes(area))) {
    const a = await e.query({ project_path: work, question: q.question });
    n++;
    if (a.citations[0]?.file_path.startsWith(area)) lead++;
  }
  for (const q of ordinary) {
    const s = await e.search({ project_path: work, query: q.question, limit: 10 });
    const i = s.results.findIndex((x) => q.gold_files.includes(x.file_path));
    rr += i >= 0 ? 1 / (i + 1) : 0;
  }
  await e.close();
  return { lead, n, mrr: rr / ordinary.length };
}

const rows = [];
for (const area of areas) {
  const files = await session(area);
  const on = await ask(true, area);
  const off = await ask(false, area);
  rows.push({ area, files, on, off });
  console.log(`${area.padEnd(18)} lead in area: on ${on.lead}/${on.n}, off ${off.lead}/${off.n}; ordinary MRR on ${on.mrr.toFixed(3)}, off ${off.mrr.toFixed(3)}`);
}
fs.rmSync(toml, { force: true });
const sum = (k, f) => rows.reduce((s, r) => s + r[k][f], 0);
const n = sum("on", "n");
const onRate = sum("on", "lead") / n, offRate = sum("off", "lead") / n;
console.log(`\n${path.relative(root, questionsFile)} (${spec.corpus}): ${n} (area, question) pairs over ${areas.length} areas, ${spec.questions.length} questions`);
console.log(`lead file in the session's area: recall on ${(onRate * 100).toFixed(1)} %, off ${(offRate * 100).toFixed(1)} % (+${((onRate - offRate) * 100).toFixed(1)} points; target +30)`);
console.log(`ordinary ${spec.corpus} questions (${ordinary.length}) after each session, search MRR averaged over areas: on ${(sum("on", "mrr") / rows.length).toFixed(3)}, off ${(sum("off", "mrr") / rows.length).toFixed(3)}`);
