#!/usr/bin/env node
// HTTP load benchmark (issue 7): `node scripts/bench-load.mjs [--clients 20] [--seconds 60] [--seq-calls 60] [--json] [--keep]`.
// Needs `npx tsc -p .`; fetches the go-net corpus with scripts/fetch-corpora.sh when it is missing.
// Indexes a temp copy of go-net through the CLI, then drives the real server (`codemem-mcp <project>
// --port 0`, a child process) with closed-loop clients, each on its own keep-alive connection,
// POSTing MCP tools/call requests (codemem_search, codemem_query, codemem_stats) to /mcp:
//   baseline  the same mix straight over the daemon socket (callDaemon), 1 client and N clients;
//   phase A   no RBAC, no rate limit: every call must succeed;
//   phase B   RBAC, identity headers from a trusted proxy (127.0.0.1), viewers (30/min) and
//             developers (60/min) hammering past their limits: the only refusals allowed are
//             429 + Retry-After, exactly as many as the limits imply.
// Exit code 1 when the baseline or phase A had an error, or phase B anything but those refusals.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(repo, "dist");
for (const f of ["client/cli.js", "client/mcp.js", "client/rpc.js"]) {
  if (!fs.existsSync(path.join(dist, f))) {
    console.error(`bench-load: dist/${f} is missing; run \`npx tsc -p .\` first.`);
    process.exit(1);
  }
}
const { callDaemon, closeConnections, stopDaemon } = await import(path.join(dist, "client/rpc.js"));

const { values: opt } = parseArgs({
  options: {
    clients: { type: "string", default: "20" },
    seconds: { type: "string", default: "60" },
    "seq-calls": { type: "string", default: "60" },
    json: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const posInt = (v, flag) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`bench-load: ${flag} must be a positive integer; got "${v}".`);
    process.exit(2);
  }
  return n;
};
const CLIENTS = posInt(opt.clients, "--clients");
const SECONDS = posInt(opt.seconds, "--seconds");
const SEQ_CALLS = posInt(opt["seq-calls"], "--seq-calls");

const ACCEPT = "application/json, text/event-stream"; // the Streamable HTTP transport refuses POSTs that do not accept both
const PROTOCOL = "2025-06-18";
const REQUEST_TIMEOUT_MS = 30_000;
const WINDOW_MS = 60_000; // the rate limiter's sliding window
// Phase B stops a user's sends this long before its window's first call can leave the window, so
// no slot frees mid-run and each window admits exactly its limit. It bounds the client→limiter
// delay of one request (body read, well under a second even on a busy machine).
const GUARD_MS = 3_000;
const SETTLE_MS = 500; // after the last admitted call of a window left it, before the next window
// Env that would override the flags given to the server child.
const SERVER_ENV = ["CODEMEM_RBAC_ENABLED", "CODEMEM_RATE_LIMIT_PER_MINUTE", "CODEMEM_TRUSTED_PROXIES", "CODEMEM_DIRECTORY_FILE", "CODEMEM_PROJECT"];
const ROLE_LIMITS = { viewer: 30, developer: 60 }; // client/rbac.ts ROLES, the spec's §2.5

// Varied go-net questions and searches; budgets and limits vary too, so few calls repeat exactly.
const QUESTIONS = [
  "how are HTTP cookies parsed from a request header",
  "where does the HTTP client follow redirects",
  "how does the transport reuse idle connections",
  "how is a URL query string escaped and unescaped",
  "how does the resolver look up DNS records",
  "how are mail addresses parsed",
  "how does net/rpc dispatch a call to a registered method",
  "how is the SMTP authentication mechanism chosen",
  "how does the HTTP server enforce read and write timeouts",
  "how are multipart form files read from a request",
  "how does the reverse proxy copy response headers",
  "how is TCP keep-alive configured on a connection",
];
const SEARCHES = [
  "ReadRequest",
  "ServeMux Handle",
  "DialContext",
  "ParseAddress",
  "QueryEscape",
  "RoundTrip",
  "LookupHost",
  "chunked transfer encoding",
  "ReverseProxy",
  "CanonicalMIMEHeaderKey",
  "SetKeepAlivePeriod",
  "basic auth header",
];
const BUDGETS = [undefined, 1500, 4000];
const LIMITS = [5, 10, 20];
// search 4 : query 4 : stats 1. Phase B drops stats: viewers and developers may not call it.
const MIX = ["search", "query", "search", "query", "stats", "search", "query", "search", "query"];
const MIX_B = MIX.filter((t) => t !== "stats");

/** The n-th call of client c: tool and arguments (project_path is added by the server, or by the socket baseline). */
function callOf(c, n, mix = MIX) {
  const tool = mix[(c + n) % mix.length];
  const k = c * 5 + n;
  if (tool === "search") return { tool, args: { query: SEARCHES[k % SEARCHES.length], limit: LIMITS[Math.floor(k / SEARCHES.length) % LIMITS.length] } };
  if (tool === "query") {
    const budget = BUDGETS[Math.floor(k / QUESTIONS.length) % BUDGETS.length];
    return { tool, args: { question: QUESTIONS[k % QUESTIONS.length], ...(budget ? { budget } : {}) } };
  }
  return { tool, args: {} };
}

/** A result that is not the tool's shape counts as an error (BAD_RESULT): a 200 alone proves little. */
const RESULT_OK = {
  search: (r) => Array.isArray(r?.results),
  query: (r) => typeof r?.context === "string" && r.context.length > 0,
  stats: (r) => r?.node_count > 0,
};

const note = (msg) => process.stderr.write(`bench-load: ${msg}\n`);
const r1 = (x) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : null);

/** Nearest-rank percentiles of latencies in ms. */
function latency(ms) {
  const s = Float64Array.from(ms).sort();
  const at = (p) => (s.length ? s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] : NaN);
  return { n: s.length, p50: r1(at(50)), p95: r1(at(95)), p99: r1(at(99)), max: r1(s.length ? s[s.length - 1] : NaN) };
}

/** Outcomes of one run: counts, latencies, status histogram, errors by code. */
class Tally {
  constructor(name, clients) {
    this.name = name;
    this.clients = clients;
    this.ms = [];
    this.okMs = [];
    this.refusedMs = [];
    this.byTool = {};
    this.status = {};
    this.errors = {};
    this.refused = 0;
    this.elapsedMs = 0;
  }

  add(o) {
    this.ms.push(o.ms);
    (this.byTool[o.tool] ??= []).push(o.ms);
    const st = String(o.status);
    this.status[st] = (this.status[st] ?? 0) + 1;
    if (o.kind === "ok") this.okMs.push(o.ms);
    else if (o.kind === "refused") {
      this.refused++;
      this.refusedMs.push(o.ms);
    } else {
      const e = (this.errors[o.code] ??= { count: 0, example: o.detail });
      e.count++;
    }
  }

  get errorCount() {
    return Object.values(this.errors).reduce((a, e) => a + e.count, 0);
  }

  summary() {
    const secs = this.elapsedMs / 1000;
    return {
      clients: this.clients,
      seconds: r1(secs),
      calls: this.ms.length,
      calls_per_s: r1(this.ms.length / secs),
      ok: this.okMs.length,
      ok_per_s: r1(this.okMs.length / secs),
      latency_ms: latency(this.ms),
      ok_latency_ms: latency(this.okMs),
      by_tool_ms: Object.fromEntries(Object.entries(this.byTool).map(([t, ms]) => [t, latency(ms)])),
      http_status: this.status,
      refusals: this.refused,
      refusal_latency_ms: latency(this.refusedMs),
      errors: this.errorCount,
      errors_by_code: this.errors,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Transports: one MCP tools/call over HTTP, one daemon op over the socket. Both time end to end.

function post(agent, url, body, headers) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const done = (r) => resolve({ ms: performance.now() - t0, ...r });
    const req = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), accept: ACCEPT, "mcp-protocol-version": PROTOCOL, ...headers } },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => done({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", (err) => done({ status: "network", error: err.code ?? err.message }));
      },
    );
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error("no reply"), { code: "TIMEOUT" })));
    req.on("error", (err) => done({ status: "network", error: err.code ?? err.message }));
    req.end(body);
  });
}

/** The JSON-RPC reply in a response body: JSON, or the last data line of an SSE stream. */
function rpcReply(r) {
  if (String(r.headers["content-type"] ?? "").startsWith("text/event-stream")) {
    const data = r.text.split("\n").filter((l) => l.startsWith("data:"));
    return data.length ? JSON.parse(data[data.length - 1].slice(5)) : undefined;
  }
  return JSON.parse(r.text);
}

/** An HTTP client: its own keep-alive socket, one call in flight. */
function httpClient(base, headers = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = `${base}/mcp`;
  let id = 0;
  return {
    async call({ tool, args }) {
      const rid = ++id;
      const name = `codemem_${tool}`;
      const r = await post(agent, url, JSON.stringify({ jsonrpc: "2.0", id: rid, method: "tools/call", params: { name, arguments: args } }), headers);
      const o = { tool, ms: r.ms, status: r.status, kind: "error" };
      if (r.error) return { ...o, code: `NETWORK_${r.error}`, detail: r.error };
      if (r.status === 429) {
        let code;
        try {
          code = JSON.parse(r.text).error?.code;
        } catch {
          // checked below
        }
        const retry = Number(r.headers["retry-after"]);
        if (code === "RATE_LIMITED" && Number.isInteger(retry) && retry >= 1 && retry <= WINDOW_MS / 1000) return { ...o, kind: "refused" };
        return { ...o, code: "BAD_429", detail: `retry-after=${r.headers["retry-after"]} body=${r.text.slice(0, 200)}` };
      }
      if (r.status !== 200) return { ...o, code: `HTTP_${r.status}`, detail: r.text.slice(0, 300) };
      let msg;
      try {
        msg = rpcReply(r);
      } catch {
        return { ...o, code: "RPC_NOT_JSON", detail: r.text.slice(0, 300) };
      }
      if (msg?.id !== rid) return { ...o, code: "RPC_BAD_REPLY", detail: r.text.slice(0, 300) };
      if (msg.error) return { ...o, code: `RPC_${msg.error.code}`, detail: msg.error.message };
      if (msg.result?.isError) {
        const text = String(msg.result.content?.[0]?.text ?? "");
        return { ...o, code: `TOOL_${/^([A-Z_]+):/.exec(text)?.[1] ?? "ERROR"}`, detail: text.slice(0, 300) };
      }
      if (!RESULT_OK[tool](msg.result?.structuredContent)) return { ...o, code: "BAD_RESULT", detail: r.text.slice(0, 300) };
      return { ...o, kind: "ok" };
    },
    close: () => agent.destroy(),
  };
}

/** The same calls straight to the daemon over its socket (callDaemon's one pipelined connection). */
function socketClient(root) {
  return {
    async call({ tool, args }) {
      const t0 = performance.now();
      try {
        const result = await callDaemon(root, tool, { project_path: root, ...args }, { source: "bench", autostart: false });
        const ms = performance.now() - t0;
        if (!RESULT_OK[tool](result)) return { tool, ms, status: "socket", kind: "error", code: "BAD_RESULT", detail: JSON.stringify(result).slice(0, 300) };
        return { tool, ms, status: "socket", kind: "ok" };
      } catch (err) {
        return { tool, ms: performance.now() - t0, status: "socket", kind: "error", code: err.code ?? "ERROR", detail: err.message };
      }
    },
    close() {},
  };
}

// ---------------------------------------------------------------------------------------------
// Runs.

async function sequential(name, client, calls) {
  const t = new Tally(name, 1);
  const t0 = performance.now();
  for (let n = 0; n < calls; n++) t.add(await client.call(callOf(0, n)));
  t.elapsedMs = performance.now() - t0;
  client.close();
  return t;
}

/** Closed loop: `clients` callers, each sending its next call when the last one answered, for `seconds`. */
async function closedLoop(name, makeClient, clients, seconds) {
  const t = new Tally(name, clients);
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const client = makeClient(c);
      for (let n = 0; performance.now() < deadline; n++) t.add(await client.call(callOf(c, n)));
      client.close();
    }),
  );
  t.elapsedMs = performance.now() - t0;
  return t;
}

/** Phase B users: half viewers, half developers, two clients per user (so the limiter sees concurrent callers). */
function phaseBUsers(clients) {
  const count = Math.max(1, Math.ceil(clients / 2));
  return Array.from({ length: count }, (_, i) => {
    const role = i % 2 === 0 ? "viewer" : "developer";
    return { name: `${role}-${i}@load.test`, role, limit: ROLE_LIMITS[role], clients: 0, windows: [], inflight: 0, closing: false, resumeAt: undefined };
  });
}

function openWindow(u) {
  u.win = { firstSend: undefined, attempts: 0, passed: 0, refused: 0, lastPassEnd: 0 };
  u.windows.push(u.win);
}

/**
 * Phase B: closed loop as above, but per user in windows. A window ends GUARD_MS before its first
 * call could leave the limiter's 60 s window; the user's clients then wait until every call it
 * admitted has left (SETTLE_MS after), so each window must admit exactly min(attempts, limit).
 */
async function rbacLoop(base, users, clients, seconds) {
  const t = new Tally("HTTP B (RBAC)", clients);
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  const maybeResume = (u) => {
    if (u.closing && u.inflight === 0 && u.resumeAt === undefined) u.resumeAt = u.win.lastPassEnd + WINDOW_MS + SETTLE_MS;
  };
  for (const u of users) openWindow(u);
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const u = users[c % users.length];
      u.clients++;
      const client = httpClient(base, { "x-forwarded-user": u.name });
      for (let n = 0; ; ) {
        const now = performance.now();
        if (now >= deadline) break;
        if (u.closing) {
          if (u.resumeAt === undefined) await sleep(5); // the closed window's last calls are still in flight
          else if (now < u.resumeAt) await sleep(Math.min(u.resumeAt, deadline) - now);
          else {
            u.closing = false;
            u.resumeAt = undefined;
            openWindow(u);
          }
          continue;
        }
        const w = u.win;
        w.firstSend ??= now;
        if (now >= w.firstSend + WINDOW_MS - GUARD_MS) {
          u.closing = true;
          maybeResume(u);
          continue;
        }
        u.inflight++;
        w.attempts++;
        const o = await client.call(callOf(c, n++, MIX_B));
        u.inflight--;
        if (o.status === 429) w.refused++;
        else {
          w.passed++;
          w.lastPassEnd = performance.now();
        }
        maybeResume(u);
        t.add(o);
      }
      client.close();
    }),
  );
  t.elapsedMs = performance.now() - t0;
  return t;
}

/** Expected vs observed admissions and refusals, per role, from the limits. */
function rbacCheck(users) {
  const roles = {};
  for (const u of users.filter((x) => x.clients > 0)) {
    const r = (roles[u.role] ??= { users: 0, clients: 0, limit_per_min: u.limit, windows: 0, attempts: 0, admitted: 0, expected_admitted: 0, refused_429: 0, expected_refused: 0 });
    r.users++;
    r.clients += u.clients;
    for (const w of u.windows.filter((x) => x.attempts > 0)) {
      r.windows++;
      r.attempts += w.attempts;
      r.admitted += w.passed;
      r.refused_429 += w.refused;
      r.expected_admitted += Math.min(w.attempts, u.limit);
      r.expected_refused += Math.max(0, w.attempts - u.limit);
    }
  }
  return roles;
}

// ---------------------------------------------------------------------------------------------
// Server child process.

async function startServer(label, root, extra, logFile) {
  const env = { ...process.env };
  for (const k of SERVER_ENV) delete env[k];
  const errFd = fs.openSync(logFile, "a");
  const child = spawn(process.execPath, [path.join(dist, "client/mcp.js"), root, "--port", "0", ...extra], { stdio: ["ignore", "pipe", errFd], env });
  fs.closeSync(errFd);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} server printed no address within 30 s; see ${logFile}`)), 30_000);
    readline.createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line).url);
      } catch {
        reject(new Error(`${label} server printed ${JSON.stringify(line)} instead of {"url": ...}`));
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${label} server exited (${code}) before listening; see ${logFile}`));
    });
  });
  const t0 = Date.now();
  for (;;) {
    const status = await fetch(`${url}/ready`).then((r) => r.status, () => 0);
    if (status === 200) break;
    if (Date.now() - t0 > 60_000) throw new Error(`${label} server at ${url} not ready after 60 s (last /ready status ${status}); see ${logFile}`);
    await sleep(200);
  }
  return {
    url,
    pid: child.pid,
    metrics: () => fetch(`${url}/metrics`).then((r) => r.text()),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Sum of a Prometheus sample over the series whose labels include `labels`. */
function metricSum(text, name, labels = {}) {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (m[2] ?? "").includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// Main.

const corpus = path.join(repo, ".bench-cache/corpora/go-net");
if (!fs.existsSync(corpus)) {
  note(`${corpus} is missing; running scripts/fetch-corpora.sh`);
  execFileSync("bash", [path.join(repo, "scripts/fetch-corpora.sh")], { stdio: ["ignore", process.stderr, process.stderr] });
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-load-"));
const work = path.join(tmp, "go-net");
fs.cpSync(corpus, work, { recursive: true });
const servers = [];
let report;
try {
  note(`indexing a copy of go-net in ${work} with the CLI`);
  let t = performance.now();
  const built = JSON.parse(execFileSync(process.execPath, [path.join(dist, "client/cli.js"), "build", work, "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
  const buildMs = performance.now() - t;

  // Warm the daemon (first-use costs of retrieval and embedding) outside every measured run.
  const warm = socketClient(work);
  for (let n = 0; n < MIX.length * 3; n++) await warm.call(callOf(0, n));

  note(`baseline over the daemon socket: ${SEQ_CALLS} sequential calls, then ${CLIENTS} clients × ${SECONDS} s`);
  const sockSeq = await sequential("socket, sequential", socketClient(work), SEQ_CALLS);
  const sockLoad = await closedLoop("socket, concurrent", () => socketClient(work), CLIENTS, SECONDS);

  note(`phase A: HTTP server without RBAC or rate limit`);
  const a = await startServer("phase A", work, ["--rate-limit-per-minute", "0"], path.join(tmp, "server-a.log"));
  servers.push(a);
  const warmA = httpClient(a.url);
  for (let n = 0; n < MIX.length; n++) await warmA.call(callOf(1, n));
  warmA.close();
  const httpSeq = await sequential("HTTP, sequential", httpClient(a.url), SEQ_CALLS);
  const before = await a.metrics();
  note(`phase A: ${CLIENTS} clients × ${SECONDS} s`);
  const phaseA = await closedLoop("HTTP A (open)", () => httpClient(a.url), CLIENTS, SECONDS);
  const after = await a.metrics();
  const served = metricSum(after, "codemem_query_duration_seconds_count") - metricSum(before, "codemem_query_duration_seconds_count");
  const exitA = await a.stop();
  servers.pop();

  note(`phase B: RBAC, viewers ${ROLE_LIMITS.viewer}/min and developers ${ROLE_LIMITS.developer}/min, ${CLIENTS} clients × ${SECONDS} s`);
  const users = phaseBUsers(CLIENTS);
  const dirFile = path.join(tmp, "directory.json");
  // The warm-up user is an admin (no limit), so warming spends no viewer's or developer's budget.
  fs.writeFileSync(dirFile, JSON.stringify({ users: { "warmup@load.test": "admin", ...Object.fromEntries(users.map((u) => [u.name, u.role])) }, groups: {} }, null, 2));
  const b = await startServer("phase B", work, ["--rbac-enabled", "--trusted-proxy", "127.0.0.1", "--directory-file", dirFile], path.join(tmp, "server-b.log"));
  servers.push(b);
  const warmB = httpClient(b.url, { "x-forwarded-user": "warmup@load.test" });
  for (let n = 0; n < MIX_B.length; n++) await warmB.call(callOf(1, n, MIX_B));
  warmB.close();
  const phaseB = await rbacLoop(b.url, users, CLIENTS, SECONDS);
  const metricsB = await b.metrics();
  const exitB = await b.stop();
  servers.pop();

  const roles = rbacCheck(users);
  const expectedRefused = Object.values(roles).reduce((s, r) => s + r.expected_refused, 0);
  const countsMatch = Object.values(roles).every((r) => r.admitted === r.expected_admitted && r.refused_429 === r.expected_refused);
  const serverRefused = Object.fromEntries(Object.keys(roles).map((role) => [role, metricSum(metricsB, "codemem_rbac_rejections_total", { reason: "rate_limited", role })]));
  const serverForbidden = metricSum(metricsB, "codemem_rbac_rejections_total", { reason: "forbidden" });

  const sA = phaseA.summary();
  const sB = phaseB.summary();
  const failures = [];
  if (sockSeq.errorCount + sockLoad.errorCount) failures.push(`baseline had ${sockSeq.errorCount + sockLoad.errorCount} error(s)`);
  if (httpSeq.errorCount) failures.push(`sequential HTTP run had ${httpSeq.errorCount} error(s)`);
  if (sA.errors || sA.refusals) failures.push(`phase A had ${sA.errors} error(s) and ${sA.refusals} refusal(s)`);
  if (sB.errors) failures.push(`phase B had ${sB.errors} unexpected error(s)`);
  if (!countsMatch) failures.push(`phase B refusals ${sB.refusals} ≠ expected ${expectedRefused} (or admissions differ per role)`);
  if (exitA !== 0 || exitB !== 0) failures.push(`server exit codes on SIGTERM: A ${exitA}, B ${exitB} (expected 0)`);

  report = {
    corpus: "go-net",
    index: { nodes: built.node_count, edges: built.edge_count, files: built.files_indexed, cli_build_ms: Math.round(buildMs) },
    config: { clients: CLIENTS, seconds: SECONDS, seq_calls: SEQ_CALLS, mix: "search 4 : query 4 : stats 1 (phase B: search 1 : query 1)", cpus: os.cpus().length, loadavg_at_end: os.loadavg().map(r1) },
    baseline: { socket_sequential: sockSeq.summary(), socket_concurrent: sockLoad.summary() },
    http_sequential: httpSeq.summary(),
    phase_a: { ...sA, server_timed_calls: served },
    phase_b: {
      ...sB,
      users: users.filter((u) => u.clients > 0).length,
      intended_refusals: sB.refusals,
      expected_refusals: expectedRefused,
      unexpected_errors: sB.errors,
      by_role: roles,
      server_rate_limited: serverRefused,
      server_forbidden: serverForbidden,
    },
    http_overhead: {
      sequential_p50_ms: r1(httpSeq.summary().latency_ms.p50 - sockSeq.summary().latency_ms.p50),
      concurrent_throughput_ratio: r1(sA.calls_per_s / sockLoad.summary().calls_per_s),
    },
    pass: failures.length === 0,
    failures,
  };
  fs.mkdirSync(path.join(repo, ".bench-cache/work"), { recursive: true });
  fs.writeFileSync(path.join(repo, ".bench-cache/work/load-bench-results.json"), JSON.stringify(report, null, 2));
} finally {
  for (const s of servers) await s.stop().catch(() => undefined);
  await stopDaemon(work).catch(() => undefined);
  await closeConnections();
  if (opt.keep) note(`kept ${tmp} (server logs, audit log, index)`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}

if (opt.json) console.log(JSON.stringify(report, null, 2));
else printReport(report);
process.exit(report.pass ? 0 : 1);

function printReport(r) {
  const c = r.config;
  console.log(`go-net: ${r.index.nodes} nodes, ${r.index.files} files (CLI build ${(r.index.cli_build_ms / 1000).toFixed(1)} s); ${c.clients} clients × ${c.seconds} s per concurrent run; mix ${c.mix}`);
  console.log(`machine: ${c.cpus} CPUs, load average at end ${c.loadavg_at_end.join(" ")} (client, server and daemon share them)`);
  console.log("");
  const head = ["run", "clients", "calls", "calls/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors"];
  const row = (cells) => console.log(cells.map((x, i) => String(x ?? "-")[i ? "padStart" : "padEnd"](i ? 9 : 24)).join(" "));
  row(head);
  const line = (name, s, lat = s.latency_ms, calls = s.calls, rate = s.calls_per_s) => row([name, s.clients, calls, rate, lat.p50, lat.p95, lat.p99, lat.max, s.errors]);
  line("socket, sequential", r.baseline.socket_sequential);
  line("HTTP, sequential", r.http_sequential);
  line("socket, concurrent", r.baseline.socket_concurrent);
  line("HTTP A (open)", r.phase_a);
  const b = r.phase_b;
  line("HTTP B admitted", b, b.ok_latency_ms, b.ok, b.ok_per_s);
  row(["HTTP B refused (429)", "", b.refusals, r1(b.refusals / b.seconds), b.refusal_latency_ms.p50, b.refusal_latency_ms.p95, b.refusal_latency_ms.p99, b.refusal_latency_ms.max, ""]);
  console.log("");
  console.log(`HTTP overhead: +${r.http_overhead.sequential_p50_ms} ms at p50 sequentially; concurrent throughput HTTP/socket = ${r.http_overhead.concurrent_throughput_ratio}`);
  const tools = (s) => Object.entries(s.by_tool_ms).map(([t, l]) => `${t} p50 ${l.p50} / p99 ${l.p99} ms (${l.n})`).join(", ");
  console.log(`per tool, socket concurrent: ${tools(r.baseline.socket_concurrent)}`);
  console.log(`per tool, HTTP A:            ${tools(r.phase_a)}`);
  const hist = (h) => Object.entries(h).map(([k, v]) => `${k} × ${v}`).join(", ");
  console.log(`HTTP status, phase A: ${hist(r.phase_a.http_status)}; server timed ${r.phase_a.server_timed_calls} tool calls`);
  console.log(`HTTP status, phase B: ${hist(b.http_status)}`);
  console.log("");
  console.log(`phase B: ${b.users} users, intended refusals (429 + Retry-After) ${b.intended_refusals}, expected from the limits ${b.expected_refusals}, unexpected errors ${b.unexpected_errors}`);
  for (const [role, x] of Object.entries(b.by_role)) {
    console.log(
      `  ${role.padEnd(9)} ${x.users} users × ${x.limit_per_min}/min, ${x.clients} clients, ${x.windows} window(s): ${x.attempts} attempts, admitted ${x.admitted} (expected ${x.expected_admitted}), refused ${x.refused_429} (expected ${x.expected_refused}; server counted ${b.server_rate_limited[role]})`,
    );
  }
  if (b.server_forbidden) console.log(`  server counted ${b.server_forbidden} forbidden refusal(s)`);
  const errs = [
    ["socket sequential", r.baseline.socket_sequential],
    ["socket concurrent", r.baseline.socket_concurrent],
    ["HTTP sequential", r.http_sequential],
    ["phase A", r.phase_a],
    ["phase B", b],
  ].flatMap(([n, s]) => Object.entries(s.errors_by_code).map(([code, e]) => `  ${n}: ${code} × ${e.count} (e.g. ${e.example})`));
  if (errs.length) console.log(`errors:\n${errs.join("\n")}`);
  console.log("");
  console.log(r.pass ? "PASS: no errors; phase B refused exactly the calls over the limits, all with 429 + Retry-After." : `FAIL: ${r.failures.join("; ")}`);
}
