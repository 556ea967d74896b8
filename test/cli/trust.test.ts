import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { PY_PROJECT } from "../helpers.js";

/**
 * A cloned repository is not the user: its codemem.toml must not send the user's credentials to a
 * host it chose. Each case clones a real git repository whose codemem.toml points at a local
 * stand-in that records what arrives (a PostgreSQL server asking for the password in cleartext, an
 * OpenAI-compatible endpoint reading the Authorization header), and runs the real CLI and daemon.
 */
const CLI = path.resolve("dist/client/cli.js");
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cm-trust-")));
const projects: string[] = [];
const closers: (() => void)[] = [];
afterAll(async () => {
  for (const p of projects) await stopDaemon(p);
  for (const c of closers) c();
  fs.rmSync(base, { recursive: true, force: true });
});

/** The user's environment: their own config dir (where trust is recorded), no CODEMEM_* from the test runner. */
function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("CODEMEM_") && k !== "PROVIDER_API_KEY") env[k] = v;
  return { ...env, XDG_CONFIG_HOME: path.join(base, "config"), CODEMEM_EVENT_LOG: "0", ...extra };
}

/** The real CLI, run asynchronously: the stand-ins answer from this process meanwhile. */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: base, env, timeout: 60_000 });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "m", GIT_AUTHOR_EMAIL: "m@e", GIT_COMMITTER_NAME: "m", GIT_COMMITTER_EMAIL: "m@e" } });
}

/** An attacker's repository (git init, commit) and the user's clone of it. */
function cloneMalicious(name: string, toml: string): string {
  const upstream = path.join(base, `${name}-upstream`);
  fs.mkdirSync(upstream);
  for (const [rel, body] of Object.entries(PY_PROJECT)) {
    fs.mkdirSync(path.dirname(path.join(upstream, rel)), { recursive: true });
    fs.writeFileSync(path.join(upstream, rel), body);
  }
  fs.writeFileSync(path.join(upstream, "codemem.toml"), toml);
  git(upstream, "init", "-q");
  git(upstream, "add", ".");
  git(upstream, "commit", "-qm", "helpful settings");
  const clone = path.join(base, name);
  git(base, "clone", "-q", upstream, clone);
  projects.push(clone);
  return clone;
}

/**
 * A PostgreSQL stand-in: answers SSLRequest with "N" (no TLS), asks for the password in cleartext
 * (AuthenticationCleartextPassword), records the PasswordMessage, then fails the login (28P01).
 */
async function pgStandIn(host: string) {
  const seen = { connections: 0, passwords: [] as string[], raw: "" };
  const server = net.createServer((sock) => {
    seen.connections++;
    let buf = Buffer.alloc(0);
    let started = false;
    sock.on("error", () => {});
    sock.on("data", (chunk) => {
      seen.raw += chunk.toString("latin1");
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (!started) {
          if (buf.length < 8) return;
          const len = buf.readInt32BE(0);
          if (buf.length < len) return;
          const code = buf.readInt32BE(4);
          buf = buf.subarray(len);
          if (code === 80877103) sock.write("N"); // SSLRequest: no TLS here
          else {
            started = true; // StartupMessage (protocol 3.0)
            const ask = Buffer.alloc(9);
            ask.write("R", 0);
            ask.writeInt32BE(8, 1);
            ask.writeInt32BE(3, 5); // AuthenticationCleartextPassword
            sock.write(ask);
          }
          continue;
        }
        if (buf.length < 5) return;
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) return;
        if (buf[0] === 0x70) seen.passwords.push(buf.subarray(5, len).toString("utf8").replace(/\0$/, ""));
        buf = buf.subarray(len + 1);
        const fields = Buffer.from("SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed\0\0");
        const err = Buffer.alloc(5);
        err.write("E", 0);
        err.writeInt32BE(4 + fields.length, 1);
        sock.end(Buffer.concat([err, fields]));
        return;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  closers.push(() => server.close());
  return { port: (server.address() as net.AddressInfo).port, seen };
}

/** An OpenAI-compatible chat-completions stand-in that records each request's Authorization header. */
async function llmStandIn(host: string) {
  const auths: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      auths.push(String(req.headers.authorization));
      const msg = JSON.parse(body) as { model: string };
      const content = JSON.stringify(["How is the order total computed?", "How are card payments retried?"]);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: msg.model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as net.AddressInfo).port, auths };
}

/** An address of this machine that is not loopback (codemem must treat it as another host). */
function nonLoopbackAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  }
  throw new Error("this test needs a non-loopback IPv4 interface (any network interface besides lo)");
}

describe("a cloned repository's codemem.toml cannot send the user's credentials", () => {
  it("[store] db_url + password_file: nothing reaches the repository's server until the user trusts that exact file", async () => {
    const pg = await pgStandIn("127.0.0.1");
    const secretFile = path.join(base, "not-for-the-repo.txt");
    fs.writeFileSync(secretFile, "file-secret-7c1f\nsecond line\n");
    const root = cloneMalicious(
      "pg-clone",
      `[store]\nbackend = "postgres"\ndb_url = "postgres://victim@127.0.0.1:${pg.port}/codemem"\npassword_file = "${secretFile}"\n`,
    );

    const first = await cli(["build", root], userEnv({}));
    expect(pg.seen.passwords).toEqual([]); // old code: ["file-secret-7c1f"]
    expect(pg.seen.connections).toBe(0);
    expect(first.status).toBe(2);
    expect(first.stderr).toMatch(/^codemem: CONFIG_UNTRUSTED: .*\[store\] db_url and \[store\] password_file.*codemem trust /m);
    await stopDaemon(root);
    // The user's own password (CODEMEM_DB_PASSWORD) is not sent there either.
    const withEnv = await cli(["build", root], userEnv({ CODEMEM_DB_PASSWORD: "env-secret-91ab" }));
    expect(withEnv.stderr).toMatch(/CONFIG_UNTRUSTED/);
    expect(pg.seen.connections).toBe(0);
    expect(pg.seen.raw).not.toContain("env-secret-91ab");
    await stopDaemon(root);

    // Trusted, the project's settings apply: the password file is read and sent to its server.
    const trust = await cli(["trust", root], userEnv({}));
    expect(trust.status).toBe(0);
    expect(trust.stdout).toContain(`[store] db_url = postgres://victim@127.0.0.1:${pg.port}/codemem`);
    expect(trust.stdout).toContain(`[store] password_file = ${secretFile}`);
    const trusted = await cli(["build", root], userEnv({}));
    expect(trusted.stderr).toMatch(/BACKEND_AUTH_FAILED/);
    expect(pg.seen.passwords).toEqual(["file-secret-7c1f"]);
    await stopDaemon(root);

    // An edit (a later pull) is a new file: trust again.
    fs.appendFileSync(path.join(root, "codemem.toml"), "# tweaked upstream\n");
    const edited = await cli(["build", root], userEnv({}));
    expect(edited.stderr).toMatch(/CONFIG_UNTRUSTED/);
    expect(pg.seen.passwords).toEqual(["file-secret-7c1f"]);
    await stopDaemon(root);
  });

  it("[llm] base_url: PROVIDER_API_KEY is not sent until trusted, and the answer still comes (heuristic)", async () => {
    const llm = await llmStandIn("127.0.0.1");
    const root = cloneMalicious("llm-clone", `[llm]\nbase_url = "http://127.0.0.1:${llm.port}/v1"\ntimeout_ms = 10000\n`);
    const env = userEnv({ PROVIDER_API_KEY: "sk-user-key-5e2d" });
    expect((await cli(["build", root], env)).status).toBe(0);
    const question = "How is the order total computed and how are payments retried?";

    const before = await cli(["recursive-query", root, question, "--json"], env);
    expect(llm.auths).toEqual([]); // old code: ["Bearer sk-user-key-5e2d"]
    expect(before.status).toBe(0);
    const a = JSON.parse(before.stdout);
    expect(a.decomposition).toBe("heuristic");
    expect(a.provider_error).toMatch(/^CONFIG_UNTRUSTED: /);
    expect(a.citations.length).toBeGreaterThan(0);
    expect((await cli(["recursive-query", root, question], env)).stdout).toMatch(/provider not used: CONFIG_UNTRUSTED/);

    // Trusted: the running daemon uses the provider at once (no restart), over its real wire protocol.
    expect((await cli(["trust", root], env)).status).toBe(0);
    const after = JSON.parse((await cli(["recursive-query", root, question, "--json"], env)).stdout);
    expect(llm.auths[0]).toBe("Bearer sk-user-key-5e2d");
    expect(after.decomposition).toBe("provider");
    expect(after.sub_questions.map((s: { question: string }) => s.question)).toEqual(["How is the order total computed?", "How are card payments retried?"]);

    // Revoked: the daemon is stopped and the key stays home again.
    expect((await cli(["trust", root, "--revoke"], env)).status).toBe(0);
    const n = llm.auths.length;
    expect(JSON.parse((await cli(["recursive-query", root, question, "--json"], env)).stdout).provider_error).toMatch(/^CONFIG_UNTRUSTED: /);
    expect(llm.auths.length).toBe(n);
  });

  it("a credential never travels in cleartext to another machine, whoever configured it", async () => {
    const host = nonLoopbackAddress();
    const pg = await pgStandIn("0.0.0.0");
    const llm = await llmStandIn("0.0.0.0");
    const root = cloneMalicious("tls-clone", "[query]\nbudget = 800\n");
    const env = userEnv({ CODEMEM_DB_PASSWORD: "env-secret-44d0", PROVIDER_API_KEY: "sk-user-key-0b7a", CODEMEM_LLM_BASE_URL: `http://${host}:${llm.port}/v1` });

    const plain = await cli(["build", root, "--backend", "postgres", "--db-url", `postgres://me@${host}:${pg.port}/codemem`], env);
    expect(plain.stderr).toMatch(/^codemem: INSECURE_TRANSPORT: .*sslmode/m);
    expect(plain.status).toBe(2);
    expect(pg.seen.connections).toBe(0);
    // With TLS required, pg stops when the server offers none: the password never leaves.
    const tls = await cli(["build", root, "--backend", "postgres", "--db-url", `postgres://me@${host}:${pg.port}/codemem?sslmode=require`], env);
    expect(tls.status).not.toBe(0);
    expect(pg.seen.connections).toBeGreaterThan(0);
    expect(pg.seen.passwords).toEqual([]);
    expect(pg.seen.raw).not.toContain("env-secret-44d0");
    // A repeated parameter: pg connects with the last value, so the check must not read the first.
    // Old code: sslmode=require passed the check, pg used disable, and the password arrived in cleartext.
    const seenBefore = pg.seen.connections;
    for (const url of [
      `postgres://me@${host}:${pg.port}/codemem?sslmode=require&sslmode=disable`,
      `postgres://me@127.0.0.1:${pg.port}/codemem?host=127.0.0.1&host=${host}`,
    ]) {
      const dup = await cli(["build", root, "--backend", "postgres", "--db-url", url], env);
      expect(dup.stderr).toMatch(/^codemem: CONFIG_INVALID: /m);
      expect(dup.status).toBe(2);
    }
    expect(pg.seen.connections).toBe(seenBefore);
    expect(pg.seen.passwords).toEqual([]);
    expect(pg.seen.raw).not.toContain("env-secret-44d0");

    expect((await cli(["build", root, "--backend", "local"], env)).status).toBe(0);
    const r = JSON.parse((await cli(["recursive-query", root, "How is the order total computed and how are payments retried?", "--json"], env)).stdout);
    expect(r.provider_error).toMatch(/^INSECURE_TRANSPORT: /);
    expect(llm.auths).toEqual([]);
  });
});
