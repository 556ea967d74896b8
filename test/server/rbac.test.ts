import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAudit } from "../../dist/client/audit.js";
import { startHttpServer } from "../../dist/client/http.js";
import { limitFor, permissionOf, RateLimiter, RefusalBudget, roleFor, AddressRanges } from "../../dist/client/rbac.js";
import { callDaemon, stopDaemon } from "../../dist/client/rpc.js";
import { makeProject, PY_PROJECT } from "../helpers.js";
import { metricValue, rpc, toolCall } from "./helpers.js";

const DIRECTORY = {
  users: { "alice@example.com": "viewer", "carol@example.com": "viewer", "dave@example.com": "developer" },
  groups: { admins: "admin", readers: "viewer", devs: "developer" },
};

let p: ReturnType<typeof makeProject>;
let srv: Awaited<ReturnType<typeof startHttpServer>>;
let dirFile: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  p = makeProject(PY_PROJECT);
  dirFile = path.join(p.root, "directory.json");
  fs.writeFileSync(dirFile, JSON.stringify(DIRECTORY));
  await callDaemon(p.root, "build", { project_path: p.root }, { source: "test" });
  // Tests run on loopback, so the trusted proxy list is set explicitly.
  srv = await startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: ["127.0.0.1", "::1"], directoryFile: dirFile });
  closers.push(() => srv.close());
});
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
  await stopDaemon(p.root);
  p.cleanup();
});

const as = (user: string, groups?: string) => ({ "x-forwarded-user": user, ...(groups ? { "x-forwarded-groups": groups } : {}) });
const metrics = async (base = srv.url) => (await fetch(`${base}/metrics`)).text();

describe("RBAC and rate limits", () => {
  it("maps tools to the spec's permissions and picks the highest role", () => {
    expect(permissionOf("codemem_query")).toBe("query");
    expect(permissionOf("codemem_audit_report")).toBe("audit-report");
    expect(roleFor(DIRECTORY as any, "alice@example.com", ["devs"])).toBe("developer");
    expect(roleFor(DIRECTORY as any, "alice@example.com", ["devs", "admins"])).toBe("admin");
    expect(roleFor(DIRECTORY as any, "nobody", ["unknown"])).toBeUndefined();
    expect([limitFor("viewer"), limitFor("developer"), limitFor("admin"), limitFor("viewer", 5), limitFor("admin", 5)]).toEqual([30, 60, 0, 5, 0]);
    const t = new AddressRanges(["10.0.0.0/8", "::1"]);
    expect([t.has("10.2.3.4"), t.has("::ffff:10.2.3.4"), t.has("::1"), t.has("127.0.0.1"), t.has(undefined)]).toEqual([true, true, true, false, false]);
    expect(() => new AddressRanges(["proxy.local"])).toThrowError(expect.objectContaining({ code: "CONFIG_INVALID" }));
    const rl = new RateLimiter();
    for (let i = 0; i < 3; i++) expect(rl.take("u", 3, 1000 + i).ok).toBe(true);
    expect(rl.take("u", 3, 1010)).toEqual({ ok: false, retryAfterSeconds: 60 });
    expect(rl.take("u", 3, 61_001).ok).toBe(true); // the first call left the window
  });

  it("refusals past a key's budget are counted, not recorded, and each window that suppressed some is summarised once", () => {
    const b = new RefusalBudget(2, 60_000);
    expect([b.take("p:1", "anonymous", "1", 0).record, b.take("p:1", "anonymous", "1", 10).record]).toEqual([true, true]);
    expect(b.take("p:1", "anonymous", "1", 20_000)).toEqual({ record: false, retryAfterSeconds: 40 });
    b.take("p:1", "anonymous", "1", 30_000);
    expect(b.take("p:2", "anonymous", "2", 30_000).record).toBe(true); // another peer has its own budget
    expect(b.drain(59_999)).toEqual([]); // nothing has ended yet
    // the next refusal after the window starts a new one and hands back the old one's count
    expect(b.take("p:1", "anonymous", "1", 70_000)).toEqual({ record: true, retryAfterSeconds: 60, ended: { who: "anonymous", peer: "1", suppressed: 2, start: 0, end: 60_000 } });
    for (let i = 0; i < 3; i++) b.take("p:1", "anonymous", "1", 71_000);
    // the sweep drops ended windows and returns only those that suppressed refusals; at shutdown, all
    expect(b.drain(100_000)).toEqual([]);
    expect(b.drain(100_000, true)).toEqual([{ who: "anonymous", peer: "1", suppressed: 2, start: 70_000, end: 100_000 }]);
    expect(b.drain(200_000, true)).toEqual([]);
  });

  it("a viewer can list and query through the SDK client, but not build", async () => {
    const client = new Client({ name: "viewer", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: as("alice@example.com") } }));
    closers.push(() => client.close());
    expect((await client.listTools()).tools.length).toBe(15);
    const q = await client.callTool({ name: "codemem_query", arguments: { project_path: p.root, question: "How is tax applied to an order?" } });
    expect(q.isError).toBeFalsy();
    await expect(client.callTool({ name: "codemem_build", arguments: { project_path: p.root } })).rejects.toThrow(/403|RBAC_FORBIDDEN/);

    const b = await toolCall(srv.url, "codemem_build", { project_path: p.root }, as("alice@example.com"));
    expect(b.status).toBe(403);
    expect(b.body.error.code).toBe("RBAC_FORBIDDEN");
    expect(metricValue(await metrics(), "codemem_rbac_rejections_total", { reason: "forbidden", role: "viewer" })).toBe(2);
  });

  it("roles through groups: a developer gets skeleton, an admin gets stats", async () => {
    const sk = await toolCall(srv.url, "codemem_skeleton", { project_path: p.root, file_path: "shop/models.py" }, as("erin@example.com", "readers, devs"));
    expect(sk.status).toBe(200);
    expect(sk.body.result.content[0].text).toMatch(/class Order/);
    // the graph questions are a developer's too (read-only, like skeleton), not a viewer's
    const tr = await toolCall(srv.url, "codemem_trace", { project_path: p.root, symbol: "Order" }, as("erin@example.com", "readers, devs"));
    expect(tr.status).toBe(200);
    expect((await toolCall(srv.url, "codemem_impact", { project_path: p.root, files: ["shop/models.py"] }, as("alice@example.com"))).status).toBe(403);
    expect((await toolCall(srv.url, "codemem_stats", { project_path: p.root }, as("dave@example.com"))).status).toBe(403);
    const st = await toolCall(srv.url, "codemem_stats", { project_path: p.root }, as("frank@example.com", "admins"));
    expect(st.status).toBe(200);
    expect(st.body.result.structuredContent.node_count).toBeGreaterThan(5);
  });

  it("a role claimed in arguments or headers gets nothing more", async () => {
    const claim = { "x-role": "admin", "x-forwarded-role": "admin", "x-auth-request-role": "admin" };
    const r = await toolCall(srv.url, "codemem_build", { project_path: p.root, role: "admin", user: "root", is_admin: true }, { ...as("alice@example.com"), ...claim });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("RBAC_FORBIDDEN");
    // no identity at all: even initialize and tools/list are refused
    const anon = await rpc(srv.url, "tools/list", {}, claim);
    expect(anon.status).toBe(403);
    expect((await toolCall(srv.url, "codemem_query", { project_path: p.root, question: "tax", role: "admin" }, claim)).status).toBe(403);
    // an unknown user
    expect((await rpc(srv.url, "tools/list", {}, as("mallory@example.com"))).status).toBe(403);
  });

  it("identity comes from X-Forwarded-User and X-Forwarded-Groups only, one value each", async () => {
    // Headers a proxy that sets only X-Forwarded-* passes through from the client name nobody.
    const fallback = { ...as("alice@example.com"), "x-auth-request-groups": "admins", "x-auth-request-user": "frank@example.com", "x-auth-request-email": "frank@example.com" };
    const b = await toolCall(srv.url, "codemem_stats", { project_path: p.root }, fallback);
    expect(b.status).toBe(403);
    expect(b.body.error.message).toMatch(/role "viewer"/);
    // A header given twice is refused, not merged into "readers, admins".
    const raw = (headers: http.OutgoingHttpHeaders) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "codemem_stats", arguments: { project_path: p.root } } });
        const req = http.request(`${srv.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
          let text = "";
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
        });
        req.on("error", reject);
        req.end(body);
      });
    const twice = await raw({ "x-forwarded-user": "alice@example.com", "x-forwarded-groups": ["readers", "admins"] });
    expect(twice.status).toBe(400);
    expect(twice.body.error.code).toBe("IDENTITY_AMBIGUOUS");
    expect(twice.body.error.message).toMatch(/x-forwarded-groups/);
    expect((await raw({ "x-forwarded-user": ["alice@example.com", "frank@example.com"], "x-forwarded-groups": "admins" })).status).toBe(400);
    // one value each: the admin group is honoured as before
    expect((await raw({ "x-forwarded-user": "frank@example.com", "x-forwarded-groups": "admins" })).status).toBe(200);
    const lines = verifyAudit(p.root).files.flatMap((f) => fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l)));
    expect(lines.filter((e) => e.code === "IDENTITY_AMBIGUOUS" && e.outcome === "forbidden").length).toBe(2);
  });

  it("a roles-file edit is seen even when it keeps size and mtime; a broken file fails closed without telling callers why", async () => {
    const file = path.join(p.root, "roles-edit.json");
    const revoked = JSON.stringify({ users: { "gina@example.com": "viewer" }, groups: {} });
    const grant = JSON.stringify({ users: { "gina@example.com": "admin" }, groups: {} }).padEnd(revoked.length, " ");
    fs.writeFileSync(file, grant);
    const t = Math.floor(Date.now() / 1000) - 60; // whole seconds: utimes restores them exactly
    fs.utimesSync(file, t, t);
    const s2 = await startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: ["127.0.0.1", "::1"], directoryFile: file });
    closers.push(() => s2.close());
    const stats = () => toolCall(s2.url, "codemem_stats", { project_path: p.root }, as("gina@example.com"));
    expect((await stats()).status).toBe(200);
    // Revoke to viewer with the same size, then put the old mtime back.
    const before = fs.statSync(file);
    expect(revoked.length).toBe(grant.length);
    fs.writeFileSync(file, revoked);
    fs.utimesSync(file, t, t);
    expect(fs.statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect((await stats()).status).toBe(403);
    fs.writeFileSync(file, "{ not json");
    const broken = await stats();
    expect(broken.status).toBe(503);
    expect(broken.body.error.code).toBe("CONFIG_INVALID");
    expect(JSON.stringify(broken.body)).not.toContain("roles-edit.json");
    expect(JSON.stringify(broken.body)).not.toMatch(/JSON at position|Unexpected token/);
  });

  it("no proxy is trusted unless configured: RBAC without one refuses to start", async () => {
    await expect(startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: [], directoryFile: dirFile })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("--trusted-proxy"),
    });
    const { parseShimArgs } = await import("../../dist/client/mcp.js");
    expect(parseShimArgs([p.root, "--port", "0"]).http!.trustedProxies).toEqual([]);
  });

  it("identity headers from an untrusted peer are ignored", async () => {
    const untrusted = await startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: ["10.9.9.9"], directoryFile: dirFile });
    closers.push(() => untrusted.close());
    const r = await toolCall(untrusted.url, "codemem_query", { project_path: p.root, question: "tax" }, as("frank@example.com", "admins"));
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("RBAC_FORBIDDEN");
    expect((await rpc(untrusted.url, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } }, as("frank@example.com", "admins"))).status).toBe(403);
    expect(metricValue(await metrics(untrusted.url), "codemem_rbac_rejections_total", { reason: "forbidden", role: "none" })).toBe(2);
  });

  it("the 31st viewer call within a minute is refused with 429 and Retry-After; another user is unaffected", async () => {
    const carol = as("carol@example.com");
    for (let i = 0; i < 30; i++) {
      const r = await toolCall(srv.url, "codemem_search", { project_path: p.root, query: "order", limit: 1 }, carol);
      expect(r.status, `call ${i + 1}`).toBe(200);
    }
    const r31 = await toolCall(srv.url, "codemem_search", { project_path: p.root, query: "order", limit: 1 }, carol);
    expect(r31.status).toBe(429);
    expect(r31.body.error.code).toBe("RATE_LIMITED");
    const retry = Number(r31.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // forbidden calls do not consume quota, and other users have their own
    expect((await toolCall(srv.url, "codemem_search", { project_path: p.root, query: "order", limit: 1 }, as("alice@example.com"))).status).toBe(200);
    // tools/list is not a tool call and stays available
    expect((await rpc(srv.url, "tools/list", {}, carol)).status).toBe(200);
    expect(metricValue(await metrics(), "codemem_rbac_rejections_total", { reason: "rate_limited", role: "viewer" })).toBe(1);
  });

  it("--rate-limit-per-minute caps every non-admin role; admins stay unlimited", async () => {
    const capped = await startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: ["127.0.0.1", "::1"], directoryFile: dirFile, rateLimitPerMinute: 2 });
    closers.push(() => capped.close());
    const call = (h: Record<string, string>) => toolCall(capped.url, "codemem_search", { project_path: p.root, query: "tax", limit: 1 }, h);
    expect((await call(as("dave@example.com"))).status).toBe(200);
    expect((await call(as("dave@example.com"))).status).toBe(200);
    expect((await call(as("dave@example.com"))).status).toBe(429);
    for (let i = 0; i < 4; i++) expect((await call(as("frank@example.com", "admins"))).status).toBe(200);
  });

  it("every allowed and refused call is audited with who, role, outcome; the chain verifies", async () => {
    const v = verifyAudit(p.root);
    expect(v.ok).toBe(true);
    expect(v.by_outcome.ok).toBeGreaterThanOrEqual(30);
    expect(v.by_outcome.forbidden).toBeGreaterThanOrEqual(5);
    expect(v.by_outcome.rate_limited).toBe(2);
    expect(v.by_user["carol@example.com"]).toBe(31);
    const lines = v.files.flatMap((f) => fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l)));
    const refused = lines.find((e) => e.who === "alice@example.com" && e.tool === "codemem_build");
    expect(refused).toMatchObject({ role: "viewer", outcome: "forbidden", code: "RBAC_FORBIDDEN", args_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(lines.find((e) => e.who === "alice@example.com" && e.tool === "codemem_query")).toMatchObject({ role: "viewer", outcome: "ok" });
    expect(lines.find((e) => e.outcome === "rate_limited")).toMatchObject({ who: "carol@example.com", code: "RATE_LIMITED" });
    // arguments are never stored
    expect(fs.readFileSync(v.files[0]!, "utf8")).not.toContain("How is tax applied");
    expect(metricValue(await metrics(), "codemem_audit_events_total")).toBeGreaterThanOrEqual(35);

    // tamper with a middle line of the server's own log
    const file = v.files[0]!;
    const text = fs.readFileSync(file, "utf8").split("\n");
    const mid = Math.floor(text.length / 2);
    text[mid] = text[mid]!.replace(/"who":"[a-z]/, (s) => s.slice(0, -1) + (s.endsWith("x") ? "y" : "x"));
    fs.writeFileSync(file, text.join("\n"));
    expect(verifyAudit(p.root).first_bad).toEqual({ file, line: mid + 1, reason: "hash_mismatch" });
  });
});
