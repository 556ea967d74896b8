#!/usr/bin/env node
// Retrieval benchmark: codemem vs. two baselines on real projects, with frozen question sets.
//   npm run bench:retrieval [-- --json] [--corpus NAME] [--questions FILE ...] [--baseline REF] [--corpora DIR]
// By default four sets run on one build per corpus: questions.json and dev.json (used for tuning),
// heldout.json (written before the later tuning and never tuned on) and languages-c.json (C and C++,
// written before any tuning for them). Per set and corpus it prints
// gold-file recall in the query context, MRR in search (rank of the first result in a gold file),
// mean context tokens and files cited, next to two baselines measured in the same run: every file
// pasted whole, and whole-file BM25 top-3 at codemem's mean token budget. Latency is per corpus,
// over every question, with the index loaded (warm).
// --baseline REF (default none) runs the same sets on the same corpora a second time with the code
// at REF (built under .bench-cache/baseline-<sha>, in a child process) and prints both side by side.
// --corpora DIR reads the corpora from DIR/<name> instead of fetching them into .bench-cache/corpora.
// --rankers hand,learned asks search each question once per ranker ([query] ranker) on the same
// build and prints each one's MRR per set (the first ranker answers query and the figures above).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { prepareBaseline } from "./baseline.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
// --side DIST (internal): the baseline's run, with the build at DIST; its report as JSON on stdout.
const sideDist = opt("--side");
const { ProjectEngine } = await import(path.join(sideDist ?? path.join(root, "dist"), "daemon/engine.js"));
// The whole-file BM25 yardstick splits words the same way on both sides: this build's splitWords.
const { splitWords } = await import(path.join(root, "dist/daemon/index/text.js"));
const baseRef = opt("--baseline") ?? "none";
const corporaDir = opt("--corpora") && path.resolve(opt("--corpora"));
const corpusDir = (name, c) => (corporaDir ? path.join(corporaDir, name) : path.join(root, c.dir));
// Each side and corpora directory builds in its own copy, so runs do not share an index.
const workDir = (name) => path.join(root, ".bench-cache/work", [corporaDir && path.basename(corporaDir), sideDist && path.basename(path.dirname(sideDist))].filter(Boolean).join("-"), name);
const setFiles = args.flatMap((a, i) => (args[i - 1] === "--questions" ? [path.resolve(a)] : []));
const sets = (setFiles.length ? setFiles : ["questions.json", "dev.json", "heldout.json", "languages-c.json", "languages-ruby.json", "languages-php.json", "languages-csharp.json", "languages-kotlin.json", "languages-swift.json", "languages-scala.json", "languages-lua.json", "languages-dart.json", "languages-zig.json", "languages-elixir.json", "languages-haskell.json", "languages-bash.json"].map((f) => path.join(root, "test/bench/retrieval", f))).map((file) => {
  const spec = JSON.parse(fs.readFileSync(file, "utf8"));
  return { name: path.basename(file, ".json"), spec };
});
const onlyCorpus = opt("--corpus");
const rankers = opt("--rankers")?.split(",") ?? [];
const corpora = { ...Object.assign({}, ...sets.map((s) => s.spec.corpora)) };

if (!corporaDir && !sideDist) execFileSync("bash", [path.join(root, "scripts/fetch-corpora.sh"), ...(onlyCorpus ? [onlyCorpus] : [])], { stdio: ["ignore", "ignore", "inherit"] });

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
// A search result is a gold symbol when its name or qualified name ends in one, by the last segment
// (`Command.parse_args`, `Ky.#fetch`, `cxxopts::values::parse_value` match `parse_args`, `fetch`, `parse_value`).
const lastSegment = (s) => s.split(/::|\.|#/).pop();
const isGoldSymbol = (r, symbols) => symbols.some((g) => lastSegment(g) === lastSegment(r.name) || lastSegment(g) === lastSegment(r.qualified_name));
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const report = { corpora: {}, sets: {} };
for (const s of sets) report.sets[s.name] = { corpora: {}, overall: {} };

for (const [name, c] of Object.entries(corpora)) {
  if (onlyCorpus && name !== onlyCorpus) continue;
  const work = workDir(name);
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(corpusDir(name, c), work, { recursive: true });
  const engine = await ProjectEngine.open(work, { sideEffects: false });
  const built = await engine.build({ project_path: work, force: true });
  const files = new Map([...(await engine.retriever()).files].map(([p, f]) => [p, f.tokens]));
  // Baseline 2's index: whole-file BM25 (FTS5 over the split words of each file).
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE f USING fts5(path UNINDEXED, body, tokenize='porter unicode61')");
  const ins = db.prepare("INSERT INTO f(path, body) VALUES (?, ?)");
  for (const p of files.keys()) ins.run(p, splitWords(fs.readFileSync(path.join(work, p), "utf8")).join(" "));
  const bm = db.prepare("SELECT path FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 3");

  const latency = { query: [], search: [] };
  let warm = false;
  for (const set of sets) {
    const qs = set.spec.questions.filter((q) => q.corpus === name);
    if (qs.length === 0) continue;
    if (!warm) {
      await engine.query({ project_path: work, question: qs[0].question });
      warm = true;
    }
    const rows = [];
    for (const q of qs) {
      let t = performance.now();
      const a = await engine.query({ project_path: work, question: q.question });
      latency.query.push(performance.now() - t);
      t = performance.now();
      const s = await engine.search({ project_path: work, query: q.question, limit: 10 });
      latency.search.push(performance.now() - t);
      const byRanker = {};
      if (rankers.length) {
        const r = await engine.retriever();
        const own = r.rankBy;
        for (const kind of rankers) {
          r.rankBy = { ...own, kind };
          const sr = await engine.search({ project_path: work, query: q.question, limit: 10 });
          const k = sr.results.findIndex((x) => q.gold_files.includes(x.file_path));
          byRanker[kind] = k >= 0 ? 1 / (k + 1) : 0;
        }
        r.rankBy = own;
      }
      const cited = new Set(a.citations.map((x) => x.file_path));
      const recall = q.gold_files.filter((g) => cited.has(g)).length / q.gold_files.length;
      const rank = s.results.findIndex((r) => q.gold_files.includes(r.file_path));
      const symbolRank = q.gold_symbols ? s.results.findIndex((r) => q.gold_files.includes(r.file_path) && isGoldSymbol(r, q.gold_symbols)) : -1;
      // What search put above the gold file (at most 3): which code beats the answer.
      const outranked_by = [...new Set(s.results.slice(0, rank >= 0 ? rank : 3).map((r) => r.file_path))].slice(0, 3);
      rows.push({ id: q.id, recall, rr: rank >= 0 ? 1 / (rank + 1) : 0, srr: symbolRank >= 0 ? 1 / (symbolRank + 1) : 0, tokens: a.tokens, files: cited.size, ...(outranked_by.length ? { outranked_by } : {}), ...(rankers.length ? { by_ranker: byRanker } : {}) });
    }
    // Baseline 2: top-3 files pasted in rank order until codemem's mean budget is spent; a file counts if any of it made it in.
    const budget = Math.round(mean(rows.map((r) => r.tokens)));
    const bmRows = qs.map((q) => {
      const words = [...new Set(splitWords(q.question).filter((w) => w.length > 2))];
      const top = words.length ? bm.all(words.map((w) => `"${w}"`).join(" OR ")).map((r) => r.path) : [];
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
    report.sets[set.name].corpora[name] = {
      questions: qs.length,
      codemem: {
        recall: mean(rows.map((r) => r.recall)),
        mrr: mean(rows.map((r) => r.rr)),
        symbol_mrr: mean(rows.map((r) => r.srr)),
        mean_tokens: mean(rows.map((r) => r.tokens)),
        mean_files_cited: mean(rows.map((r) => r.files)),
        max_files_cited: Math.max(...rows.map((r) => r.files)),
      },
      bm25_top3: { recall: mean(bmRows.map((r) => r.recall)), mrr: mean(bmRows.map((r) => r.rr)), mean_tokens: mean(bmRows.map((r) => r.tokens)), mean_files_cited: mean(bmRows.map((r) => r.files)) },
      misses: rows.filter((r) => r.recall < 1).map((r) => r.id),
      ...(rankers.length ? { mrr_by_ranker: Object.fromEntries(rankers.map((k) => [k, mean(rows.map((r) => r.by_ranker[k]))])) } : {}),
      rows,
      bm25_rows: bmRows,
    };
  }
  report.corpora[name] = {
    files: files.size,
    nodes: built.node_count,
    build_s: built.time_elapsed,
    whole_files_tokens: [...files.values()].reduce((a, b) => a + b, 0),
    query_p50_ms: pct(latency.query, 0.5),
    search_p50_ms: pct(latency.search, 0.5),
    queries_timed: latency.query.length,
  };
  db.close();
  await engine.close();
}

// Latency on a 10,000-node index (the target's size): the python-stdlib files in path order up to
// 10,000 nodes, asked every stdlib question (answers need not be right for the timing).
const LATENCY_NODES = 10_000;
if (corpora["python-stdlib"] && (!onlyCorpus || onlyCorpus === "python-stdlib") && !sideDist) {
  const full = workDir("python-stdlib");
  const engine = await ProjectEngine.open(full, { sideEffects: false });
  const perFile = new Map();
  for (const n of (await engine.retriever()).nodes) perFile.set(n.file_path, (perFile.get(n.file_path) ?? 0) + 1);
  await engine.close();
  const work = workDir("latency-10k");
  fs.rmSync(work, { recursive: true, force: true });
  let nodes = 0;
  for (const f of [...perFile.keys()].sort()) {
    if (nodes + perFile.get(f) > LATENCY_NODES) continue;
    nodes += perFile.get(f);
    fs.mkdirSync(path.dirname(path.join(work, f)), { recursive: true });
    fs.copyFileSync(path.join(corpusDir("python-stdlib", corpora["python-stdlib"]), f), path.join(work, f));
  }
  const e = await ProjectEngine.open(work, { sideEffects: false });
  const built = await e.build({ project_path: work, force: true });
  const questions = sets.flatMap((x) => x.spec.questions.filter((q) => q.corpus === "python-stdlib").map((q) => q.question));
  await e.query({ project_path: work, question: questions[0] });
  const lat = { query: [], search: [] };
  for (let rep = 0; rep < 3; rep++) {
    for (const q of questions) {
      let t = performance.now();
      await e.query({ project_path: work, question: q });
      lat.query.push(performance.now() - t);
      t = performance.now();
      await e.search({ project_path: work, query: q, limit: 10 });
      lat.search.push(performance.now() - t);
    }
  }
  await e.close();
  report.latency_10k = { nodes: built.node_count, files: built.files_indexed, calls: lat.query.length, query_p50_ms: pct(lat.query, 0.5), query_p95_ms: pct(lat.query, 0.95), search_p50_ms: pct(lat.search, 0.5), search_p95_ms: pct(lat.search, 0.95) };
}

for (const set of Object.values(report.sets)) {
  const rows = Object.values(set.corpora).flatMap((c) => c.rows);
  const bmRows = Object.values(set.corpora).flatMap((c) => c.bm25_rows);
  set.overall = {
    questions: rows.length,
    codemem: { recall: mean(rows.map((r) => r.recall)), mrr: mean(rows.map((r) => r.rr)), mean_tokens: mean(rows.map((r) => r.tokens)), mean_files_cited: mean(rows.map((r) => r.files)), max_files_cited: Math.max(...rows.map((r) => r.files)), lowest_corpus_recall: Math.min(...Object.values(set.corpora).map((c) => c.codemem.recall)) },
    bm25_top3: { recall: mean(bmRows.map((r) => r.recall)), mrr: mean(bmRows.map((r) => r.rr)) },
    ...(rankers.length ? { mrr_by_ranker: Object.fromEntries(rankers.map((k) => [k, mean(rows.map((r) => r.by_ranker[k]))])) } : {}),
  };
  for (const c of Object.values(set.corpora)) delete c.bm25_rows;
}

if (sideDist) {
  console.log(JSON.stringify(report));
  process.exit(0);
}
if (baseRef !== "none") {
  const dist = prepareBaseline(baseRef);
  // The same arguments but the baseline's and --json: the child prints its report as JSON.
  const forward = args.filter((a, i) => a !== "--json" && a !== "--baseline" && args[i - 1] !== "--baseline");
  console.error(`bench-retrieval: the same sets with the code at ${baseRef} …`);
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--side", dist, ...forward], { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8", maxBuffer: 1 << 28 });
  const side = JSON.parse(out.trim().split("\n").pop());
  report.baseline = { ref: baseRef, dist, corpora: side.corpora, sets: side.sets };
}

if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));
else {
  const f = (x) => (typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(3)) : String(x));
  for (const [name, c] of Object.entries(report.corpora)) {
    console.log(`\n== ${name}: ${c.files} files, ${c.nodes} nodes, build ${c.build_s}s; whole files ${c.whole_files_tokens} tokens; warm query p50 ${f(c.query_p50_ms)} ms, search p50 ${f(c.search_p50_ms)} ms (${c.queries_timed} questions)`);
    for (const [setName, set] of Object.entries(report.sets)) {
      const s = set.corpora[name];
      if (!s) continue;
      console.log(`  ${setName.padEnd(10)} ${String(s.questions).padStart(3)} q  codemem recall ${f(s.codemem.recall)} MRR ${f(s.codemem.mrr)} tokens ${f(s.codemem.mean_tokens)} files ${f(s.codemem.mean_files_cited)} (max ${s.codemem.max_files_cited})  |  BM25 top-3 recall ${f(s.bm25_top3.recall)} MRR ${f(s.bm25_top3.mrr)} tokens ${f(s.bm25_top3.mean_tokens)}${s.misses.length ? `  |  misses: ${s.misses.join(" ")}` : ""}`);
    }
  }
  const l = report.latency_10k;
  if (l) console.log(`\n== warm latency on a ${l.nodes}-node index (${l.files} stdlib files), ${l.calls} calls each: query p50 ${f(l.query_p50_ms)} ms (p95 ${f(l.query_p95_ms)}), search p50 ${f(l.search_p50_ms)} ms (p95 ${f(l.search_p95_ms)})  [targets: query p50 <= 30 ms, search p50 <= 15 ms]`);
  console.log("");
  for (const [setName, set] of Object.entries(report.sets)) {
    const o = set.overall;
    console.log(`== ${setName} (${o.questions} questions): codemem recall ${f(o.codemem.recall)} (lowest corpus ${f(o.codemem.lowest_corpus_recall)}) MRR ${f(o.codemem.mrr)} tokens ${f(o.codemem.mean_tokens)} files ${f(o.codemem.mean_files_cited)} (max ${o.codemem.max_files_cited}) | BM25 top-3 recall ${f(o.bm25_top3.recall)} MRR ${f(o.bm25_top3.mrr)}`);
  }
  if (rankers.length) {
    console.log(`\n== search MRR by ranker (${rankers.join(" | ")}), the same build`);
    for (const [setName, set] of Object.entries(report.sets)) {
      for (const [name, c] of [...Object.entries(set.corpora), ["overall", set.overall]]) {
        if (!c.mrr_by_ranker) continue;
        console.log(`  ${setName.padEnd(20)} ${name.padEnd(20)} ${String(c.questions).padStart(3)} q  ${rankers.map((k) => f(c.mrr_by_ranker[k])).join(" | ")}`);
      }
    }
  }
  const b = report.baseline;
  if (b) {
    console.log(`\n== this build vs ${b.ref} (same corpora): recall, MRR, mean tokens, mean files cited`);
    const pair = (x, y, key) => `${f(x[key])} | ${f(y[key])}`.padEnd(17);
    for (const [setName, set] of Object.entries(report.sets)) {
      const rows = [...Object.entries(set.corpora).map(([name, c]) => [name, c.questions, c.codemem, b.sets[setName].corpora[name].codemem]), ["overall", set.overall.questions, set.overall.codemem, b.sets[setName].overall.codemem]];
      for (const [name, q, cur, base] of rows) {
        console.log(`  ${setName.padEnd(20)} ${name.padEnd(20)} ${String(q).padStart(3)} q  recall ${pair(cur, base, "recall")} MRR ${pair(cur, base, "mrr")} tokens ${pair(cur, base, "mean_tokens")} files ${pair(cur, base, "mean_files_cited")}`);
      }
    }
  }
}
