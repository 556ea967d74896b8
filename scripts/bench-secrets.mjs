#!/usr/bin/env node
// Secret-scan benchmark: throughput (MB/s) of scanProject on the real corpora, with the findings
// by kind (a source tree like the Python stdlib should give few; each is listed for review).
// Usage: npm run build && node scripts/bench-secrets.mjs [--corpus python-stdlib] [--json] [--list]
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const { scanProject } = await import(path.join(root, "dist/daemon/secrets/scan.js"));
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const json = process.argv.includes("--json");
const list = process.argv.includes("--list");
const corpora = arg("--corpus") ? [arg("--corpus")] : ["python-stdlib", "go-net", "rxjs"];

function bytesOf(dir) {
  let total = 0;
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === ".git" || e.name === "node_modules") continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) total += fs.statSync(p).size;
    }
  };
  walk(dir);
  return total;
}

const results = [];
for (const name of corpora) {
  const dir = path.join(root, ".bench-cache/corpora", name);
  if (!fs.existsSync(dir)) {
    console.error(`${name}: missing (run bash scripts/fetch-corpora.sh)`);
    continue;
  }
  const bytes = bytesOf(dir);
  scanProject(dir, {}); // warm the file cache
  const runs = [];
  let r;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    r = scanProject(dir, {});
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  const ms = runs[1];
  const kinds = {};
  for (const f of r.findings) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
  const filesWith = new Set(r.findings.map((f) => f.file)).size;
  results.push({ corpus: name, mb: +(bytes / 1e6).toFixed(1), files_scanned: r.files_scanned, skipped: r.skipped, ms: Math.round(ms), mb_per_s: +(bytes / 1e6 / (ms / 1000)).toFixed(1), findings: r.findings.length, files_with_findings: filesWith, kinds, ...(list ? { list: r.findings } : {}) });
}
if (json) console.log(JSON.stringify(results, null, 2));
else
  for (const x of results) {
    console.log(`${x.corpus}: ${x.mb} MB, ${x.files_scanned} files scanned (${x.skipped} skipped) in ${x.ms} ms = ${x.mb_per_s} MB/s; ${x.findings} findings in ${x.files_with_findings} files ${JSON.stringify(x.kinds)}`);
    if (list) for (const f of x.list) console.log(`  ${f.file}:${f.line} ${f.kind} ${f.preview}`);
  }
