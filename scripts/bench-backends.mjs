#!/usr/bin/env node
// Build and query figures for every storage backend on the same corpus, in one run:
// full build, re-index after one edit, search and query latency, retrieval quality on the
// corpus's frozen questions, index size. The local backend is the baseline.
//   node scripts/bench-backends.mjs [--corpus go-net] [--json]
// Postgres: the server of scripts/setup-postgres.sh (or CODEMEM_TEST_PG_URL + CODEMEM_TEST_PG_PASSWORD_FILE).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const corpus = opt("--corpus") ?? "go-net";
const { ProjectEngine } = await import(path.join(root, "dist/daemon/engine.js"));
const { resolveConfig } = await import(path.join(root, "dist/shared/config.js"));

execFileSync("bash", [path.join(root, "scripts/fetch-corpora.sh")], { stdio: ["ignore", "ignore", "inherit"] });
const spec = JSON.parse(fs.readFileSync(path.join(root, "test/bench/retrieval/questions.json"), "utf8"));
const questions = spec.questions.filter((q) => q.corpus === corpus);
const src = path.join(root, spec.corpora[corpus].dir);
const pgUrl = process.env.CODEMEM_TEST_PG_URL || "postgres://codemem@127.0.0.1:5432/codemem_test";
const pgPasswordFile = process.env.CODEMEM_TEST_PG_PASSWORD_FILE || "/tmp/codemem-pg-password";

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const r1 = (x) => Math.round(x * 10) / 10;

const tomlFor = {
  local: '[store]\nbackend = "local"\n',
  lancedb: '[store]\nbackend = "lancedb"\n',
  postgres: `[store]\nbackend = "postgres"\ndb_url = "${pgUrl}"\npassword_file = "${pgPasswordFile}"\nproject = "bench_backends_${corpus.replace(/\W/g, "_")}"\n`,
};

async function dropPostgresSchema(dir) {
  const s = resolveConfig(dir).store;
  const pg = (await import("pg")).default;
  const u = new URL(s.dbUrl);
  u.password = s.password ?? "";
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS "${s.schema}" CASCADE`);
  await c.end();
}

const report = { corpus, questions: questions.length, backends: {} };
for (const backend of ["local", "postgres", "lancedb"]) {
  const work = path.join(root, ".bench-cache/work", `backends-${backend}`);
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(src, work, { recursive: true });
  fs.writeFileSync(path.join(work, "codemem.toml"), tomlFor[backend]);
  process.stderr.write(`bench-backends: ${backend}…\n`);
  const engine = await ProjectEngine.open(work, { sideEffects: false });
  try {
    let t = performance.now();
    const built = await engine.build({ project_path: work, force: true });
    const buildS = (performance.now() - t) / 1000;

    // Re-index after one edit, three times (different files).
    const files = [...(await engine.retriever()).files.values()].filter((f) => f.size > 4000 && f.size < 40000);
    const reindex = [];
    for (let i = 0; i < 3; i++) {
      const f = files[(i * 7919) % files.length];
      fs.appendFileSync(path.join(work, f.path), `\n\nfunc benchAdded${i}() int { return ${i} }\n`);
      const when = new Date(Date.now() + 1000 * (i + 1));
      fs.utimesSync(path.join(work, f.path), when, when);
      t = performance.now();
      await engine.build({ project_path: work });
      reindex.push(performance.now() - t);
    }

    await engine.query({ project_path: work, question: questions[0].question }); // warm
    const searchMs = [], queryMs = [], recall = [], rr = [];
    for (const q of questions) {
      t = performance.now();
      const a = await engine.query({ project_path: work, question: q.question });
      queryMs.push(performance.now() - t);
      t = performance.now();
      const s = await engine.search({ project_path: work, query: q.question, limit: 10 });
      searchMs.push(performance.now() - t);
      const cited = new Set(a.citations.map((c) => c.file_path));
      recall.push(q.gold_files.filter((g) => cited.has(g)).length / q.gold_files.length);
      const rank = s.results.findIndex((r) => q.gold_files.includes(r.file_path));
      rr.push(rank >= 0 ? 1 / (rank + 1) : 0);
    }
    const st = await engine.stats({ project_path: work });
    report.backends[backend] = {
      location: st.index_path,
      nodes: built.node_count,
      full_build_s: r1(buildS),
      reindex_one_file_p50_ms: Math.round(pct(reindex, 50)),
      search_p50_ms: r1(pct(searchMs, 50)),
      search_p95_ms: r1(pct(searchMs, 95)),
      query_p50_ms: r1(pct(queryMs, 50)),
      recall: Math.round(mean(recall) * 1000) / 1000,
      mrr: Math.round(mean(rr) * 1000) / 1000,
      index_mb: r1(st.index_bytes / 1e6),
    };
  } finally {
    await engine.close();
    if (backend === "postgres") await dropPostgresSchema(work);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (args.includes("--json")) console.log(JSON.stringify(report, null, 2));
else {
  console.log(`\n== backends on ${corpus} (${report.questions} frozen questions); local is the baseline`);
  console.log("backend   nodes  full build  re-index p50  search p50/p95   query p50  recall  MRR    index");
  for (const [name, b] of Object.entries(report.backends)) {
    console.log(
      `${name.padEnd(9)} ${String(b.nodes).padStart(5)}  ${String(b.full_build_s).padStart(7)} s  ${String(b.reindex_one_file_p50_ms).padStart(8)} ms  ${String(b.search_p50_ms).padStart(6)} / ${String(b.search_p95_ms).padEnd(6)} ms  ${String(b.query_p50_ms).padStart(6)} ms  ${b.recall.toFixed(3)}  ${b.mrr.toFixed(3)}  ${b.index_mb} MB`,
    );
  }
}
