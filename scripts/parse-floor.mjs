#!/usr/bin/env node
// The floor of a build's parse: tree-sitter's parse of every file a build would parse, no query, no
// walk, one thread. Prints {cpu_s, wall_s, files, mb} as JSON: the CPU seconds are what the build's
// CPU time is set against (bench:build, bench:scale).
// Usage: node scripts/parse-floor.mjs <dist> <tree>
import fs from "node:fs";
import path from "node:path";

const [distDir, tree] = process.argv.slice(2);
const load = (p) => import(path.join(path.resolve(distDir), p));
const { discover, inspectContent } = await load("daemon/index/walk.js");
const { resolveConfig } = await load("shared/config.js");
const { Extractor } = await load("daemon/index/extract.js");
const { languageById } = await load("daemon/index/languages/registry.js");

const jobs = [];
let bytes = 0;
for (const f of discover(resolveConfig(tree)).files) {
  const buf = fs.readFileSync(f.abs);
  if (inspectContent(f.path, buf)) continue;
  bytes += buf.length;
  jobs.push({ spec: languageById(f.language.id), source: buf.toString("utf8") });
}
const ex = new Extractor();
// Grammars loaded first: their load is no part of a parse.
for (const id of new Set(jobs.map((j) => j.spec.id))) await ex.parseOnly("", jobs.find((j) => j.spec.id === id).spec);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (const j of jobs) await ex.parseOnly(j.source, j.spec);
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ cpu_s: (cpu.user + cpu.system) / 1e6, wall_s: (performance.now() - t0) / 1000, files: jobs.length, mb: bytes / 1048576 }));
