import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAudit } from "../../dist/client/audit.js";
import { startHttpServer } from "../../dist/client/http.js";
import { parseShimArgs } from "../../dist/client/mcp.js";
import { callDaemon, stopDaemon } from "../../dist/client/rpc.js";
import { makeProject, PY_PROJECT } from "../helpers.js";
import { ACCEPT, findNginx, freePort, toolCall } from "./helpers.js";

/**
 * Who may speak for a user when the proxy is on the same host, and which names the server answers
 * to. The documented same-host setup is nginx → an owner-only Unix socket; a second local user
 * (created here, root only) tries the socket and forges X-Forwarded-User at a loopback port.
 */
const OTHER = "codemem-other";
const IS_ROOT = process.getuid?.() === 0;
const DIRECTORY = { users: { "alice@example.com": "admin" }, groups: {} };
const QUERY = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "codemem_stats", arguments: {} } };

let p: ReturnType<typeof makeProject>;
let q: ReturnType<typeof makeProject>;
let dirFile: string;
/** World-traversable (0755), so only the socket's own mode keeps another user out. */
let sockDir: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  p = makeProject(PY_PROJECT);
  q = makeProject(PY_PROJECT);
  dirFile = path.join(p.root, "directory.json");
  fs.writeFileSync(dirFile, JSON.stringify(DIRECTORY));
  sockDir = fs.mkdtempSync(path.join(os.tmpdir(), "cm-sock-"));
  fs.chmodSync(sockDir, 0o755);
  await callDaemon(p.root, "build", { project_path: p.root }, { source: "test" });
  if (IS_ROOT && spawnSync("id", [OTHER]).status !== 0) execFileSync("useradd", ["-M", "-s", "/usr/sbin/nologin", OTHER]);
});
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => undefined);
  await stopDaemon(p.root);
  await stopDaemon(q.root);
  p.cleanup();
  q.cleanup();
  fs.rmSync(sockDir, { recursive: true, force: true });
});

/** curl run as the other local user (asynchronously: the server answers from this process): exit status, HTTP status and body. */
function curlAsOther(args: string[]): Promise<{ exit: number | null; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("runuser", ["-u", OTHER, "--", "curl", "-s", "--max-time", "30", "-w", "\n%{http_code}", ...args], { cwd: "/", stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.once("error", reject);
    child.once("close", (exit) => {
      const lines = out.split("\n");
      resolve({ exit, status: Number(lines.pop()), body: lines.join("\n") });
    });
  });
}

/** curl arguments of a tools/call POST with extra headers. */
const callArgs = (url: string, headers: Record<string, string>) => [
  "-X", "POST", "-H", "content-type: application/json", "-H", `accept: ${ACCEPT}`, "-H", "mcp-protocol-version: 2025-06-18",
  ...Object.entries(headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
  "--data", JSON.stringify(QUERY), url,
];

/** A GET with a chosen Host header over real TCP: status and error code. */
function getWithHost(url: string, host: string): Promise<{ status: number; code?: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    http
      .get({ host: "127.0.0.1", port: u.port, path: "/health", headers: { host } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, code: res.statusCode === 200 ? undefined : JSON.parse(body).error?.code }));
      })
      .on("error", reject);
  });
}

async function startNginx(conf: string, dir: string, probe: string): Promise<ChildProcess> {
  const bin = findNginx();
  if (!bin) throw new Error("nginx is not installed; this end-to-end test needs it: apt-get install -y nginx-light");
  for (const d of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const file = path.join(dir, "nginx.conf");
  fs.writeFileSync(file, conf);
  const child = spawn(bin, ["-p", dir, "-e", `${dir}/error.log`, "-c", file, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  closers.push(async () => {
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGQUIT");
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${err}`);
    try {
      await fetch(probe);
      return child;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${probe}: ${(e as Error).message} ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** codemem-mcp as its own process: its stderr log lines once it printed its address. */
async function startupLog(args: string[]): Promise<Record<string, unknown>[]> {
  const child = spawn(process.execPath, [path.resolve("dist/client/mcp.js"), q.root, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (c) => reject(new Error(`codemem-mcp exited with ${c}: ${err}`)));
  });
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
  return err.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

describe("a proxy on the same host", () => {
  it("nginx reaches codemem through an owner-only Unix socket, and identity comes from that socket's peer", async () => {
    const sock = path.join(sockDir, "mcp.sock");
    const srv = await startHttpServer({ project: p.root, socket: sock, rbac: true, trustedProxies: [], directoryFile: dirFile });
    try {
      expect(fs.statSync(sock).mode & 0o777).toBe(0o600);
      const port = await freePort();
      const tmp = fs.mkdtempSync(path.join(p.root, ".nginx-"));
      // nginx authenticates (a token map stands in for auth_request) and passes the user on; an
      // empty proxy_set_header value drops the header, so a client's own X-Forwarded-User never passes.
      await startNginx(
        `${IS_ROOT ? "user root;" : ""}
worker_processes 1;
pid ${tmp}/nginx.pid;
error_log ${tmp}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${tmp}/client_body;
  proxy_temp_path ${tmp}/proxy;
  fastcgi_temp_path ${tmp}/fastcgi;
  uwsgi_temp_path ${tmp}/uwsgi;
  scgi_temp_path ${tmp}/scgi;
  map $http_authorization $cm_user { "Bearer tok-alice" "alice@example.com"; default ""; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_set_header X-Forwarded-User $cm_user;
      proxy_set_header X-Forwarded-Groups "";
      proxy_http_version 1.1;
      proxy_pass http://unix:${sock}:;
    }
  }
}
`,
        tmp,
        `http://127.0.0.1:${port}/health`,
      );
      const base = `http://127.0.0.1:${port}`;
      const alice = await toolCall(base, "codemem_stats", {}, { authorization: "Bearer tok-alice" });
      expect(alice.status).toBe(200);
      expect(alice.body.result.structuredContent.node_count).toBeGreaterThan(5);
      const forged = await toolCall(base, "codemem_stats", {}, { "x-forwarded-user": "alice@example.com" });
      expect(forged.status).toBe(403);
      expect(forged.body.error.code).toBe("RBAC_FORBIDDEN");
      const v = verifyAudit(p.root);
      expect(v.by_user).toMatchObject({ "alice@example.com": 1, anonymous: 1 });
    } finally {
      await srv.close();
    }
    expect(fs.existsSync(sock)).toBe(false);
  });

  it.skipIf(!IS_ROOT)("another local user can neither open the socket nor pass as alice at a loopback port (needs root to create that user)", async () => {
    const sock = path.join(sockDir, "owner.sock");
    const owned = await startHttpServer({ project: p.root, socket: sock, rbac: true, trustedProxies: [], directoryFile: dirFile });
    try {
      const other = await curlAsOther(["--unix-socket", sock, "http://localhost/health"]);
      expect(other.exit).toBe(7); // curl: could not connect (EACCES)
      expect(other.body).toBe("");
    } finally {
      await owned.close();
    }
    // A group the operator chooses (the proxy's) opens it, mode 0660; here that is the other user's own group.
    const shared = await startHttpServer({ project: p.root, socket: sock, socketGroup: OTHER, rbac: true, trustedProxies: [], directoryFile: dirFile });
    try {
      expect(fs.statSync(sock).mode & 0o777).toBe(0o660);
      expect((await curlAsOther(["--unix-socket", sock, "http://localhost/health"])).status).toBe(200);
    } finally {
      await shared.close();
    }

    // A TCP port with the proxy on loopback: the proxy proves itself with the shared secret.
    const secretFile = path.join(p.root, "proxy-secret");
    fs.writeFileSync(secretFile, "3f1d0c52a8e94b7fa1c6d0e2b9a4f7c1\n", { mode: 0o600 });
    const tcp = await startHttpServer({ project: p.root, port: 0, rbac: true, trustedProxies: ["127.0.0.1"], proxySecretFile: secretFile, directoryFile: dirFile });
    try {
      // Old setup (--trusted-proxy 127.0.0.1 alone): this request was served as alice.
      const forged = await curlAsOther(callArgs(`${tcp.url}/mcp`, { "x-forwarded-user": "alice@example.com" }));
      expect(forged.status).toBe(403);
      expect(JSON.parse(forged.body).error.code).toBe("RBAC_FORBIDDEN");
      const guessed = await curlAsOther(callArgs(`${tcp.url}/mcp`, { "x-forwarded-user": "alice@example.com", "x-codemem-proxy-secret": "3f1d0c52a8e94b7fa1c6d0e2b9a4f7c2" }));
      expect(guessed.status).toBe(403);
      // The same request with the secret is served: the refusals above are the secret's doing.
      const holder = await curlAsOther(callArgs(`${tcp.url}/mcp`, { "x-forwarded-user": "alice@example.com", "x-codemem-proxy-secret": "3f1d0c52a8e94b7fa1c6d0e2b9a4f7c1" }));
      expect(holder.status).toBe(200);
      const proxy = await toolCall(tcp.url, "codemem_stats", {}, { "x-forwarded-user": "alice@example.com", "x-codemem-proxy-secret": "3f1d0c52a8e94b7fa1c6d0e2b9a4f7c1" });
      expect(proxy.status).toBe(200);
    } finally {
      await tcp.close();
    }
  });

  it("codemem-mcp takes --socket, --socket-group, --proxy-secret-file and --allow-host in server mode only", () => {
    const o = parseShimArgs([p.root, "--socket", "/run/cm/mcp.sock", "--socket-group", "www-data", "--proxy-secret-file", "/etc/cm/secret", "--allow-host", "mcp.internal"]);
    expect(o.http).toMatchObject({ port: undefined, socket: "/run/cm/mcp.sock", socketGroup: "www-data", proxySecretFile: "/etc/cm/secret", allowHosts: ["mcp.internal"] });
    for (const flag of [["--socket-group", "g"], ["--proxy-secret-file", "/f"], ["--allow-host", "x"]]) {
      expect(() => parseShimArgs([p.root, ...flag])).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
  });

  it("a proxy secret must be private and long; a socket and a port are exclusive", async () => {
    const weak = path.join(p.root, "weak-secret");
    fs.writeFileSync(weak, "short\n", { mode: 0o600 });
    await expect(startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: ["127.0.0.1"], proxySecretFile: weak })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    const open = path.join(p.root, "open-secret");
    fs.writeFileSync(open, "0123456789abcdef0123456789abcdef\n");
    fs.chmodSync(open, 0o644);
    await expect(startHttpServer({ project: p.root, port: 0, rbac: false, trustedProxies: ["127.0.0.1"], proxySecretFile: open })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    await expect(startHttpServer({ project: p.root, port: 0, socket: path.join(sockDir, "x.sock"), rbac: false, trustedProxies: [] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const notSocket = path.join(sockDir, "plain-file");
    fs.writeFileSync(notSocket, "");
    await expect(startHttpServer({ project: p.root, socket: notSocket, rbac: false, trustedProxies: [] })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
  });

  it("warns at start when loopback is a trusted proxy, or the server listens beyond this machine without TLS or RBAC", async () => {
    const loop = await startupLog(["--port", "0", "--trusted-proxy", "127.0.0.1"]);
    expect(loop.filter((l) => l.level === "warn" && l.code !== undefined).map((l) => l.code)).toEqual(["TRUSTED_PROXY_LOOPBACK"]);
    const wide = await startupLog(["--port", "0", "--host", "0.0.0.0"]);
    expect(wide.filter((l) => l.level === "warn" && l.code !== undefined).map((l) => l.code)).toEqual(["NETWORK_WITHOUT_TLS_OR_RBAC"]);
    const quiet = await startupLog(["--socket", path.join(sockDir, "quiet.sock")]);
    expect(quiet.filter((l) => l.level === "warn" && l.code !== undefined)).toEqual([]);
  });
});

describe("DNS rebinding", () => {
  it("the MCP server on every interface answers only its own names", async () => {
    const srv = await startHttpServer({ project: p.root, port: 0, host: "0.0.0.0", rbac: false, trustedProxies: [], allowHosts: ["mcp.internal"] });
    try {
      const port = new URL(srv.url).port;
      for (const own of [`127.0.0.1:${port}`, `localhost:${port}`, `mcp.internal:${port}`, `[::1]:${port}`]) expect(await getWithHost(srv.url, own), own).toEqual({ status: 200 });
      // Old code: served, so a page of evil.example rebound to this address read /status and called tools.
      expect(await getWithHost(srv.url, `evil.example:${port}`)).toEqual({ status: 403, code: "FORBIDDEN_HOST" });
      expect(await getWithHost(srv.url, "127.0.0.1.evil.example")).toEqual({ status: 403, code: "FORBIDDEN_HOST" });
      // Another site's page sending to a name the server does answer (a no-cors request).
      const fromPage = await toolCall(srv.url, "codemem_stats", {}, { origin: "https://evil.example" });
      expect(fromPage.status).toBe(403);
      expect(fromPage.body.error.code).toBe("FORBIDDEN_ORIGIN");
      expect((await toolCall(srv.url, "codemem_stats", {}, { origin: `http://mcp.internal:${port}` })).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});
