#!/usr/bin/env node
// Daemon latency benchmark: `node scripts/bench-daemon.mjs [--fresh] [--keep]`.
// Needs `npx tsc -p .` and `bash scripts/fetch-corpora.sh` first. Builds the python-stdlib
// corpus without CPython's test suite, the tree its targets were set on (copied to
// .bench-cache/work/daemon-bench-stdlib-without-tests), through an autostarted daemon, then
// measures raw socket round trips, RSS at rest, save→search latency and CLI wall time. Large
// trees: bench:scale.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { copyStdlibWithoutTests } from "./corpora.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(repo, "dist");
if (!fs.existsSync(path.join(dist, "client/rpc.js"))) {
  console.error("bench-daemon: dist/client/rpc.js is missing; run `npx tsc -p .` first.");
  process.exit(1);
}
const { callDaemon, closeConnections, daemonStatus, stopDaemon } = await import(path.join(dist, "client/rpc.js"));
const { socketPathFor } = await import(path.join(dist, "client/socket-path.js"));

const args = new Set(process.argv.slice(2));
const corpus = path.join(repo, ".bench-cache/corpora/python-stdlib");
const work = path.join(repo, ".bench-cache/work/daemon-bench-stdlib-without-tests");
if (!fs.existsSync(corpus)) {
  console.error(`bench-daemon: ${corpus} is missing; run \`bash scripts/fetch-corpora.sh\` first.`);
  process.exit(1);
}

const TARGETS = { stats_p50_ms: 5, query_p50_ms: 30, cli_p50_ms: 250, save_to_search_p50_ms: 1000, rss_mb: 400 };
const QUESTIONS = [
  "how does json encode floats",
  "where are HTTP headers parsed",
  "how does logging format a record",
  "how are email messages split into parts",
  "how does the url parser split a netloc",
  "how are regular expressions compiled",
];

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const r2 = (x) => Math.round(x * 100) / 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssMbOf = (pid) => {
  const m = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
};

/** A bare NDJSON client on one socket: one request at a time, timed end to end. */
async function rawClient(socket) {
  const sock = net.createConnection(socket);
  await new Promise((res, rej) => sock.once("connect", res).once("error", rej));
  let buf = "";
  let waiting;
  sock.on("data", (d) => {
    buf += d;
    const nl = buf.indexOf("\n");
    if (nl >= 0 && waiting) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const w = waiting;
      waiting = undefined;
      w(JSON.parse(line));
    }
  });
  let id = 0;
  return {
    async call(op, input) {
      const t = performance.now();
      const reply = await new Promise((res) => {
        waiting = res;
        sock.write(JSON.stringify({ id: ++id, op, input, client: { pid: process.pid, source: "bench" } }) + "\n");
      });
      const ms = performance.now() - t;
      if (!reply.ok) throw new Error(`${op}: ${reply.error.code}: ${reply.error.message}`);
      return { ms, result: reply.result };
    },
    close: () => sock.destroy(),
  };
}

// 1. Project and index.
if (args.has("--fresh") || !fs.existsSync(work)) {
  if (fs.existsSync(work)) await stopDaemon(work).catch(() => {});
  copyStdlibWithoutTests(corpus, work);
}
let t = performance.now();
await callDaemon(work, "ping", {}, { source: "bench" });
const startMs = performance.now() - t;
t = performance.now();
const built = await callDaemon(work, "build", { project_path: work }, { source: "bench" });
const buildMs = performance.now() - t;
console.log(`index of the stdlib without CPython's test suite: ${built.node_count} nodes, ${built.files_indexed} files (daemon start ${Math.round(startMs)} ms, build ${Math.round(buildMs)} ms, ${built.files_changed} files changed)`);
await sleep(2000);
const rssAfterBuildMb = rssMbOf((await daemonStatus(work)).pid);

// The steady state: a daemon started on an existing index (what a login service or autostart gives).
await stopDaemon(work);
t = performance.now();
await callDaemon(work, "ping", {}, { source: "bench" });
const restartMs = performance.now() - t;

// 2. Raw socket round trips.
const c = await rawClient(socketPathFor(work));
for (let i = 0; i < 20; i++) {
  await c.call("stats", { project_path: work });
  await c.call("query", { project_path: work, question: QUESTIONS[i % QUESTIONS.length] });
}
const statsMs = [];
for (let i = 0; i < 200; i++) statsMs.push((await c.call("stats", { project_path: work })).ms);
const queryMs = [];
for (let i = 0; i < 200; i++) queryMs.push((await c.call("query", { project_path: work, question: QUESTIONS[i % QUESTIONS.length] })).ms);

// 3. RSS at rest.
await sleep(2000);
const status = await daemonStatus(work);
const rssMb = rssMbOf(status.pid);

// 4. Save → search reflects it.
for (let i = 0; i < 100 && !(await daemonStatus(work)).watcher?.ready; i++) await sleep(100);
const editFile = path.join(work, "json", "encoder.py");
const original = fs.readFileSync(editFile, "utf8");
const saveMs = [];
try {
  for (let i = 0; i < 10; i++) {
    const fn = `bench_saved_fn_${i}_${Date.now().toString(36)}`;
    const started = performance.now();
    fs.writeFileSync(editFile, `${original}\n\ndef ${fn}(value):\n    """Added by the daemon benchmark."""\n    return value\n`);
    for (;;) {
      const { result } = await c.call("search", { project_path: work, query: fn, limit: 5 });
      if (result.results.some((h) => h.name === fn)) break;
      if (performance.now() - started > 15_000) throw new Error(`search did not reflect ${fn} within 15 s`);
      await sleep(20);
    }
    saveMs.push(performance.now() - started);
    await sleep(400);
  }
} finally {
  fs.writeFileSync(editFile, original);
}
c.close();
// Let the restore's rebuild finish so it does not land inside the CLI timings.
await sleep(500);
for (let i = 0; i < 100; i++) {
  const w = (await daemonStatus(work)).watcher;
  if (!w || (!w.building && w.pending.length === 0)) break;
  await sleep(100);
}

// 5. Full CLI invocation, when the CLI exists.
const cli = path.join(dist, "client/cli.js");
const cliMs = [];
let cliNote = "";
if (fs.existsSync(cli)) {
  try {
    for (let i = 0; i < 22; i++) {
      const s = performance.now();
      execFileSync(process.execPath, [cli, "stats", work, "--json"], { stdio: ["ignore", "pipe", "pipe"] });
      if (i >= 2) cliMs.push(performance.now() - s); // two warm-up runs (disk cache)
    }
  } catch (err) {
    cliNote = `CLI failed: ${String(err.stderr ?? err.message).split("\n")[0]}`;
  }
} else cliNote = "dist/client/cli.js not built yet";

// Report.
const rows = [
  ["stats round trip p50", pct(statsMs, 50), "ms", TARGETS.stats_p50_ms, `p95 ${r2(pct(statsMs, 95))} ms`],
  ["query round trip p50", pct(queryMs, 50), "ms", TARGETS.query_p50_ms, `p95 ${r2(pct(queryMs, 95))} ms`],
  ["daemon RSS at rest", rssMb, "MB", TARGETS.rss_mb, `daemon restarted on the built index (start ${Math.round(restartMs)} ms)`],
  ["RSS right after build", rssAfterBuildMb, "MB", TARGETS.rss_mb, built.files_changed > 0 ? `the daemon that just had ${built.files_changed} files indexed (a whole-tree build runs in a process of its own)` : "build was a no-op; use --fresh for the full-build figure"],
  ["save → search p50", saveMs.length ? pct(saveMs, 50) : NaN, "ms", TARGETS.save_to_search_p50_ms, saveMs.length ? `max ${Math.round(Math.max(...saveMs))} ms over ${saveMs.length} edits` : ""],
  ["CLI `stats --json` p50", cliMs.length ? pct(cliMs, 50) : NaN, "ms", TARGETS.cli_p50_ms, cliMs.length ? `p95 ${Math.round(pct(cliMs, 95))} ms, ${cliMs.length} runs` : cliNote],
];
console.log("");
console.log("metric                    value        target   result  note");
for (const [name, v, unit, target, note] of rows) {
  const verdict = Number.isNaN(v) ? "n/a" : v <= target ? "PASS" : "FAIL";
  console.log(`${name.padEnd(25)} ${`${Number.isNaN(v) ? "-" : r2(v)} ${unit}`.padEnd(12)} ≤ ${`${target} ${unit}`.padEnd(7)} ${verdict.padEnd(7)} ${note}`);
}
const out = {
  nodes: built.node_count,
  files: built.files_indexed,
  build_ms: Math.round(buildMs),
  stats_ms: { p50: r2(pct(statsMs, 50)), p95: r2(pct(statsMs, 95)) },
  query_ms: { p50: r2(pct(queryMs, 50)), p95: r2(pct(queryMs, 95)) },
  rss_mb: r2(rssMb),
  rss_after_full_build_mb: r2(rssAfterBuildMb),
  save_to_search_ms: saveMs.length ? { p50: Math.round(pct(saveMs, 50)), all: saveMs.map(Math.round) } : null,
  cli_ms: cliMs.length ? { p50: Math.round(pct(cliMs, 50)), p95: Math.round(pct(cliMs, 95)) } : cliNote,
  targets: TARGETS,
};
fs.writeFileSync(path.join(repo, ".bench-cache/work/daemon-bench-results.json"), JSON.stringify(out, null, 2));

await closeConnections();
if (!args.has("--keep")) await stopDaemon(work);
