#!/usr/bin/env node
// Retrieval benchmark: codemem vs. two baselines on real projects with a frozen question set.
// Usage: npm run bench:retrieval [-- --json] [--corpus NAME] [--questions FILE]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import Database from "better-sqlite3";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const dist = (p) => path.join(root, "dist", p);
const { resolveConfig } = await import(dist("shared/config.js"));
const { ProjectEngine } = await import(dist("daemon/engine.js"));
const { countTokens } = await import(dist("shared/tokens.js"));
const { splitWords } = await import(dist("daemon/index/text.js"));

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const questionsFile = path.resolve(opt("--questions") ?? path.join(root, "test/bench/retrieval/questions.json"));
const onlyCorpus = opt("--corpus");
const spec = JSON.parse(fs.readFileSync(questionsFile, "utf8"));

execFileSync("bash", [path.join(root, "scripts/fetch-corpora.sh")], { stdio: ["ignore", "ignore", "inherit"] });

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const report = { corpora: {}, overall: {} };
const all = { codemem: [], whole: [], bm25: [] };

for (const [name, c] of Object.entries(spec.corpora)) {
  if (onlyCorpus && name !== onlyCorpus) continue;
  const src = path.join(root, c.dir);
  const work = path.join(root, ".bench-cache/work", name);
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(src, work, { recursive: true });
  const engine = await ProjectEngine.open(work, { sideEffects: false });
  const built = await engine.build({ project_path: work, force: true });
  const qs = spec.questions.filter((q) => q.corpus === name);

  // Warm-up, then measured runs.
  await engine.query({ project_path: work, question: qs[0].question });
  const rows = [];
  for (const q of qs) {
    let t = performance.now();
    const a = await engine.query({ project_path: work, question: q.question });
    const queryMs = performance.now() - t;
    t = performance.now();
    const s = await engine.search({ project_path: work, query: q.question, limit: 10 });
    const searchMs = performance.now() - t;
    const cited = new Set(a.citations.map((x) => x.file_path));
    const recall = q.gold_files.filter((g) => cited.has(g)).length / q.gold_files.length;
    const rank = s.results.findIndex((r) => q.gold_files.includes(r.file_path));
    rows.push({ id: q.id, recall, rr: rank >= 0 ? 1 / (rank + 1) : 0, tokens: a.tokens, files: cited.size, queryMs, searchMs });
  }

  // Baseline 1: every indexed file pasted whole.
  const files = new Map([...(await engine.retriever()).files].map(([p, f]) => [p, f.tokens]));
  const wholeTokens = [...files.values()].reduce((a, b) => a + b, 0);
  // Baseline 2: whole-file BM25 (FTS5 over split words of each file), top-3 files cut to codemem's mean budget.
  const budget = Math.round(mean(rows.map((r) => r.tokens)));
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE f USING fts5(path UNINDEXED, body, tokenize='porter unicode61')");
  const ins = db.prepare("INSERT INTO f(path, body) VALUES (?, ?)");
  for (const p of files.keys()) ins.run(p, splitWords(fs.readFileSync(path.join(work, p), "utf8")).join(" "));
  const bm = db.prepare("SELECT path FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 3");
  const bmRows = qs.map((q) => {
    const words = [...new Set(splitWords(q.question).filter((w) => w.length > 2))];
    const top = words.length ? bm.all(words.map((w) => `"${w}"`).join(" OR ")).map((r) => r.path) : [];
    // Files are pasted in rank order until the budget is spent; a file counts if any of it made it in.
    let left = budget;
    const included = [];
    for (const p of top) {
      if (left <= 0) break;
      included.push(p);
      left -= files.get(p);
    }
    const recall = q.gold_files.filter((g) => included.includes(g)).length / q.gold_files.length;
    const rank = top.findIndex((p) => q.gold_files.includes(p));
    return { recall, rr: rank >= 0 ? 1 / (rank + 1) : 0, tokens: Math.min(budget, top.reduce((s, p) => s + files.get(p), 0)), files: included.length };
  });

  const summary = {
    files: files.size,
    nodes: built.node_count,
    build_s: built.time_elapsed,
    questions: qs.length,
    codemem: {
      recall: mean(rows.map((r) => r.recall)),
      mrr: mean(rows.map((r) => r.rr)),
      mean_tokens: mean(rows.map((r) => r.tokens)),
      mean_files_cited: mean(rows.map((r) => r.files)),
      max_files_cited: Math.max(...rows.map((r) => r.files)),
      query_p50_ms: pct(rows.map((r) => r.queryMs), 0.5),
      search_p50_ms: pct(rows.map((r) => r.searchMs), 0.5),
    },
    whole_files: { recall: 1, mean_tokens: wholeTokens },
    bm25_top3: { recall: mean(bmRows.map((r) => r.recall)), mrr: mean(bmRows.map((r) => r.rr)), mean_tokens: mean(bmRows.map((r) => r.tokens)), mean_files_cited: mean(bmRows.map((r) => r.files)) },
    misses: rows.filter((r) => r.recall < 1).map((r) => r.id),
    rows: rows.map(({ id, recall, rr, tokens, files }) => ({ id, recall, rr, tokens, files })),
  };
  report.corpora[name] = summary;
  all.codemem.push(...rows);
  all.bm25.push(...bmRows);
  await engine.close();
}
report.overall = {
  questions: all.codemem.length,
  codemem: { recall: mean(all.codemem.map((r) => r.recall)), mrr: mean(all.codemem.map((r) => r.rr)), mean_tokens: mean(all.codemem.map((r) => r.tokens)), mean_files_cited: mean(all.codemem.map((r) => r.files)) },
  bm25_top3: { recall: mean(all.bm25.map((r) => r.recall)), mrr: mean(all.bm25.map((r) => r.rr)) },
};
if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));
else {
  const f = (x) => (typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(3)) : String(x));
  for (const [name, s] of Object.entries(report.corpora)) {
    console.log(`\n== ${name}: ${s.files} files, ${s.nodes} nodes, build ${s.build_s}s, ${s.questions} questions`);
    console.log(`  codemem      recall ${f(s.codemem.recall)}  MRR ${f(s.codemem.mrr)}  tokens ${f(s.codemem.mean_tokens)}  files/answer ${f(s.codemem.mean_files_cited)} (max ${s.codemem.max_files_cited})  query p50 ${f(s.codemem.query_p50_ms)} ms  search p50 ${f(s.codemem.search_p50_ms)} ms`);
    console.log(`  whole files  recall 1.000  tokens ${s.whole_files.mean_tokens}`);
    console.log(`  BM25 top-3   recall ${f(s.bm25_top3.recall)}  MRR ${f(s.bm25_top3.mrr)}  tokens ${f(s.bm25_top3.mean_tokens)}  files/answer ${f(s.bm25_top3.mean_files_cited)}`);
    if (s.misses.length) console.log(`  misses: ${s.misses.join(" ")}`);
  }
  const o = report.overall;
  console.log(`\n== overall (${o.questions} questions): codemem recall ${f(o.codemem.recall)} MRR ${f(o.codemem.mrr)} tokens ${f(o.codemem.mean_tokens)} files ${f(o.codemem.mean_files_cited)} | BM25 top-3 recall ${f(o.bm25_top3.recall)} MRR ${f(o.bm25_top3.mrr)}`);
}
