#!/usr/bin/env node
// Build benchmark on real source trees: graph extraction throughput (2 workers vs. 1 as baseline),
// full build with the default embedder (peak RSS), and re-index time after changing one file.
// Usage: npm run bench:build [-- --json]
import fs from "node:fs";
import path from "node:path";
import { execFileSync, spawnSync } from "node:child_process";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const dist = (p) => path.join(root, "dist", p);
const corpora = ["python-stdlib", "go-net", "rxjs", "tree-sitter-c", "leveldb"];
const json = process.argv.includes("--json");

if (process.argv[2] === "--child-build") {
  // Child mode: one full build, reports time and peak RSS of this process.
  const { ProjectEngine } = await import(dist("daemon/engine.js"));
  const dir = process.argv[3];
  const e = await ProjectEngine.open(dir, { sideEffects: false });
  const r = await e.build({ project_path: dir, force: true });
  const buildPeak = Math.round(process.resourceUsage().maxRSS / 1024);
  // Re-index after one edit, five times.
  const files = [...(await e.retriever()).files.values()].filter((f) => f.size > 4000 && f.size < 40000);
  const times = [];
  for (let i = 0; i < 5; i++) {
    const f = files[(i * 7919) % files.length];
    const abs = path.join(dir, f.path);
    const lang = f.language;
    const addition = lang === "python" ? `\n\ndef bench_added_${i}():\n    return ${i}\n` : lang === "go" ? `\n\nfunc benchAdded${i}() int { return ${i} }\n` : lang === "c" || lang === "cpp" ? `\n\nint bench_added_${i}(void) { return ${i}; }\n` : `\n\nexport function benchAdded${i}(): number { return ${i}; }\n`;
    fs.appendFileSync(abs, addition);
    const t = new Date(Date.now() + 1000 * (i + 1));
    fs.utimesSync(abs, t, t);
    const t0 = performance.now();
    await e.build({ project_path: dir });
    times.push(performance.now() - t0);
  }
  await e.close();
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ build_s: r.time_elapsed, nodes: r.node_count, edges: r.edge_count, communities: r.communities, files: r.files_indexed, peak_rss_mb: buildPeak, peak_rss_with_incremental_mb: Math.round(process.resourceUsage().maxRSS / 1024), reindex_ms_p50: times[2], reindex_ms_max: times[4] }));
  process.exit(0);
}

execFileSync("bash", [path.join(root, "scripts/fetch-corpora.sh")], { stdio: ["ignore", "ignore", "inherit"] });
const { ParsePool } = await import(dist("daemon/index/parse-pool.js"));
const { resolveGraph } = await import(dist("daemon/index/resolve.js"));
const { discover, inspectContent } = await import(dist("daemon/index/walk.js"));
const { resolveConfig } = await import(dist("shared/config.js"));

const report = {};
for (const name of corpora) {
  const src = path.join(root, ".bench-cache/corpora", name);
  const work = path.join(root, ".bench-cache/work", `build-${name}`);
  fs.rmSync(work, { recursive: true, force: true });
  fs.cpSync(src, work, { recursive: true });
  const cfg = resolveConfig(work);
  const jobs = [];
  let bytes = 0;
  for (const f of discover(cfg).files) {
    const buf = fs.readFileSync(f.abs);
    if (inspectContent(f.path, buf)) continue;
    bytes += buf.length;
    jobs.push({ path: f.path, language: f.language.id, source: buf.toString("utf8") });
  }
  const extraction = {};
  for (const workers of [1, 2]) {
    const pool = new ParsePool(workers);
    await pool.extractAll(jobs.slice(0, 30)); // warm the grammars
    const t0 = performance.now();
    const { extracts } = await pool.extractAll(jobs);
    const g = resolveGraph(extracts);
    const s = (performance.now() - t0) / 1000;
    await pool.close();
    extraction[workers] = { seconds: s, mb_per_s: bytes / 1048576 / s, files_per_s: jobs.length / s, nodes_per_s: g.nodes.length / s, nodes: g.nodes.length, calls: g.edges.filter((e) => e.type === "calls").length };
  }
  const child = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--child-build", work], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const full = JSON.parse(child.stdout.trim().split("\n").pop());
  report[name] = { files: jobs.length, mb: bytes / 1048576, extraction, full };
}

// Resolution on large synthetic Go and Java projects (packages of 10 files, each file importing 10
// other packages and calling one function of each): the time should grow with the file count.
function synthetic(lang, files) {
  const packages = files / 10;
  const ext = lang === "go" ? "go" : "java";
  const out = [];
  for (let p = 0; p < packages; p++) {
    for (let f = 0; f < 10; f++) {
      const def = (name) => ({ kind: lang === "go" ? "function" : "method", name, qualifiedName: name, lineStart: 1, lineEnd: 2, signature: name, docstring: "", parent: -1, bases: [], code: "" });
      const imports = [];
      const calls = [];
      for (let k = 1; k <= 10; k++) {
        const q = (p + k * 7) % packages;
        imports.push({ module: lang === "go" ? `example.com/m/pkg${q}` : `com.example.pkg${q}`, names: [], alias: `pkg${q}`, line: 1 });
        calls.push({ caller: 0, name: `Work${q}_${k % 10}`, receiver: `pkg${q}`, line: 2 });
      }
      const path = lang === "go" ? `pkg${p}/f${f}.go` : `com/example/pkg${p}/F${f}.${ext}`;
      out.push({ path, language: lang, packageName: lang === "go" ? `pkg${p}` : `com.example.pkg${p}`, moduleDoc: "", lineCount: 3, defs: [def(`Work${p}_${f}`)], calls, imports, tokens: 10 });
    }
  }
  return out;
}
const scaling = {};
for (const lang of ["go", "java"]) {
  scaling[lang] = {};
  for (const files of [1000, 4000]) {
    const ex = synthetic(lang, files);
    const t0 = performance.now();
    const g = resolveGraph(ex);
    scaling[lang][files] = { ms: performance.now() - t0, edges: g.edges.length };
  }
}
report.resolve_scaling = scaling;

if (json) console.log(JSON.stringify(report, null, 2));
else {
  const f = (x, d = 1) => x.toFixed(d);
  for (const [name, r] of Object.entries(report)) {
    if (name === "resolve_scaling") continue;
    const e1 = r.extraction[1];
    const e2 = r.extraction[2];
    console.log(`\n== ${name}: ${r.files} files, ${f(r.mb, 2)} MB`);
    console.log(`  graph extraction (parse + definitions + resolved calls), 2 workers: ${f(e2.mb_per_s, 2)} MB/s, ${f(e2.files_per_s, 0)} files/s, ${f(e2.nodes_per_s, 0)} nodes/s (${e2.nodes} nodes, ${e2.calls} resolved calls)   [target ≥ 4 MB/s]`);
    console.log(`    baseline, 1 worker:                                       ${f(e1.mb_per_s, 2)} MB/s, ${f(e1.files_per_s, 0)} files/s, ${f(e1.nodes_per_s, 0)} nodes/s`);
    console.log(`  full build, default embedder: ${r.full.build_s} s (${r.full.nodes} nodes, ${r.full.edges} edges, ${r.full.communities} communities), peak RSS ${r.full.peak_rss_mb} MB (${r.full.peak_rss_with_incremental_mb} MB by the end of the five re-indexes below, warm retriever and build cache resident)   [targets: stdlib ≤ 20 s, ≤ 600 MB]`);
    console.log(`  re-index after changing one file: p50 ${f(r.full.reindex_ms_p50, 0)} ms, max ${f(r.full.reindex_ms_max, 0)} ms (vs. full build ${f(r.full.build_s * 1000, 0)} ms)   [target ≤ 300 ms]`);
  }
  console.log("\n== resolution of synthetic Go and Java projects (10 imports and calls per file); 4× the files should take about 4× the time");
  for (const [lang, r] of Object.entries(report.resolve_scaling)) {
    console.log(`  ${lang}: 1000 files ${f(r[1000].ms, 0)} ms (${r[1000].edges} edges), 4000 files ${f(r[4000].ms, 0)} ms (${r[4000].edges} edges): ×${f(r[4000].ms / r[1000].ms, 1)}`);
  }
}
