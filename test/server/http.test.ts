import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAudit } from "../../dist/client/audit.js";
import { REFUSALS_AUDITED_PER_MINUTE, startHttpServer } from "../../dist/client/http.js";
import { parseShimArgs } from "../../dist/client/mcp.js";
import { callDaemon, stopDaemon } from "../../dist/client/rpc.js";
import os from "node:os";
import { makeProject, PY_PROJECT } from "../helpers.js";
import { httpsFetch, metricValue, selfSignedCert, toolCall } from "./helpers.js";

let p: ReturnType<typeof makeProject>;
let srv: Awaited<ReturnType<typeof startHttpServer>>;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  p = makeProject(PY_PROJECT);
  srv = await startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: ["127.0.0.1"] });
  closers.push(() => srv.close());
});
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
  await stopDaemon(p.root);
  p.cleanup();
});

/** Every entry of a project's audit log, in order. */
const auditLines = (root: string) =>
  verifyAudit(root).files.flatMap((f) => fs.readFileSync(f, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>));
const postTo = (base: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(body) });

const get = async (route: string) => {
  const res = await fetch(`${srv.url}${route}`);
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
};

describe("HTTP surface: probes, status, metrics, MCP", () => {
  it("binds to 127.0.0.1 and is live before the index exists, but not ready", async () => {
    expect(srv.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const h = await get("/health");
    expect(h.status).toBe(200);
    expect(JSON.parse(h.text)).toEqual({ status: "healthy" });
    const r = await get("/ready");
    expect(r.status).toBe(503);
    expect(JSON.parse(r.text)).toMatchObject({ ready: false, reason: expect.stringMatching(/INDEX_MISSING|GRAPH_MISSING/) });
    const st = await get("/status");
    expect(st.status).toBe(503);
    // The spec's fields, backend among them, before the first build too.
    expect(JSON.parse(st.text)).toMatchObject({ status: "unready", backend: "local", nodes_indexed: 0, last_build: null, reason: expect.stringMatching(/INDEX_MISSING/) });
    expect((await get("/nope")).status).toBe(404);
  });

  it("is ready after a build and reports the spec's status fields", async () => {
    await callDaemon(p.root, "build", { project_path: p.root }, { source: "test" });
    const r = await get("/ready");
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toMatchObject({ ready: true });
    const s = await get("/status");
    expect(s.status).toBe(200);
    const st = JSON.parse(s.text);
    expect(st).toEqual({ status: "healthy", index_version: "1", nodes_indexed: expect.any(Number), last_build: expect.any(String), backend: "local", uptime_seconds: expect.any(Number) });
    expect(st.nodes_indexed).toBeGreaterThan(5);
    expect(new Date(st.last_build).toISOString()).toBe(st.last_build);
    expect(Number.isInteger(st.uptime_seconds)).toBe(true);
  });

  it("serves MCP over Streamable HTTP to the SDK client, and times calls per tool", async () => {
    const client = new Client({ name: "codemem-http-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
    closers.push(() => client.close());
    const list = await client.listTools();
    expect(list.tools.length).toBe(15);
    const q = await client.callTool({ name: "codemem_query", arguments: { project_path: p.root, question: "How are card payments retried?" } });
    expect(q.isError).toBeFalsy();
    expect((q.content as any)[0].text).toMatch(/shop\/payments\.py:\d+-\d+/);
    const s = await client.callTool({ name: "codemem_search", arguments: { project_path: p.root, query: "VAT" } });
    expect((s.structuredContent as any).results[0].name).toBe("apply_tax");
    // a project other than the served one is refused at the door
    const other = await toolCall(srv.url, "codemem_stats", { project_path: path.dirname(p.root) });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe("RBAC_FORBIDDEN");
    // a directory inside it is the project (old code: 403 too)
    const inside = await toolCall(srv.url, "codemem_stats", { project_path: path.join(p.root, "shop") });
    expect([inside.status, inside.body.result?.isError]).toEqual([200, undefined]);
    // GET (server stream) is not offered by the stateless server
    expect((await fetch(`${srv.url}/mcp`, { headers: { accept: "text/event-stream" } })).status).toBe(405);

    const m = await get("/metrics");
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain/);
    for (const name of ["codemem_query_duration_seconds", "codemem_index_size_bytes", "codemem_rbac_rejections_total", "codemem_audit_events_total"]) {
      expect(m.text).toContain(`# TYPE ${name} `);
    }
    expect(m.text).toContain("# TYPE codemem_query_duration_seconds histogram");
    expect(metricValue(m.text, "codemem_query_duration_seconds_count", { tool: "codemem_query" })).toBe(1);
    expect(metricValue(m.text, "codemem_query_duration_seconds_count", { tool: "codemem_search" })).toBe(1);
    expect(metricValue(m.text, "codemem_index_size_bytes")).toBeGreaterThan(1000);
    // three tool calls and one refusal were audited
    expect(metricValue(m.text, "codemem_audit_events_total")).toBe(4);
    expect(metricValue(m.text, "codemem_rbac_rejections_total", { reason: "forbidden", role: "none" })).toBe(1);
  });

  it("bounds what unauthenticated traffic can make it record: long names, made-up tools, huge batches", async () => {
    const post = (body: unknown) =>
      fetch(`${srv.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(body) });
    const auditBytes = () => fs.readdirSync(path.join(p.root, ".codemem/audit")).reduce((n, f) => n + fs.statSync(path.join(p.root, ".codemem/audit", f)).size, 0);
    const before = auditBytes();
    const long = "codemem_" + "x".repeat(3_000_000);
    const r1 = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: long, arguments: {} } });
    expect(r1.status).toBe(200);
    for (let i = 0; i < 20; i++) await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: `codemem_made_up_${i}`, arguments: {} } });
    const batch = Array.from({ length: 5000 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "codemem_stats", arguments: {} } }));
    const r2 = await post(batch);
    expect(r2.status).toBe(400);
    expect((await r2.json()).error.code).toBe("BATCH_TOO_LARGE");
    // 22 entries of a few hundred bytes each, not megabytes
    expect(auditBytes() - before).toBeLessThan(22 * 1000);
    const m = await (await fetch(`${srv.url}/metrics`)).text();
    expect(m).not.toContain("codemem_made_up_");
    expect(m).not.toContain("xxxxxxxxxx");
    expect(metricValue(m, "codemem_query_duration_seconds_count", { tool: "unknown" })).toBe(21);
  });

  it("serves only what it can audit: one entry per call, deep arguments refused, an unwritable log stops it", async () => {
    const post = (body: unknown) =>
      fetch(`${srv.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(body) });
    const entries = () => fs.readdirSync(path.join(p.root, ".codemem/audit")).reduce((n, f) => n + fs.readFileSync(path.join(p.root, ".codemem/audit", f), "utf8").trim().split("\n").length, 0);
    // A batch repeating one id ran every call and audited one. Refused now, in one line naming its count.
    const before = entries();
    const same = [1, 2, 3].map(() => ({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "codemem_stats", arguments: {} } }));
    const r1 = await post(same);
    expect(r1.status).toBe(400);
    expect((await r1.json()).error.code).toBe("DUPLICATE_ID");
    expect(entries() - before).toBe(1);
    expect(auditLines(p.root).at(-1)).toMatchObject({ tool: "(batch)", count: 3, outcome: "forbidden", code: "DUPLICATE_ID" });
    // Arguments nested too deep to hash were served unaudited.
    const r2 = await fetch(`${srv.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"codemem_search","arguments":{"query":"tax","extra":${"[".repeat(5000)}1${"]".repeat(5000)}}}}`,
    });
    expect(r2.status).toBe(400);
    expect((await r2.json()).error.code).toBe("INVALID_ARGUMENT");
    expect(entries() - before).toBe(2);
    // An audit log that cannot be written (here its directory replaced by a file, which stops root
    // too): not ready, and calls are refused instead of served unrecorded.
    const dir = path.join(p.root, ".codemem/audit");
    fs.renameSync(dir, `${dir}.aside`);
    fs.writeFileSync(dir, "not a directory");
    try {
      const ready = await fetch(`${srv.url}/ready`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).reason).toMatch(/AUDIT_UNAVAILABLE/);
      const r3 = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "codemem_stats", arguments: {} } });
      expect(r3.status).toBe(503);
      expect((await r3.json()).error.code).toBe("AUDIT_UNAVAILABLE");
    } finally {
      fs.rmSync(dir);
      fs.renameSync(`${dir}.aside`, dir);
    }
    expect((await fetch(`${srv.url}/ready`)).status).toBe(200);
  });

  it("a failed call sharing its id with a ping in one batch is not audited ok: ids must be unique across the batch", async () => {
    const failing = { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "codemem_no_such_tool", arguments: {} } };
    const before = auditLines(p.root).length;
    const shared = await postTo(srv.url, [failing, { jsonrpc: "2.0", id: 9, method: "ping" }]);
    expect(shared.status).toBe(400);
    expect((await shared.json()).error.code).toBe("DUPLICATE_ID");
    let added = auditLines(p.root).slice(before);
    expect(added).toEqual([expect.objectContaining({ tool: "codemem_no_such_tool", outcome: "forbidden", code: "DUPLICATE_ID" })]);
    // with ids of their own, each outcome is the call's own
    const own = await postTo(srv.url, [failing, { jsonrpc: "2.0", id: 10, method: "ping" }]);
    expect(own.status).toBe(200);
    added = auditLines(p.root).slice(before + 1);
    expect(added).toEqual([expect.objectContaining({ tool: "codemem_no_such_tool", outcome: "error" })]);
  });

  it("bounds refused traffic: past the budget a peer gets 429 unrecorded, one summary line per window; every field capped; /health still served", async () => {
    const q = makeProject({});
    const flood = await startHttpServer({ project: q.root, port: 0, rbac: false, trustedProxies: ["127.0.0.1"] });
    let closed = false;
    closers.push(async () => closed || flood.close(), async () => q.cleanup());
    const auditBytes = () => verifyAudit(q.root).files.reduce((n, f) => n + fs.statSync(f).size, 0);
    // 64 calls for a project the server does not serve: each request refused (403) as a whole.
    const batch = Array.from({ length: 64 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "codemem_stats", arguments: { project_path: os.tmpdir() } } }));
    const statuses: number[] = [];
    let retryAfter = "";
    for (let round = 0; round < 8; round++) {
      const [health, ...refused] = await Promise.all([fetch(`${flood.url}/health`), ...Array.from({ length: 10 }, () => postTo(flood.url, batch))]);
      expect(health.status).toBe(200);
      for (const r of refused) {
        statuses.push(r.status);
        if (r.status === 429) retryAfter = r.headers.get("retry-after") ?? "";
        await r.arrayBuffer();
      }
    }
    expect(statuses.filter((s) => s === 403).length).toBeGreaterThanOrEqual(REFUSALS_AUDITED_PER_MINUTE);
    const suppressed = statuses.filter((s) => s === 429).length;
    expect(suppressed).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    // A user name the size of a header is cut, not stored whole.
    await postTo(flood.url, batch.slice(0, 1), { "x-forwarded-user": "u".repeat(8000) });
    // Over a minute's budget (two, should the flood straddle a window), not 80 × 64 lines (2.3 MB before).
    expect(auditBytes()).toBeLessThan(2 * (REFUSALS_AUDITED_PER_MINUTE + 2) * 1000);
    await flood.close();
    closed = true;
    const lines = auditLines(q.root);
    for (const l of lines) expect(JSON.stringify(l).length).toBeLessThan(1000);
    expect(lines.find((l) => String(l.who).startsWith("uuu"))!.who.length).toBeLessThan(300);
    // every refusal is accounted for: recorded one by one, or counted in a summary line
    const summaries = lines.filter((l) => l.code === "REFUSALS_SUPPRESSED");
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.reduce((n, l) => n + l.count, 0)).toBe(suppressed);
    expect(lines.filter((l) => l.who === "anonymous" && l.code === "RBAC_FORBIDDEN").length + suppressed).toBe(80);
    expect(verifyAudit(q.root)).toMatchObject({ ok: true, anchored: true });
  });

  it("an audit anchor that cannot be written: not ready and calls refused, and the chain verifies once it can be written again", async () => {
    // A state directory of this test's own, so other test files' anchors are untouched.
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-test-state-"));
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = state;
    const q = makeProject({});
    const s = await startHttpServer({ project: q.root, port: 0, rbac: false, trustedProxies: [] });
    const call = () => postTo(s.url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "codemem_no_such_tool", arguments: {} } });
    try {
      expect((await call()).status).toBe(200);
      // The anchors' directory replaced by a file: this fails for root too (chmod would not).
      const dir = path.join(state, "codemem", "audit-anchors");
      expect(fs.readdirSync(dir).length).toBe(1);
      fs.renameSync(dir, `${dir}.aside`);
      fs.writeFileSync(dir, "not a directory");
      try {
        const ready = await fetch(`${s.url}/ready`);
        expect(ready.status).toBe(503);
        expect((await ready.json()).reason).toMatch(/AUDIT_UNAVAILABLE/);
        const refused = await call();
        expect(refused.status).toBe(503);
        expect((await refused.json()).error.code).toBe("AUDIT_UNAVAILABLE");
      } finally {
        fs.rmSync(dir);
        fs.renameSync(`${dir}.aside`, dir);
      }
      expect((await call()).status).toBe(200);
      expect(verifyAudit(q.root)).toMatchObject({ ok: true, entries: 2, anchored: true });
    } finally {
      await s.close();
      process.env.XDG_STATE_HOME = saved;
      q.cleanup();
      fs.rmSync(state, { recursive: true, force: true });
    }
  });

  it("serves HTTPS with --tls-cert/--tls-key and refuses unreadable TLS files clearly", async () => {
    const { cert, key } = selfSignedCert(p.root);
    const tls = await startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: [], tlsCert: cert, tlsKey: key });
    closers.push(() => tls.close());
    expect(tls.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const f = httpsFetch(fs.readFileSync(cert));
    const res = await f(`${tls.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "healthy" });
    // plain HTTP to the TLS port does not get an answer
    await expect(fetch(`${tls.url.replace("https", "http")}/health`)).rejects.toThrow();
    // the SDK client over TLS
    const client = new Client({ name: "tls", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${tls.url}/mcp`), { fetch: f }));
    closers.push(() => client.close());
    expect((await client.listTools()).tools.length).toBe(15);

    await expect(startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: [], tlsCert: path.join(p.root, "missing.pem"), tlsKey: key })).rejects.toMatchObject({
      code: "PATH_NOT_FOUND",
    });
    await expect(startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: [], tlsCert: cert })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: [], tlsCert: key, tlsKey: key })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: [] })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
  });

  it("serves only the allowed address ranges (default: loopback and private networks), refusing others with 403", async () => {
    const remote = await startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: [], allowFrom: ["10.0.0.0/8"] });
    closers.push(() => remote.close());
    for (const route of ["/health", "/status", "/mcp"]) {
      const r = await fetch(remote.url + route, route === "/mcp" ? { method: "POST", headers: { "content-type": "application/json" }, body: "{}" } : {});
      expect(r.status, route).toBe(403);
      expect((await r.json()).error).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("--allow-from") });
    }
    expect(await (await fetch(srv.url + "/health")).json()).toEqual({ status: "healthy" }); // default ranges include loopback
    await expect(startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: [], allowFrom: ["everyone"] })).rejects.toMatchObject({ code: "CONFIG_INVALID", message: expect.stringContaining('allowed client range "everyone"') });
  });

  it("codemem-mcp --port starts the HTTP server; HTTP-only flags without --port are refused", async () => {
    expect(() => parseShimArgs([p.root, "--tls-cert", "x.pem"])).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(() => parseShimArgs([p.root, "--port", "eighty"])).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    // a negative value reads as an option to Node's parser: still bad input, not INTERNAL
    expect(() => parseShimArgs([p.root, "--port", "0", "--rate-limit-per-minute", "-3"])).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT", message: expect.stringContaining("--rate-limit-per-minute") }));
    expect(() => parseShimArgs([p.root, "--port", "0", "--rate-limit-per-minute=-3"])).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    const o = parseShimArgs([p.root, "--port", "8000", "--rbac-enabled", "--rate-limit-per-minute", "60", "--trusted-proxy", "10.0.0.1", "--trusted-proxy", "10.1.0.0/16", "--allow-from", "10.0.0.0/8", "--directory-file", "dir.json"]);
    expect(o.http).toEqual({ port: 8000, host: undefined, tlsCert: undefined, tlsKey: undefined, rbac: true, rateLimitPerMinute: 60, trustedProxies: ["10.0.0.1", "10.1.0.0/16"], allowFrom: ["10.0.0.0/8"], directoryFile: path.resolve("dir.json") });
    expect(() => parseShimArgs([p.root, "--allow-from", "10.0.0.0/8"])).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(parseShimArgs([p.root]).http).toBeUndefined();

    // One server writes a project's audit log: a second one for this project is refused, and says why.
    const second = spawn(process.execPath, [path.resolve("dist/client/mcp.js"), p.root, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    second.stderr!.on("data", (d) => (err += d));
    expect(await new Promise((r) => second.once("exit", r))).not.toBe(0);
    expect(err).toMatch(/another codemem server \(pid \d+\) writes this project's audit log/);

    const other = makeProject(PY_PROJECT);
    closers.push(async () => other.cleanup(), () => stopDaemon(other.root));
    const child = spawn(process.execPath, [path.resolve("dist/client/mcp.js"), other.root, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    closers.push(async () => child.kill("SIGTERM"));
    const line = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("exit", (c) => reject(new Error(`codemem-mcp exited with ${c}`)));
    });
    const { url } = JSON.parse(line);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const exited = new Promise<number | null>((r) => child.once("exit", r));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
