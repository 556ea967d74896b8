#!/usr/bin/env node
// Scale benchmark: a large real tree through a real daemon, for this build and a baseline build.
//   npm run bench:scale [-- --tree go-src|go-src-x5|all] [--baseline REF|none] [--baseline-large] [--saves N] [--builds N] [--codegraph] [--json]
// --codegraph also times codegraph 1.6.1's `init` of the same tree in the same run (installed apart:
//   npm install --prefix .bench-cache/codegraph @colbymchenry/codegraph@1.6.1).
// --builds N measures the full build N times per side, the sides alternating (N − 1 runs of the
//   build alone, then the full run's): its figures are the medians, with the range beside them (a
//   full build of Go's src moves by 1-2 s from one run to the next on this 2-core host).
// Trees come from scripts/fetch-scale-corpora.sh (Go 1.19's src/ with its tests: ~60K nodes; five
// copies: ~300K). Each side runs in its own process on its own copy of the tree: a full build
// through the daemon, the index's size on disk, daemon RSS at rest, save → searchable over N saves
// in different packages (through the watcher, a client polling search), delete → gone, warm query
// and search latency, search and status latency during a forced rebuild, and the first answer after
// a restart and when its answers are warm (no longer lexical). The baseline is the code at REF
// (default: the commit before the scale work), checked out and compiled under .bench-cache; it runs
// on the large tree only with --baseline-large (it needs several GB and many minutes there).
import { execFileSync, spawn } from "node:child_process";
import Database from "better-sqlite3";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { prepareBaseline } from "./baseline.mjs";
import { CODEGRAPH_VERSION, codegraphCli, codegraphGraph } from "./callgraph/codegraph-graph.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
// The commit before issue 37 (a build answerable before its vectors and tokens).
const BASELINE_REF = "1767967";
const TARGETS = {
  "go-src": { answerable_s: 20, build_s: 30, build_rss_mb: 1000, index_mb: 150, rss_mb: 500, save_p50_ms: 300, save_p95_ms: 600, first_answer_ms: 1500, query_p50_ms: 30, search_p50_ms: 15, during_build_p99_ms: 200 },
  "go-src-x5": { rss_mb: 1500, save_p50_ms: 1000 },
};
/** The figures of a full build (runSide's step 1), which --builds measures more than once. */
const BUILD_FIGURES = ["build_s", "complete_s", "first_answer_after_build_ms", "build_cpu_s", "build_peak_rss_mb"];
const QUESTIONS = [
  "how does the http server handle keep-alive connections",
  "where are TLS certificates verified",
  "how does the garbage collector mark objects",
  "parse a duration string",
  "how are goroutines scheduled onto threads",
  "where is the JSON decoder reading struct tags",
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
/**
 * CPU time a process's threads have run, in ms (their schedstat, in ns). Wall-clock latency on these
 * VMs drifts with the host's load (the same daemon's search p50 moved 13 → 23 ms within minutes);
 * the CPU an answer costs the daemon (every thread, the vector thread's scan included) is a second
 * reading, printed beside the latency. It drifts with the host too, though not with waiting.
 */
const cpuMsOf = (pid) => {
  let ns = 0;
  const tids = new Set();
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
      tids.add(t);
    } catch {
      // the thread ended while we looked
    }
  }
  return { ms: ns / 1e6, tids };
};
/** RSS of a process and its descendants (a daemon's build process counts while it lives), in MB. */
const rssMbOf = (pid) => {
  let kb = 0;
  const visit = (p) => {
    try {
      kb += Number(fs.readFileSync(`/proc/${p}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/)[1]);
      for (const t of fs.readdirSync(`/proc/${p}/task`)) for (const c of fs.readFileSync(`/proc/${p}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) visit(c);
    } catch {
      // exited while we looked
    }
  };
  visit(pid);
  return kb / 1024;
};
/** CPU seconds of a process and its reaped children (utime, stime, cutime, cstime of /proc/pid/stat; 100 ticks a second). */
const processCpuS = (pid) => {
  const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
};
/** Child processes of a process (a daemon's whole-tree build). */
const childrenOf = (pid) => {
  try {
    return fs.readdirSync(`/proc/${pid}/task`).flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(/\s+/).filter(Boolean));
  } catch {
    return [];
  }
};
const duMb = (p) => {
  let total = 0;
  const walk = (q) => {
    const st = fs.statSync(q);
    if (st.isDirectory()) for (const e of fs.readdirSync(q)) walk(path.join(q, e));
    else total += st.size;
  };
  if (fs.existsSync(p)) walk(p);
  return total / 1e6;
};

if (args[0] === "--side") {
  await runSide(args[1], args[2], args[3], Number(opt("--saves", "20")), args.includes("--build-only"));
  process.exit(0);
}

// Coordinator: trees, baseline checkout, one child process per side and tree, then the report.
execFileSync("bash", [path.join(repo, "scripts/fetch-scale-corpora.sh")], { stdio: ["ignore", "ignore", "inherit"] });
const treeArg = opt("--tree", "all");
const trees = treeArg === "all" ? ["go-src", "go-src-x5"] : [treeArg];
const baseRef = opt("--baseline", BASELINE_REF);
const sides = [{ name: "this build", dist: path.join(repo, "dist") }];
if (baseRef !== "none") sides.push({ name: `baseline ${baseRef}`, dist: prepareBaseline(baseRef) });

const results = {};
const floors = {};
const codegraph = {};
const builds = Number(opt("--builds", "1"));
for (const tree of trees) {
  results[tree] = {};
  const corpus = path.join(repo, ".bench-cache/corpora", tree);
  // The parse-only floor of the tree (tree-sitter's parse of every file, no query), in CPU seconds.
  floors[tree] = JSON.parse(execFileSync(process.execPath, [path.join(repo, "scripts/parse-floor.mjs"), path.join(repo, "dist"), corpus], { encoding: "utf8" }).trim().split("\n").pop());
  const treeSides = sides.filter((side) => side.name === "this build" || tree === "go-src" || args.includes("--baseline-large"));
  const workOf = (side) => path.join(repo, ".bench-cache/work", `scale-${tree}-${side.name === "this build" ? "current" : "baseline"}`);
  // --builds: the build alone, N − 1 times per side, the sides taking turns.
  const buildRuns = new Map(treeSides.map((side) => [side.name, []]));
  for (let run = 1; run < builds; run++) {
    for (const side of treeSides) {
      console.error(`bench-scale: ${tree}, ${side.name}, full build ${run} of ${builds} …`);
      buildRuns.get(side.name).push(await child(side.dist, corpus, workOf(side), true));
    }
  }
  for (const side of treeSides) {
    console.error(`bench-scale: ${tree}, ${side.name} …`);
    const full = await child(side.dist, corpus, workOf(side));
    results[tree][side.name] = { ...full, ...medianBuild([...buildRuns.get(side.name), full]), parse_floor_cpu_s: floors[tree].cpu_s };
  }
  // codegraph's first build of the same tree (`codegraph init`), timed in the same run: the bar is 0.4× its time.
  if (args.includes("--codegraph")) {
    console.error(`bench-scale: ${tree}, codegraph ${CODEGRAPH_VERSION} init …`);
    const work = path.join(repo, ".bench-cache/work", `scale-${tree}-codegraph`);
    codegraph[tree] = { seconds: codegraphGraph(codegraphCli(repo), corpus, work).seconds };
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (args.includes("--json")) console.log(JSON.stringify({ ...results, codegraph }, null, 2));
else report(results);

/** A full build's figures (runSide's step 1), each the median of the runs, the runs kept beside them (`build_runs`). */
function medianBuild(runs) {
  const median = (k) => {
    const v = runs.map((r) => r[k]).sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  return { ...Object.fromEntries(BUILD_FIGURES.map((k) => [k, median(k)])), build_runs: runs.map((r) => Object.fromEntries(BUILD_FIGURES.map((k) => [k, r[k]]))) };
}

function child(dist, corpus, work, buildOnly = false) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url), "--side", dist, corpus, work, "--saves", opt("--saves", "20"), ...(buildOnly ? ["--build-only"] : [])], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, CODEMEM_DEBUG: "1" } });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").pop())) : reject(new Error(`side ${dist} exited ${code}`))));
  });
}

/** A bare NDJSON client on the daemon's socket: one request at a time. */
async function rawClient(socket) {
  const sock = net.createConnection(socket);
  await new Promise((res, rej) => sock.once("connect", res).once("error", rej));
  let buf = "";
  let waiting;
  sock.on("data", (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0 && waiting) {
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
      if (!reply.ok) throw new Error(`${op}: ${reply.error.code}: ${reply.error.message}`);
      return { ms: performance.now() - t, result: reply.result };
    },
    close: () => sock.destroy(),
  };
}

async function runSide(dist, corpus, work, saves, buildOnly) {
  const { callDaemon, closeConnections, daemonStatus, stopDaemon } = await import(path.join(dist, "client/rpc.js"));
  const { socketPathFor } = await import(path.join(dist, "client/socket-path.js"));
  const { graphFileBuiltAt } = await import(path.join(dist, "daemon/index/graph-file.js"));
  if (fs.existsSync(work)) await stopDaemon(work).catch(() => {});
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(work), { recursive: true });
  execFileSync("cp", ["-a", corpus, work]);
  fs.rmSync(path.join(work, ".corpus-source"), { force: true });
  const out = {};
  const idle = async () => {
    for (let i = 0; i < 600; i++) {
      const s = await daemonStatus(work);
      // caught_up: the catch-up build after a start is done (a baseline without the field counts as done).
      if (s.watcher?.ready && s.watcher.caught_up !== false && !s.watcher.building && s.watcher.pending.length === 0 && !s.build) return s;
      await sleep(100);
    }
    throw new Error("the daemon did not settle within 60 s");
  };

  /** Waits until stats no longer says what is being filled in (a baseline without `filling` is complete at once). */
  const filled = async () => {
    for (;;) {
      const st = await callDaemon(work, "stats", { project_path: work }, { source: "bench" });
      if (!st.freshness.filling?.length) return;
      await sleep(100);
    }
  };

  /** Waits until graph.json is of the index's last build (its head names the build's built_at). */
  const graphWritten = async () => {
    const builtAt = () => {
      const db = new Database(path.join(work, "codegraph-out/codemem_db/index.db"), { readonly: true });
      try {
        return db.prepare("SELECT value FROM meta WHERE key = 'built_at'").pluck().get();
      } finally {
        db.close();
      }
    };
    const graphFile = path.join(work, "codegraph-out/graph.json");
    for (let i = 0; i < 1200 && graphFileBuiltAt(graphFile) !== builtAt(); i++) await sleep(100);
  };

  // 1. Full build through the daemon.
  await callDaemon(work, "ping", {}, { source: "bench" });
  const load0 = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const daemonPid = (await daemonStatus(work)).pid;
  const cpu0 = processCpuS(daemonPid);
  // Peak RSS of the daemon and its build process, sampled while the build runs and fills.
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMbOf(daemonPid))), 200);
  let t = performance.now();
  const built = await callDaemon(work, "build", { project_path: work }, { source: "bench", timeoutMs: 3_600_000 });
  out.build_s = (performance.now() - t) / 1000;
  // A user asks right away: the first answer while the build's fill runs (its reader opens now).
  {
    const q = performance.now();
    await callDaemon(work, "query", { project_path: work, question: QUESTIONS[0] }, { source: "bench", timeoutMs: 600_000 });
    out.first_answer_after_build_ms = Math.round(performance.now() - q);
  }
  // Answerable then; complete once stats no longer says what is being filled in.
  await filled();
  out.complete_s = (performance.now() - t) / 1000;
  // The build's process is reaped once it has written graph.json: its CPU counts then (the daemon's children's time).
  for (let i = 0; i < 600 && childrenOf(daemonPid).length > 0; i++) await sleep(100);
  clearInterval(sampler);
  out.build_cpu_s = processCpuS(daemonPid) - cpu0;
  out.build_peak_rss_mb = Math.round(peakRss);
  out.load = [load0, fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")];
  out.nodes = built.node_count;
  out.edges = built.edge_count;
  out.files = built.files_indexed;
  if (buildOnly) {
    await stopDaemon(work);
    console.log(JSON.stringify(out));
    return;
  }
  let status = await idle();
  await sleep(6000); // graph.json's deferred write, then rest
  out.index_mb = duMb(path.join(work, "codegraph-out/codemem_db"));
  out.graph_json_mb = duMb(path.join(work, "codegraph-out/graph.json"));
  out.rss_after_build_mb = rssMbOf(status.pid);

  // 2. Saves in different packages: a new function each, searchable when search returns it.
  const c = await rawClient(socketPathFor(work));
  const files = [];
  const byDir = new Map();
  // Files the index holds (vendored and generated code is not indexed), one per package.
  const db = new Database(path.join(work, "codegraph-out/codemem_db/index.db"), { readonly: true });
  for (const { path: f } of db.prepare("SELECT path FROM files WHERE path NOT LIKE '%_test.go' ORDER BY path").all()) {
    const dir = path.dirname(f);
    if (!byDir.has(dir)) byDir.set(dir, f);
  }
  db.close();
  const dirs = [...byDir.keys()];
  for (let i = 0; i < saves; i++) files.push(byDir.get(dirs[Math.floor(((i + 0.5) * dirs.length) / saves)]));
  const saveMs = [];
  for (const [i, f] of files.entries()) {
    const name = `CodememBenchSaved${i}x${Date.now().toString(36)}`;
    const abs = path.join(work, f);
    const text = fs.readFileSync(abs, "utf8");
    const started = performance.now();
    fs.writeFileSync(abs, `${text}\n// ${name} was added by the scale benchmark.\nfunc ${name}() int { return ${i} }\n`);
    for (;;) {
      const { result } = await c.call("search", { project_path: work, query: name, limit: 3 });
      if (result.results.some((h) => h.name === name)) break;
      if (performance.now() - started > 60_000) throw new Error(`${name} not searchable within 60 s`);
      await sleep(25);
    }
    saveMs.push(performance.now() - started);
    await sleep(2500);
  }
  out.save_ms = { p50: pct(saveMs, 50), p95: pct(saveMs, 95), max: Math.max(...saveMs), all: saveMs.map(Math.round) };

  // 3. Delete → gone: the last saved file's new function leaves search.
  {
    const abs = path.join(work, files.at(-1));
    const name = fs.readFileSync(abs, "utf8").match(/func (CodememBenchSaved\w+)\(/)[1];
    const started = performance.now();
    fs.rmSync(abs);
    for (;;) {
      const { result } = await c.call("search", { project_path: work, query: name, limit: 3 });
      if (!result.results.some((h) => h.name === name)) break;
      if (performance.now() - started > 60_000) throw new Error(`${name} still found 60 s after its file was deleted`);
      await sleep(20);
    }
    out.delete_ms = performance.now() - started;
  }
  status = await idle();
  // At rest also means graph.json written: after a burst of saves it follows once edits have been
  // quiet for three times its last write (at 300K nodes ~15 s), and its thread holds ~1 GB meanwhile.
  await graphWritten();
  await sleep(5000);
  {
    const s = await daemonStatus(work);
    out.rss_at_rest_mb = rssMbOf(s.pid);
    // Where it is: each thread's V8 heap (the rest of RSS is native: SQLite, malloc, code).
    out.memory_at_rest = s.memory_mb;
  }

  // 4. Warm query and search latency: 60 calls each (18 made the p50 move by ±2 ms between runs).
  const queryMs = [];
  const searchMs = [];
  const cpu = { query: 0, search: 0 };
  const counted = { query: 0, search: 0 };
  const timed = async (op, input) => {
    const before = cpuMsOf(status.pid);
    const { ms } = await c.call(op, input);
    const after = cpuMsOf(status.pid);
    // A thread that ended meanwhile (a graph.json or clustering thread) takes its CPU time with it: that call is not counted.
    if ([...before.tids].every((t) => after.tids.has(t))) {
      cpu[op] += after.ms - before.ms;
      counted[op]++;
    }
    return ms;
  };
  for (let i = 0; i < 10 * QUESTIONS.length; i++) {
    queryMs.push(await timed("query", { project_path: work, question: QUESTIONS[i % QUESTIONS.length] }));
    searchMs.push(await timed("search", { project_path: work, query: QUESTIONS[i % QUESTIONS.length], limit: 10 }));
  }
  out.query_ms = { p50: pct(queryMs, 50), p95: pct(queryMs, 95), daemon_cpu_mean: cpu.query / counted.query };
  out.search_ms = { p50: pct(searchMs, 50), p95: pct(searchMs, 95), daemon_cpu_mean: cpu.search / counted.search };

  // 5. Answers during a forced build (issue 20 item 10): searches and status calls on a second
  // connection while a rebuild of the whole tree runs.
  {
    const during = await rawClient(socketPathFor(work));
    let builtAt;
    const build = callDaemon(work, "build", { project_path: work, force: true }, { source: "bench", timeoutMs: 3_600_000 }).finally(() => (builtAt = performance.now()));
    const searchDuring = [];
    const statusDuring = [];
    // And for 3 s after it: the new index's reader takes over then.
    const searchAfter = [];
    for (let i = 0; builtAt === undefined || performance.now() - builtAt < 3000; i++) {
      const { ms } = await during.call("search", { project_path: work, query: QUESTIONS[i % QUESTIONS.length], limit: 10 });
      (builtAt === undefined ? searchDuring : searchAfter).push(ms);
      const t0 = performance.now();
      await daemonStatus(work);
      if (builtAt === undefined) statusDuring.push(performance.now() - t0);
      await sleep(50);
    }
    await build;
    during.close();
    out.during_build = { searches: searchDuring.length, search_p50: pct(searchDuring, 50), search_p99: pct(searchDuring, 99), search_max: Math.max(...searchDuring), status_max: Math.max(...statusDuring), search_max_after: Math.max(...searchAfter) };
    await idle();
    // The rebuild's fill ends before the restarts: a daemon stopped during it leaves the rest to the
    // next start, whose first answer and memory at rest would then be the fill's, not a restart's.
    await filled();
  }
  c.close();

  // 6. First answer after a restart: from the client's call (which starts the daemon) to the answer.
  // Three restarts, each once the last daemon is warm again: one start varied by ±250 ms between runs.
  // Then, until its reader is warm (term weights, names, vectors), a start's answers are lexical:
  // the same question is searched every 50 ms until its answer's freshness lists nothing warming.
  const firsts = [];
  const warms = [];
  for (let k = 0; k < 3; k++) {
    if (k > 0) await idle();
    await closeConnections();
    await stopDaemon(work);
    t = performance.now();
    const first = await callDaemon(work, "query", { project_path: work, question: QUESTIONS[0] }, { source: "bench", timeoutMs: 600_000 });
    firsts.push(Math.round(performance.now() - t));
    out.first_answer_tokens = first.tokens;
    for (let warming = first.freshness?.warming; warming; ) {
      if (performance.now() - t > 120_000) throw new Error(`answers still warming (${warming.join(", ")}) 120 s after a restart`);
      await sleep(50);
      ({ warming } = (await callDaemon(work, "search", { project_path: work, query: QUESTIONS[0], limit: 1 }, { source: "bench" })).freshness);
    }
    warms.push(Math.round(performance.now() - t));
  }
  out.first_answer_ms = pct(firsts, 50);
  out.first_answer_all_ms = firsts;
  out.warm_after_restart_ms = pct(warms, 50);
  out.warm_after_restart_all_ms = warms;
  // At rest means warm: the watcher ready and the catch-up build (which loads the build state) done.
  await idle();
  await sleep(5000);
  {
    const s = await daemonStatus(work);
    out.rss_restarted_at_rest_mb = rssMbOf(s.pid);
    out.memory_restarted_at_rest = s.memory_mb;
  }
  await closeConnections();
  await stopDaemon(work);
  console.log(JSON.stringify(out));
}

function report(results) {
  const rows = [
    ["full build, answerable", (r) => r.build_s, "s", "answerable_s"],
    ["full build, complete", (r) => r.complete_s, "s", "build_s"],
    ["first answer right after the build returned", (r) => r.first_answer_after_build_ms, "ms"],
    ["full build CPU (daemon + build)", (r) => r.build_cpu_s, "s"],
    ["parse-only floor CPU", (r) => r.parse_floor_cpu_s, "s"],
    ["build CPU / parse floor", (r) => r.build_cpu_s / r.parse_floor_cpu_s, "×"],
    ["peak RSS during the build", (r) => r.build_peak_rss_mb, "MB", "build_rss_mb"],
    ["nodes", (r) => r.nodes, ""],
    ["edges", (r) => r.edges, ""],
    ["index on disk", (r) => r.index_mb, "MB", "index_mb"],
    ["graph.json", (r) => r.graph_json_mb, "MB"],
    ["RSS right after the full build", (r) => r.rss_after_build_mb, "MB"],
    ["RSS at rest after the saves", (r) => r.rss_at_rest_mb, "MB", "rss_mb"],
    ["save → searchable p50", (r) => r.save_ms.p50, "ms", "save_p50_ms"],
    ["save → searchable p95", (r) => r.save_ms.p95, "ms", "save_p95_ms"],
    ["delete → gone", (r) => r.delete_ms, "ms"],
    ["first answer after restart", (r) => r.first_answer_ms, "ms", "first_answer_ms"],
    ["answers warm after restart", (r) => r.warm_after_restart_ms, "ms"],
    ["RSS at rest after restart", (r) => r.rss_restarted_at_rest_mb, "MB"],
    ["warm query p50", (r) => r.query_ms.p50, "ms", "query_p50_ms"],
    ["warm search p50", (r) => r.search_ms.p50, "ms", "search_p50_ms"],
    ["daemon CPU per query (mean)", (r) => r.query_ms.daemon_cpu_mean, "ms"],
    ["daemon CPU per search (mean)", (r) => r.search_ms.daemon_cpu_mean, "ms"],
    ["searches during a forced build", (r) => r.during_build?.searches, ""],
    ["search p99 during the build", (r) => r.during_build?.search_p99, "ms", "during_build_p99_ms"],
    ["search max during the build", (r) => r.during_build?.search_max, "ms"],
    ["search max in the 3 s after it", (r) => r.during_build?.search_max_after, "ms"],
    ["status max during the build", (r) => r.during_build?.status_max, "ms"],
  ];
  const fmt = (v) => (v === undefined || Number.isNaN(v) ? "-" : v >= 100 ? String(Math.round(v)) : String(Math.round(v * 10) / 10));
  for (const [tree, sides] of Object.entries(results)) {
    const names = Object.keys(sides);
    console.log(`\n${tree}`);
    console.log(`${"metric".padEnd(32)}${names.map((n) => n.padStart(20)).join("")}   target`);
    for (const [label, get, unit, key] of rows) {
      const target = key ? TARGETS[tree]?.[key] : undefined;
      const cells = names.map((n) => `${fmt(get(sides[n]))} ${unit}`.padStart(20));
      const verdict = target === undefined ? "" : `≤ ${target} ${unit}  ${get(sides[names[0]]) <= target ? "PASS" : "FAIL"}`;
      console.log(`${label.padEnd(32)}${cells.join("")}   ${verdict}`);
    }
    console.log(`saves (ms, ${names[0]}): ${sides[names[0]].save_ms.all.join(" ")}`);
    for (const n of names) {
      const runs = sides[n].build_runs;
      if (runs.length < 2) continue;
      const range = (k) => `${fmt(Math.min(...runs.map((r) => r[k])))}–${fmt(Math.max(...runs.map((r) => r[k])))}`;
      console.log(`full builds of ${n}, medians above of ${runs.length} runs (sides alternating): answerable ${range("build_s")} s, complete ${range("complete_s")} s, CPU ${range("build_cpu_s")} s, peak RSS ${range("build_peak_rss_mb")} MB`);
    }
    for (const n of names) console.log(`load average before and after ${n}'s build: ${sides[n].load?.join(" | ")}`);
    const cg = codegraph[tree]?.seconds;
    if (cg !== undefined) {
      const ratio = (k) => names.map((n) => `${n} ${fmt(sides[n][k] / cg)}×`).join(", ");
      console.log(`codegraph ${CODEGRAPH_VERSION} init, same tree, same run: ${fmt(cg)} s; answerable / codegraph: ${ratio("build_s")}; complete / codegraph: ${ratio("complete_s")} (target ≤ 0.4×)`);
    }
  }
}
