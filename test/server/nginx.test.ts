import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAudit } from "../../dist/client/audit.js";
import { startHttpServer } from "../../dist/client/http.js";
import { callDaemon, stopDaemon } from "../../dist/client/rpc.js";
import { makeProject, PY_PROJECT } from "../helpers.js";
import { findNginx, freePort, httpsFetch, metricValue, selfSignedCert, toolCall } from "./helpers.js";

/**
 * End to end behind a real authentication proxy: nginx over TLS with auth_request to a token
 * endpoint that names the user and groups; codemem trusts those headers from nginx's address only.
 */
const NGINX_INSTALL = "apt-get install -y nginx-light";
const TOKENS: Record<string, { user: string; groups: string }> = {
  "tok-viewer": { user: "vera@example.com", groups: "" },
  "tok-dev": { user: "dan@example.com", groups: "devs" },
  "tok-admin": { user: "ada@example.com", groups: "staff,admins" },
};

let p: ReturnType<typeof makeProject>;
let tmp: string;
let nginx: ChildProcess | undefined;
let nginxLog = "";
let base: string;
let f: typeof fetch;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  const bin = findNginx();
  if (!bin) throw new Error(`nginx is not installed; this end-to-end test needs it: ${NGINX_INSTALL}`);
  p = makeProject(PY_PROJECT);
  tmp = fs.mkdtempSync(path.join(p.root, ".nginx-"));
  const { cert, key } = selfSignedCert(tmp);
  f = httpsFetch(fs.readFileSync(cert));
  const dirFile = path.join(tmp, "directory.json");
  fs.writeFileSync(dirFile, JSON.stringify({ users: { "vera@example.com": "viewer" }, groups: { devs: "developer", admins: "admin" } }));

  // The auth endpoint nginx asks before each request: bearer token → user and groups.
  const auth = http.createServer((req, res) => {
    const tok = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const who = tok ? TOKENS[tok] : undefined;
    if (!who) {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { "x-auth-request-user": who.user, "x-auth-request-groups": who.groups }).end();
  });
  await new Promise<void>((r) => auth.listen(0, "127.0.0.1", () => r()));
  closers.push(() => new Promise((r) => auth.close(r)));
  const authPort = (auth.address() as net.AddressInfo).port;

  await callDaemon(p.root, "build", { project_path: p.root }, { source: "test" });
  const srv = await startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: ["127.0.0.1"], directoryFile: dirFile });
  closers.push(() => srv.close());

  const port = await freePort();
  for (const d of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) fs.mkdirSync(path.join(tmp, d));
  const conf = path.join(tmp, "nginx.conf");
  fs.writeFileSync(
    conf,
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
events { worker_connections 128; }
http {
  access_log ${tmp}/access.log;
  client_body_temp_path ${tmp}/client_body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    location = /_auth {
      internal;
      proxy_pass http://127.0.0.1:${authPort}/auth;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
    }
    location / {
      auth_request /_auth;
      auth_request_set $auth_user $upstream_http_x_auth_request_user;
      auth_request_set $auth_groups $upstream_http_x_auth_request_groups;
      # the documented setup: identity in X-Forwarded-User/Groups from the auth endpoint (replacing
      # the client's); every other header the client sent, X-Auth-Request-* included, passes through
      proxy_set_header X-Forwarded-User $auth_user;
      proxy_set_header X-Forwarded-Groups $auth_groups;
      proxy_http_version 1.1;
      proxy_buffering off;
      proxy_pass ${srv.url};
    }
  }
}
`,
  );
  nginx = spawn(bin, ["-p", tmp, "-e", `${tmp}/error.log`, "-c", conf, "-g", "daemon off;"], { stdio: ["ignore", "pipe", "pipe"] });
  nginx.stderr!.on("data", (d) => (nginxLog += d));
  base = `https://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (nginx.exitCode !== null) throw new Error(`nginx exited (${nginx.exitCode}): ${nginxLog}${fs.existsSync(`${tmp}/error.log`) ? fs.readFileSync(`${tmp}/error.log`, "utf8") : ""}`);
    try {
      await f(`${base}/health`);
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${base}: ${(err as Error).message} ${nginxLog}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});

afterAll(async () => {
  if (nginx && nginx.exitCode === null) {
    const gone = new Promise((r) => nginx!.once("exit", r));
    nginx.kill("SIGQUIT");
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
    if (nginx.exitCode === null) nginx.kill("SIGKILL");
  }
  for (const c of closers.reverse()) await c().catch(() => undefined);
  if (p) {
    await stopDaemon(p.root);
    p.cleanup();
  }
});

const bearer = (tok: string) => ({ authorization: `Bearer ${tok}` });

describe("behind nginx with auth_request over TLS", () => {
  it("refuses requests without a valid token at the proxy", async () => {
    expect((await f(`${base}/status`)).status).toBe(401);
    expect((await toolCall(base, "codemem_query", { project_path: p.root, question: "tax" }, bearer("tok-forged"), f)).status).toBe(401);
    const ok = await f(`${base}/status`, { headers: bearer("tok-viewer") });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: "healthy", backend: "local" });
  });

  it("a viewer queries through the SDK client but cannot build, even claiming admin in headers and arguments", async () => {
    const client = new Client({ name: "viewer", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { fetch: f, requestInit: { headers: bearer("tok-viewer") } }));
    closers.push(() => client.close());
    expect((await client.listTools()).tools.length).toBe(15);
    const q = await client.callTool({ name: "codemem_query", arguments: { project_path: p.root, question: "How are card payments retried?" } });
    expect((q.content as any)[0].text).toMatch(/shop\/payments\.py:\d+-\d+/);

    const claim = {
      ...bearer("tok-viewer"),
      "x-forwarded-user": "ada@example.com",
      "x-forwarded-groups": "admins",
      "x-auth-request-user": "ada@example.com",
      "x-auth-request-email": "ada@example.com",
      "x-auth-request-groups": "admins",
      "x-role": "admin",
    };
    const b = await toolCall(base, "codemem_build", { project_path: p.root, role: "admin" }, claim, f);
    expect(b.status).toBe(403);
    expect(b.body.error.code).toBe("RBAC_FORBIDDEN");
    expect(b.body.error.message).toMatch(/role "viewer"/);
  });

  it("developers and admins get their roles from the directory through the proxy's groups", async () => {
    expect((await toolCall(base, "codemem_skeleton", { project_path: p.root, file_path: "shop/payments.py" }, bearer("tok-dev"), f)).status).toBe(200);
    expect((await toolCall(base, "codemem_stats", { project_path: p.root }, bearer("tok-dev"), f)).status).toBe(403);
    const st = await toolCall(base, "codemem_stats", { project_path: p.root }, bearer("tok-admin"), f);
    expect(st.status).toBe(200);
    expect(st.body.result.structuredContent.node_count).toBeGreaterThan(5);
  });

  it("the 31st viewer call in a minute gets 429 with Retry-After through the proxy", async () => {
    // one query above already counted against the viewer
    let status = 0;
    let n = 1;
    let last: Awaited<ReturnType<typeof toolCall>> | undefined;
    while (n < 40) {
      last = await toolCall(base, "codemem_search", { project_path: p.root, query: "card", limit: 1 }, bearer("tok-viewer"), f);
      n++;
      status = last.status;
      if (status !== 200) break;
    }
    expect(status).toBe(429);
    expect(n).toBe(31);
    expect(last!.body.error.code).toBe("RATE_LIMITED");
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("metrics and the audit log name the proxy's users and count the refusals", async () => {
    const m = await (await f(`${base}/metrics`, { headers: bearer("tok-admin") })).text();
    expect(metricValue(m, "codemem_rbac_rejections_total", { reason: "forbidden", role: "viewer" })).toBe(1);
    expect(metricValue(m, "codemem_rbac_rejections_total", { reason: "forbidden", role: "developer" })).toBe(1);
    expect(metricValue(m, "codemem_rbac_rejections_total", { reason: "rate_limited", role: "viewer" })).toBe(1);
    expect(metricValue(m, "codemem_query_duration_seconds_count", { tool: "codemem_search" })).toBe(29);
    const v = verifyAudit(p.root);
    expect(v.ok).toBe(true);
    expect(v.by_user).toMatchObject({ "vera@example.com": 32, "dan@example.com": 2, "ada@example.com": 1 });
    expect(v.by_outcome).toMatchObject({ ok: 32, forbidden: 2, rate_limited: 1 });
    expect(metricValue(m, "codemem_audit_events_total")).toBe(v.entries);
    const lines = v.files.flatMap((file) => fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l)));
    expect(lines.find((e) => e.tool === "codemem_build")).toMatchObject({ who: "vera@example.com", role: "viewer", outcome: "forbidden", peer: "127.0.0.1" });
  });
});
