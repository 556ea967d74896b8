import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { resolveConfig } from "../shared/config.js";
import { asCodememError, CodememError } from "../shared/errors.js";
import { HostNames, isLoopbackBind } from "../shared/hostnames.js";
import { log } from "../shared/log.js";
import { TOOLS, type Operation } from "../shared/operations.js";
import { isWithin, resolveProjectRoot } from "../shared/paths.js";
import { AuditLog, canonicalJson, type AuditOutcome } from "./audit.js";
import { createServer as createMcpServer, type Served } from "./mcp-server.js";
import { AddressRanges, DirectorySource, identify, limitFor, ProxySecret, RateLimiter, RefusalBudget, roleAllows, type Directory, type Identity, type SuppressedRefusals } from "./rbac.js";
import { callDaemon } from "./rpc.js";
import { listenUnix } from "./unix-socket.js";

export interface HttpServerOptions {
  project: string;
  /** TCP port; exactly one of port and socket. */
  port?: number;
  /** Interface to bind; 127.0.0.1 unless told. */
  host?: string;
  /**
   * Unix socket to listen on instead of a port, mode 0600 (0660 with socketGroup): only processes
   * that may open it (the proxy) reach the server, so its identity headers are believed.
   */
  socket?: string;
  socketGroup?: string;
  /** File holding the secret the proxy sends in X-Codemem-Proxy-Secret; without it in a request, no identity header is believed. */
  proxySecretFile?: string;
  /** Further names clients reach the server by, beyond loopback and the bound address (Host header check). */
  allowHosts?: string[];
  tlsCert?: string;
  tlsKey?: string;
  rbac: boolean;
  /** Calls per minute for every non-admin role (replaces the role's own limit); 0 = unlimited. */
  rateLimitPerMinute?: number;
  /** IPs or CIDR ranges whose identity headers are believed. */
  trustedProxies: string[];
  /** IPs or CIDR ranges served at all (default: loopback and private networks); others get 403. */
  allowFrom?: string[];
  /** JSON file mapping users and groups to roles (required with rbac). */
  directoryFile?: string;
  /** The backend the server was started for: builds naming none go there. */
  served?: Served;
  /** Audit rotation size, for tests (default 10 MB). */
  auditMaxBytes?: number;
}

export interface HttpServerHandle {
  url: string;
  close(): Promise<void>;
}

/** Loopback and private networks (RFC 1918, IPv6 unique-local and link-local). */
export const DEFAULT_ALLOW_FROM = ["127.0.0.0/8", "::1", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fe80::/10"];
const INDEX_VERSION = "1";
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** JSON-RPC messages per request: a batch of thousands cost 14.7 MB of audit and stalled /health 4 s. */
const MAX_BATCH = 64;
/** Tool names as recorded (audit, metric labels): ours verbatim, anything else bounded. */
const KNOWN_TOOLS = new Set((TOOLS as readonly Operation[]).map((o) => o.tool));
const recordedName = (name: string) => (KNOWN_TOOLS.has(name) ? name : name.length > 64 ? `${name.slice(0, 64)}…(${name.length} chars)` : name);
const metricName = (name: string) => (KNOWN_TOOLS.has(name) ? name : "unknown");
/** Refused requests recorded one by one per user or peer each minute; past it they get 429 and one summary line per minute. */
export const REFUSALS_AUDITED_PER_MINUTE = 20;
const STATS_TIMEOUT_MS = 5000;
const IDLE_SERVERS = 16;

type Json = Record<string, unknown>;
type Refusal = {
  status: 400 | 403 | 429 | 503;
  code: "IDENTITY_AMBIGUOUS" | "BATCH_TOO_LARGE" | "DUPLICATE_ID" | "INVALID_ARGUMENT" | "AUDIT_UNAVAILABLE" | "RBAC_FORBIDDEN" | "RATE_LIMITED";
  message: string;
  retryAfter?: number;
};

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function readTlsFile(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code === "ENOENT" ? "PATH_NOT_FOUND" : "CONFIG_INVALID";
    throw new CodememError(code, `TLS ${what} file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); pass a readable PEM file with --tls-${what}.`, { file });
  }
}

async function readBody(req: http.IncomingMessage): Promise<Buffer | "too_large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return "too_large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new CodememError("DAEMON_UNAVAILABLE", `${what} did not answer within ${ms} ms.`)), ms);
    }),
  ]);
}

/** A tools/call found in a JSON-RPC request body. */
interface ToolCall {
  id: string | number | undefined;
  tool: string;
  args: Json;
  /** The message's params, where the served project_path is filled in. */
  params: Json;
}

/**
 * Serves one project over HTTP(S): MCP (Streamable HTTP, stateless) on /mcp, probes, status and
 * Prometheus metrics. With RBAC, identity comes from a trusted proxy's headers and roles from the
 * directory file; refusals happen here, before the MCP server sees the request.
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  const project = resolveProjectRoot(opts.project);
  const trusted = new AddressRanges(opts.trustedProxies);
  const allowed = new AddressRanges(opts.allowFrom ?? DEFAULT_ALLOW_FROM, "allowed client range");
  if (opts.rbac && !opts.directoryFile) {
    throw new CodememError("CONFIG_INVALID", "--rbac-enabled needs a directory file mapping users and groups to roles; pass --directory-file or set CODEMEM_DIRECTORY_FILE.");
  }
  if ((opts.port === undefined) === (opts.socket === undefined)) {
    throw new CodememError("INVALID_ARGUMENT", "the HTTP server listens on a TCP port (--port N) or a Unix socket (--socket PATH): pass exactly one.");
  }
  if (opts.socketGroup !== undefined && opts.socket === undefined) {
    throw new CodememError("INVALID_ARGUMENT", "--socket-group sets the group of the Unix socket; add --socket PATH.");
  }
  if (opts.rbac && opts.trustedProxies.length === 0 && opts.socket === undefined) {
    // No proxy is trusted unless named: any local process could otherwise claim any identity.
    throw new CodememError(
      "CONFIG_INVALID",
      "--rbac-enabled takes identities from an authentication proxy's X-Forwarded-User and X-Forwarded-Groups; for a proxy on this host listen on --socket PATH (only the proxy may open it), for one on another host name it with --trusted-proxy <its address> (or CODEMEM_TRUSTED_PROXIES).",
    );
  }
  const directory = new DirectorySource(opts.directoryFile);
  const secret = opts.proxySecretFile ? new ProxySecret(opts.proxySecretFile) : undefined;
  const host = opts.host ?? "127.0.0.1";
  // Behind a socket the proxy names the server (nginx sends Host: localhost unless told otherwise).
  const names = new HostNames(opts.socket ? "localhost" : host, opts.allowHosts);
  if (opts.rateLimitPerMinute !== undefined && (!Number.isInteger(opts.rateLimitPerMinute) || opts.rateLimitPerMinute < 0)) {
    throw new CodememError("INVALID_ARGUMENT", `--rate-limit-per-minute must be an integer ≥ 0 (0 = unlimited); got ${opts.rateLimitPerMinute}.`);
  }
  let tls: { cert: Buffer; key: Buffer } | undefined;
  if (opts.tlsCert || opts.tlsKey) {
    if (!opts.tlsCert || !opts.tlsKey) throw new CodememError("CONFIG_INVALID", "TLS needs both --tls-cert and --tls-key.");
    tls = { cert: readTlsFile(opts.tlsCert, "cert"), key: readTlsFile(opts.tlsKey, "key") };
  }

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const queryDuration = new Histogram({
    name: "codemem_query_duration_seconds",
    help: "Duration of MCP tool calls served over HTTP, by tool.",
    labelNames: ["tool"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const rejections = new Counter({
    name: "codemem_rbac_rejections_total",
    help: "Requests refused by RBAC (forbidden), by the rate limit (rate_limited), for their address (address), or past the refusals recorded per minute (suppressed).",
    labelNames: ["reason", "role"] as const,
    registers: [registry],
  });
  const auditEvents = new Counter({ name: "codemem_audit_events_total", help: "Audit entries written.", registers: [registry] });
  /** The backend builds go to when there is no index to ask (null when the configuration is broken: the reason says why). */
  const configuredBackend = (): string | null => {
    try {
      return resolveConfig(project, { backend: opts.served?.backend }).store.backend;
    } catch {
      return null;
    }
  };
  const stats = () => withTimeout(callDaemon(project, "stats", { project_path: project }, { source: "http" }) as Promise<Json>, STATS_TIMEOUT_MS, "the daemon's stats");
  new Gauge({
    name: "codemem_index_size_bytes",
    help: "Size of the project's index on disk.",
    registers: [registry],
    async collect() {
      try {
        this.set(Number((await stats()).index_bytes) || 0);
      } catch {
        // no index yet or daemon busy: keep the last value
      }
    },
  });

  const audit = new AuditLog(project, { maxBytes: opts.auditMaxBytes, onWrite: () => auditEvents.inc(), exclusive: true });
  const limiter = new RateLimiter();
  const refusals = new RefusalBudget(REFUSALS_AUDITED_PER_MINUTE);
  const idle: McpServer[] = [];
  const started = Date.now();

  const record = (id: Identity, call: { tool: string; args: unknown }, outcome: AuditOutcome, code?: string, count?: number) => {
    try {
      let args = call.args;
      try {
        canonicalJson(args);
      } catch {
        args = { unrecordable: "nested too deep" }; // a refusal of such arguments is still recorded
      }
      audit.append({ who: id.user ?? "anonymous", role: id.role ?? null, tool: recordedName(call.tool), args, outcome, code, peer: id.peer, count });
    } catch (err) {
      log.error("audit append failed", { error: (err as Error).message });
    }
  };

  /** One line for a window's refusals that were answered but not recorded one by one. */
  const recordSuppressed = (s: SuppressedRefusals) => {
    const id: Identity = { user: s.who, groups: [], peer: s.peer };
    record(id, { tool: "(refusals suppressed)", args: { from: new Date(s.start).toISOString(), to: new Date(s.end).toISOString() } }, "rate_limited", "REFUSALS_SUPPRESSED", s.suppressed);
    log.info("refusals suppressed", { user: s.who, peer: s.peer, count: s.suppressed });
  };
  /** Summarises windows that ended without a later refusal from the same key; started with the first refusal. */
  let sweep: NodeJS.Timeout | undefined;

  const refuse = (res: http.ServerResponse, id: Identity, calls: { tool: string; args: unknown }[], r: Refusal) => {
    sweep ??= setInterval(() => refusals.drain().forEach(recordSuppressed), 60_000).unref();
    const budget = refusals.take(id.user ? `u:${id.user}` : `p:${id.peer}`, id.user ?? "anonymous", id.peer);
    if (budget.ended) recordSuppressed(budget.ended);
    if (!budget.record) {
      // Past the budget: answered and counted, not recorded or logged one by one (an audit line costs a synchronous write).
      rejections.inc({ reason: "suppressed", role: id.role ?? "none" });
      const message = `more than ${REFUSALS_AUDITED_PER_MINUTE} refused requests within a minute; retry in ${budget.retryAfterSeconds} s.`;
      sendJson(res, 429, { error: { code: "RATE_LIMITED", message } }, { "retry-after": String(budget.retryAfterSeconds) });
      return;
    }
    const outcome = r.status === 429 ? "rate_limited" : "forbidden";
    rejections.inc({ reason: outcome, role: id.role ?? "none" });
    // One line per refused request whatever its size: a batch is one "(batch)" line naming its count.
    if (calls.length === 1) record(id, calls[0]!, outcome, r.code);
    else record(id, { tool: "(batch)", args: { tools: calls.map((c) => recordedName(c.tool)) } }, outcome, r.code, calls.length);
    log.info("request refused", { code: r.code, user: id.user, role: id.role, peer: id.peer, tools: calls.slice(0, 8).map((c) => recordedName(c.tool)), calls: calls.length });
    sendJson(res, r.status, { error: { code: r.code, message: r.message } }, r.retryAfter !== undefined ? { "retry-after": String(r.retryAfter) } : {});
  };

  /** The refusal of a request, if any; fills project_path into the calls it lets through. `messages`: the whole batch. */
  const check = (id: Identity, calls: ToolCall[], messages: Json[]): Refusal | undefined => {
    // An audited server serves only what it can record: one entry per call, written.
    if (!audit.writable()) {
      return { status: 503, code: "AUDIT_UNAVAILABLE", message: "the server cannot write its audit log; the operator has the details in the server log." };
    }
    // Ids unique across every request of the batch: a call's outcome is read from the response
    // with its id, and a ping sharing it answered first had a failed call audited ok.
    const ids = messages.flatMap((m) => (typeof m.method === "string" && m.id !== undefined ? [JSON.stringify(m.id)] : []));
    const dup = ids.find((x, i) => ids.indexOf(x) !== i);
    if (dup !== undefined) return { status: 400, code: "DUPLICATE_ID", message: `the batch repeats JSON-RPC id ${dup}; give every request its own id.` };
    for (const c of calls) {
      try {
        canonicalJson(c.args);
      } catch (err) {
        return { status: 400, code: "INVALID_ARGUMENT", message: (err as Error).message };
      }
    }
    if (id.ambiguous) {
      return { status: 400, code: "IDENTITY_AMBIGUOUS", message: `the proxy sent ${id.ambiguous} more than once; identity headers must carry one value each (fix the proxy's configuration).` };
    }
    if (opts.rbac && !id.role) {
      return {
        status: 403,
        code: "RBAC_FORBIDDEN",
        message: id.user ? `user "${id.user}" has no role in the directory; ask an administrator to add the user or a group.` : "no authenticated identity: requests must come through the authentication proxy.",
      };
    }
    for (const c of calls) {
      const given = c.args.project_path;
      if (given !== undefined) {
        let same = false;
        try {
          // A directory inside the project is the project (as the stdio server answers).
          same = typeof given === "string" && isWithin(project, resolveProjectRoot(given));
        } catch {
          same = false;
        }
        if (!same) return { status: 403, code: "RBAC_FORBIDDEN", message: `this server serves only the project ${project}; project_path ${JSON.stringify(given)} is refused.` };
      }
      if (opts.rbac && !roleAllows(id.role!, c.tool)) {
        return { status: 403, code: "RBAC_FORBIDDEN", message: `role "${id.role}" may not call ${c.tool}.` };
      }
    }
    const limit = opts.rbac ? limitFor(id.role, opts.rateLimitPerMinute) : (opts.rateLimitPerMinute ?? 0);
    for (let i = 0; i < calls.length; i++) {
      const r = limiter.take(id.user ? `u:${id.user}` : `p:${id.peer}`, limit);
      if (!r.ok) {
        return { status: 429, code: "RATE_LIMITED", message: `more than ${limit} calls per minute; retry in ${r.retryAfterSeconds} s.`, retryAfter: r.retryAfterSeconds };
      }
    }
    for (const c of calls) c.params.arguments = { ...c.args, project_path: project };
    return undefined;
  };

  const handleMcp = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.method !== "POST") {
      // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
      sendJson(res, 405, { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this server is stateless; POST JSON-RPC requests to /mcp." }, id: null }, { allow: "POST" });
      return;
    }
    const raw = await readBody(req);
    if (raw === "too_large") {
      sendJson(res, 413, { jsonrpc: "2.0", error: { code: -32600, message: `request body over ${MAX_BODY_BYTES} bytes` }, id: null });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      sendJson(res, 400, { jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not JSON." }, id: null });
      return;
    }
    const messages = (Array.isArray(body) ? body : [body]).filter((m): m is Json => typeof m === "object" && m !== null);
    const calls: ToolCall[] = messages
      .filter((m) => m.method === "tools/call")
      .map((m) => {
        if (typeof m.params !== "object" || m.params === null) m.params = {};
        const p = m.params as Json;
        const args = p.arguments && typeof p.arguments === "object" && !Array.isArray(p.arguments) ? (p.arguments as Json) : {};
        return { id: m.id as string | number | undefined, tool: String(p.name ?? ""), args, params: p };
      });

    let dir: Directory = { users: {}, groups: {} };
    if (opts.rbac) {
      try {
        dir = directory.get();
      } catch (err) {
        // Fail closed, and tell the operator, not the caller, which file is broken and why.
        log.error("role directory unusable; refusing requests until it is fixed", { file: opts.directoryFile, error: (err as Error).message });
        sendJson(res, 503, { error: { code: "CONFIG_INVALID", message: "the server's role directory cannot be used; the operator has the details in the server log." } });
        return;
      }
    }
    const peer = opts.socket ? "unix-socket" : req.socket.remoteAddress;
    const fromProxy = (opts.socket !== undefined || trusted.has(peer)) && (!secret || secret.matches(req.headersDistinct));
    const id = identify(peer, req.headersDistinct, fromProxy, dir);
    if (messages.length > MAX_BATCH) {
      // One audit line for the whole batch, not one per message.
      refuse(res, id, [{ tool: "(batch)", args: { messages: messages.length } }], { status: 400, code: "BATCH_TOO_LARGE", message: `a batch of ${messages.length} JSON-RPC messages; send at most ${MAX_BATCH} per request.` });
      return;
    }
    const refusal = check(id, calls, messages);
    if (refusal) {
      const audited = calls.length ? calls : messages.map((m) => ({ tool: String(m.method ?? "unknown"), args: m.params ?? {} }));
      refuse(res, id, audited, refusal);
      return;
    }

    // Stateless: a fresh transport per request, on a pooled MCP server (building one costs ~9 ms).
    // Each request carries its own identity from the proxy, so no session can leak between users.
    const server = idle.pop() ?? createMcpServer(opts.served);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const pending = new Map<string | number, ToolCall & { t0: number }>();
    const t0 = performance.now();
    for (const c of calls) if (c.id !== undefined) pending.set(c.id, { ...c, t0 });
    const finish = (key: string | number, outcome: AuditOutcome, code?: string) => {
      const c = pending.get(key);
      if (!c) return;
      pending.delete(key);
      queryDuration.observe({ tool: metricName(c.tool) }, (performance.now() - c.t0) / 1000);
      record(id, { tool: c.tool, args: c.args }, outcome, code);
    };
    const send = transport.send.bind(transport);
    transport.send = async (msg: JSONRPCMessage, o) => {
      const m = msg as Json;
      if ("id" in m && pending.has(m.id as string | number)) {
        const result = m.result as Json | undefined;
        if (m.error) finish(m.id as string | number, "error", String((m.error as Json).code));
        else if (result?.isError) {
          const text = String(((result.content as Json[] | undefined)?.[0]?.text as string | undefined) ?? "");
          finish(m.id as string | number, "error", /^([A-Z_]+):/.exec(text)?.[1] ?? "TOOL_ERROR");
        } else finish(m.id as string | number, "ok");
      }
      return send(msg, o);
    };
    res.on("close", () => {
      for (const key of [...pending.keys()]) finish(key, "error", "ABORTED");
      server
        .close()
        .then(() => {
          if (idle.length < IDLE_SERVERS) idle.push(server);
        })
        .catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, Array.isArray(body) ? messages : messages[0]);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    // Network access is for trusted address ranges only (--allow-from), whatever the path; a socket's
    // file mode decides who reaches it.
    if (!opts.socket && !allowed.has(req.socket.remoteAddress)) {
      rejections.inc({ reason: "address", role: "none" });
      sendJson(res, 403, { error: { code: "FORBIDDEN", message: `${req.socket.remoteAddress ?? "this address"} is not in the server's allowed ranges; the operator can add it with --allow-from.` } });
      return;
    }
    // A page of evil.example whose name was rebound to this address is same-origin to the browser.
    if (!names.allows(req.headers.host)) {
      sendJson(res, 403, { error: { code: "FORBIDDEN_HOST", message: `Host ${JSON.stringify(req.headers.host ?? "")} is not a name of this server; the operator can add it with --allow-host.` } });
      return;
    }
    // Another site's page may still send to a name we answer (no-cors requests): not from a browser then.
    if (!names.allowsOrigin(req.headers.origin)) {
      sendJson(res, 403, { error: { code: "FORBIDDEN_ORIGIN", message: `requests from pages of ${JSON.stringify(req.headers.origin)} are not served; the operator can add its name with --allow-host.` } });
      return;
    }
    if (url.pathname === "/mcp") return handleMcp(req, res);
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendJson(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: `${req.method} ${url.pathname} is not served; use GET.` } }, { allow: "GET" });
      return;
    }
    switch (url.pathname) {
      case "/health":
        return sendJson(res, 200, { status: "healthy" });
      case "/ready":
        if (!audit.writable()) {
          log.error("audit log not writable; not ready", { project });
          return sendJson(res, 503, { ready: false, reason: "AUDIT_UNAVAILABLE: the audit log cannot be written; calls are refused until it can." });
        }
        try {
          const s = await stats();
          return sendJson(res, 200, { ready: true, nodes_indexed: s.node_count });
        } catch (err) {
          const e = asCodememError(err);
          return sendJson(res, 503, { ready: false, reason: `${e.code}: ${e.message}` });
        }
      case "/status": {
        const base = { index_version: INDEX_VERSION, uptime_seconds: Math.floor((Date.now() - started) / 1000) };
        try {
          const s = await stats();
          return sendJson(res, 200, { status: "healthy", ...base, backend: s.backend, nodes_indexed: s.node_count, last_build: s.last_build });
        } catch (err) {
          const e = asCodememError(err);
          return sendJson(res, 503, { status: "unready", ...base, backend: configuredBackend(), nodes_indexed: 0, last_build: null, reason: `${e.code}: ${e.message}` });
        }
      }
      case "/metrics": {
        const text = await registry.metrics();
        res.writeHead(200, { "content-type": registry.contentType, "content-length": Buffer.byteLength(text) });
        return res.end(text);
      }
      default:
        return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no route ${url.pathname}; routes: /mcp, /health, /ready, /status, /metrics.` } });
    }
  };

  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((err) => {
      const e = asCodememError(err);
      log.error("http request failed", { path: req.url, code: e.code, error: e.message });
      if (!res.headersSent) sendJson(res, 500, { error: { code: e.code, message: e.message } });
      else res.destroy();
    });
  };
  let server: http.Server;
  try {
    server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, listener) : http.createServer(listener);
  } catch (err) {
    audit.close();
    throw new CodememError("CONFIG_INVALID", `TLS certificate or key is not usable (${(err as Error).message}); pass a PEM certificate and its matching private key.`);
  }
  try {
    if (opts.socket) await listenUnix(server, opts.socket, opts.socketGroup);
    else {
      await new Promise<void>((resolve, reject) => {
        server.once("error", (err: NodeJS.ErrnoException) => {
          reject(new CodememError("INVALID_ARGUMENT", `cannot listen on ${host}:${opts.port} (${err.code ?? err.message}); choose another --port or --host.`));
        });
        server.listen(opts.port, host, () => resolve());
      });
    }
  } catch (err) {
    audit.close();
    throw err;
  }
  const addr = server.address() as AddressInfo;
  const scheme = tls ? "https" : "http";
  const url = opts.socket ? `${scheme}+unix://${encodeURIComponent(opts.socket)}` : `${scheme}://${addr.family === "IPv6" ? `[${addr.address}]` : addr.address}:${addr.port}`;
  log.info("http server listening", { url, project, rbac: opts.rbac, tls: Boolean(tls) });
  warnExposure(opts, host, Boolean(tls), trusted, secret);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          clearInterval(sweep);
          refusals.drain(Date.now(), true).forEach(recordSuppressed);
          audit.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/** Start-up warnings for setups that let others in: a loopback proxy without a secret, a network bind without TLS or RBAC. */
function warnExposure(opts: HttpServerOptions, host: string, tls: boolean, trusted: AddressRanges, secret: ProxySecret | undefined): void {
  if (!opts.socket && !secret && (trusted.has("127.0.0.1") || trusted.has("::1"))) {
    log.warn("a loopback address is a trusted proxy: every local user's process can connect to the port and claim any identity in X-Forwarded-User", {
      code: "TRUSTED_PROXY_LOOPBACK",
      trusted_proxies: opts.trustedProxies,
      fix: "listen on --socket PATH (owner-only; nginx: proxy_pass http://unix:PATH:) or add --proxy-secret-file FILE",
    });
  }
  if (!opts.socket && !isLoopbackBind(host) && (!tls || !opts.rbac)) {
    log.warn("listening beyond this machine without " + [...(tls ? [] : ["TLS"]), ...(opts.rbac ? [] : ["RBAC"])].join(" or "), {
      code: "NETWORK_WITHOUT_TLS_OR_RBAC",
      host,
      tls,
      rbac: opts.rbac,
      fix: "add --tls-cert/--tls-key and --rbac-enabled, or bind 127.0.0.1 behind a proxy",
    });
  }
}
