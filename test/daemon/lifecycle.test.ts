import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { callDaemon, closeConnections, daemonStatus, pingDaemon, stopDaemon } from "../../dist/client/rpc.js";
import { daemonFiles, pidAlive, readLockPid, socketPathFor, SOCKET_PATH_MAX } from "../../dist/client/socket-path.js";
import { cleanupAll, daemonPids, makeProject, spawnDaemonChild, waitFor } from "./helpers.js";

function cmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return []; // exited while we looked
  }
}

/** Pids whose parent is `ppid` (from /proc). */
function childPids(ppid: number): number[] {
  return fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      // stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === ppid;
    } catch {
      return false;
    }
  });
}

/** Sends raw bytes on a fresh socket and collects reply lines until `want` replies or close. */
function rawExchange(socket: string, payload: string | Buffer, want: number, timeoutMs = 10_000): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socket);
    const replies: Record<string, unknown>[] = [];
    let buf = "";
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`only ${replies.length}/${want} replies within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on("data", (d) => {
      buf += String(d);
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        replies.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
      if (replies.length >= want) {
        clearTimeout(timer);
        sock.destroy();
        resolve(replies);
      }
    });
    sock.on("error", () => {}); // the daemon may reset a connection it refused
    sock.on("close", () => {
      clearTimeout(timer);
      resolve(replies);
    });
    sock.write(payload);
  });
}

describe("daemon lifecycle", () => {
  afterAll(cleanupAll);

  it("kill -9: the next call restarts the daemon over the stale socket and lock", async () => {
    const root = makeProject();
    await callDaemon(root, "build", { project_path: root });
    const first = (await pingDaemon(root))!;
    process.kill(first.pid, "SIGKILL");
    await waitFor("killed daemon to die", () => daemonPids(root).length === 0);
    const files = daemonFiles(root);
    // What a crash leaves behind.
    expect(fs.existsSync(files.socket)).toBe(true);
    expect(readLockPid(files.lock)).toBe(first.pid);

    const stats = (await callDaemon(root, "stats", { project_path: root })) as { node_count: number };
    expect(stats.node_count).toBeGreaterThan(0);
    const second = (await pingDaemon(root))!;
    expect(second.pid).not.toBe(first.pid);
    expect(readLockPid(files.lock)).toBe(second.pid);
    expect(daemonPids(root)).toEqual([second.pid]);
  });

  it("a daemon started from code replaced since (an update, a rebuild) is restarted by the next client; the same code is kept", async () => {
    // A copy of the installation, so that replacing its daemon's code disturbs no other test's daemon.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "cm-install-"));
    fs.cpSync(path.resolve("dist"), path.join(copy, "dist"), { recursive: true });
    fs.copyFileSync(path.resolve("package.json"), path.join(copy, "package.json"));
    fs.symlinkSync(path.resolve("node_modules"), path.join(copy, "node_modules"));
    try {
      const rpc = (await import(pathToFileURL(path.join(copy, "dist/client/rpc.js")).href)) as typeof import("../../dist/client/rpc.js");
      const root = makeProject();
      const first = (await rpc.callDaemon(root, "ping", {})) as { pid: number };
      await rpc.closeConnections();
      expect(((await rpc.callDaemon(root, "ping", {})) as { pid: number }).pid).toBe(first.pid);
      await rpc.closeConnections();

      const later = new Date(Date.now() + 5000);
      fs.utimesSync(path.join(copy, "dist/daemon/main.js"), later, later);
      const second = (await rpc.callDaemon(root, "ping", {})) as { pid: number };
      expect(second.pid).not.toBe(first.pid);
      expect(daemonPids(root)).toEqual([second.pid]);
      await rpc.stopDaemon(root);
      await rpc.closeConnections();
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it("rm -rf .codemem: the orphaned daemon steps down without touching its successor's socket", async () => {
    const root = makeProject();
    await callDaemon(root, "build", { project_path: root });
    const first = (await pingDaemon(root))!;
    fs.rmSync(path.join(root, ".codemem"), { recursive: true, force: true });
    await closeConnections();
    const second = (await callDaemon(root, "ping", {})) as { pid: number };
    expect(second.pid).not.toBe(first.pid);
    await waitFor("the orphaned daemon to exit", () => !daemonPids(root).includes(first.pid), 60_000);
    // Node unlinks a Unix server's path when it closes: the orphan's exit took the successor's
    // socket with it, and the successor stepped down at its next ownership check (every 2 s).
    await new Promise((r) => setTimeout(r, 2500));
    expect(daemonPids(root)).toEqual([second.pid]);
    expect((await pingDaemon(root))?.pid).toBe(second.pid);
  });

  it("a daemon a client started exits once no client has been there for CODEMEM_IDLE_MINUTES; an open connection keeps it", async () => {
    const root = makeProject();
    const before = process.env.CODEMEM_IDLE_MINUTES;
    process.env.CODEMEM_IDLE_MINUTES = "0.02"; // 1.2 s; the spawned daemon inherits it
    try {
      await callDaemon(root, "build", { project_path: root });
    } finally {
      if (before === undefined) delete process.env.CODEMEM_IDLE_MINUTES;
      else process.env.CODEMEM_IDLE_MINUTES = before;
    }
    const pid = (await pingDaemon(root))!.pid;
    const status = (await daemonStatus(root)) as { idle_exit: { after_minutes: number } | null };
    expect(status.idle_exit?.after_minutes).toBe(0.02);
    // The client's pooled connection stays open (an assistant's session): three idle periods pass.
    await new Promise((r) => setTimeout(r, 3600));
    expect(daemonPids(root)).toEqual([pid]);

    await closeConnections();
    await waitFor("the idle daemon to exit", () => daemonPids(root).length === 0, 60_000);
    const files = daemonFiles(root);
    expect(fs.existsSync(files.socket)).toBe(false);
    expect(fs.existsSync(files.lock)).toBe(false);
    expect(fs.readFileSync(files.log, "utf8")).toContain("no client for 0.02 min");
    // The next question starts a fresh daemon on the same index.
    const stats = (await callDaemon(root, "stats", { project_path: root })) as { node_count: number };
    expect(stats.node_count).toBeGreaterThan(0);
  });

  it("the login service's daemon (started without --on-demand) stays however long it is idle", async () => {
    const root = makeProject();
    const before = process.env.CODEMEM_IDLE_MINUTES;
    process.env.CODEMEM_IDLE_MINUTES = "0.02";
    let d: ReturnType<typeof spawnDaemonChild>;
    try {
      d = spawnDaemonChild(root); // the argv of scripts/codemem.service and codemem.plist
    } finally {
      if (before === undefined) delete process.env.CODEMEM_IDLE_MINUTES;
      else process.env.CODEMEM_IDLE_MINUTES = before;
    }
    await waitFor("daemon to listen", () => pingDaemon(root).then((p) => p !== null));
    expect(((await daemonStatus(root)) as { idle_exit: unknown }).idle_exit).toBeNull();
    await closeConnections();
    await new Promise((r) => setTimeout(r, 3600));
    expect(daemonPids(root)).toEqual([d.child.pid]);
  });

  it("SIGTERM: exit code 0, socket and lock removed", async () => {
    const root = makeProject();
    const d = spawnDaemonChild(root);
    const files = daemonFiles(root);
    await waitFor("daemon to listen", () => pingDaemon(root).then((p) => p !== null));
    expect(readLockPid(files.lock)).toBe(d.child.pid);
    d.child.kill("SIGTERM");
    expect(await d.exit, d.stderr()).toBe(0);
    expect(fs.existsSync(files.socket)).toBe(false);
    expect(fs.existsSync(files.lock)).toBe(false);
    expect(d.stderr()).toContain('"clean":true');
  });

  it("SIGTERM during a build: the build answers (its result, or BUILD_CANCELLED past the stop's grace), then the daemon exits 0", async () => {
    const root = makeProject();
    const d = spawnDaemonChild(root);
    await waitFor("daemon to listen", () => pingDaemon(root).then((p) => p !== null));
    const socket = daemonFiles(root).socket;
    const reply = new Promise<Record<string, unknown>[]>((resolve) => {
      const replies: Record<string, unknown>[] = [];
      let buf = "";
      const s = net.createConnection(socket, () => {
        s.write(JSON.stringify({ id: 1, op: "build", input: { project_path: root, force: true } }) + "\n");
        setTimeout(() => d.child.kill("SIGTERM"), 30);
      });
      s.on("data", (c) => {
        buf += String(c);
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          replies.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
        }
      });
      s.on("error", () => {});
      s.on("close", () => resolve(replies));
    });
    const replies = await reply;
    expect(replies).toHaveLength(1);
    // A loaded machine may take the whole grace (6 s) to fork and build 3 files.
    if (replies[0].ok) expect((replies[0].result as { files_indexed: number }).files_indexed).toBe(3);
    else expect(replies[0]).toMatchObject({ id: 1, ok: false, error: { code: "BUILD_CANCELLED" } });
    expect(await d.exit, d.stderr()).toBe(0);
    expect(fs.existsSync(daemonFiles(root).lock)).toBe(false);
  });

  it("a daemon stopped mid-build leaves no build process behind", async () => {
    // Enough files that the whole-tree build's process is still there when we look for it.
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`pkg${i % 10}/mod${i}.py`] = `def handler_${i}(x):\n    return helper_${i}(x) + ${i}\n\n\ndef helper_${i}(y):\n    return y * ${i}\n`;
    const root = makeProject({ files });
    const d = spawnDaemonChild(root);
    await waitFor("daemon to listen", () => pingDaemon(root).then((p) => p !== null));
    const build = callDaemon(root, "build", { project_path: root, force: true }, { autostart: false, timeoutMs: 120_000 }).then(
      () => "finished",
      (err) => (err as { code?: string }).code,
    );
    const buildPid = await waitFor("the build's own process", () => childPids(d.child.pid!).find((pid) => cmdline(pid).some((a) => a.endsWith("build-thread.js"))), 30_000, 10);
    // Frozen, it can neither finish nor notice its daemon leave: only being stopped ends it.
    process.kill(buildPid, "SIGSTOP");
    const stopped = await stopDaemon(root, { timeoutMs: 30_000 });
    await waitFor("the build process to be gone", () => !pidAlive(buildPid), 30_000);
    expect(stopped.killed, d.stderr()).toBe(false);
    expect(await build).toBe("BUILD_CANCELLED");
    expect(await d.exit, d.stderr()).toBe(0);
  }, 120_000);

  it("a second daemon for the same project exits 0 and leaves the first alone", async () => {
    const root = makeProject();
    const a = spawnDaemonChild(root);
    await waitFor("daemon to listen", () => pingDaemon(root).then((p) => p !== null));
    const b = spawnDaemonChild(root);
    expect(await b.exit).toBe(0);
    expect((await pingDaemon(root))!.pid).toBe(a.child.pid);
    expect(readLockPid(daemonFiles(root).lock)).toBe(a.child.pid);
    expect((await stopDaemon(root)).stopped).toBe(true);
    expect(await a.exit).toBe(0);
  });

  it("clients that vanish mid-request do not hurt the daemon", async () => {
    const root = makeProject();
    await callDaemon(root, "build", { project_path: root });
    const socket = daemonFiles(root).socket;
    const pid = (await pingDaemon(root))!.pid;

    // Half a request, then gone.
    await new Promise<void>((resolve) => {
      const s = net.createConnection(socket, () => {
        s.write('{"id": 1, "op": "stats", "inp');
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 30);
      });
    });
    // Whole requests (a slow one among them), disconnecting before the replies arrive.
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const s = net.createConnection(socket, () => {
          s.write(JSON.stringify({ id: 1, op: "query", input: { project_path: root, question: "how is stock reserved?" } }) + "\n");
          s.write(JSON.stringify({ id: 2, op: "stats", input: { project_path: root } }) + "\n");
          s.destroy();
          resolve();
        });
      });
    }
    // Garbage and an oversized line are answered with INVALID_ARGUMENT; the connection stays usable.
    const replies = await rawExchange(socket, Buffer.concat([Buffer.from("not json\n"), Buffer.alloc(9 * 1024 * 1024, 0x61), Buffer.from("\n"), Buffer.from(JSON.stringify({ id: 7, op: "ping" }) + "\n")]), 3);
    expect(replies.map((r) => (r.ok ? "ok" : (r.error as { code: string }).code))).toEqual(["INVALID_ARGUMENT", "INVALID_ARGUMENT", "ok"]);
    expect(replies[2].id).toBe(7);

    // Pipelined requests on one raw connection all come back, matched by id.
    const many = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i + 1, op: i % 2 ? "stats" : "codemem_search", input: { project_path: root, query: "price" } })).join("\n") + "\n";
    const pipelined = await rawExchange(socket, many, 20);
    expect(pipelined.map((r) => r.id).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(pipelined.filter((r) => !r.ok).map((r) => r.error)).toEqual(
      Array.from({ length: 10 }, () => expect.objectContaining({ code: "INVALID_ARGUMENT" })), // stats has no "query" field
    );

    const stats = (await callDaemon(root, "stats", { project_path: root })) as { node_count: number };
    expect(stats.node_count).toBeGreaterThan(0);
    expect((await pingDaemon(root))!.pid).toBe(pid);
  });

  it("a long project path puts the socket in the per-user runtime directory", async () => {
    const deep = path.join(os.tmpdir(), "cm-long-" + "x".repeat(60), "y".repeat(40));
    const root = makeProject({ base: deep });
    const sock = socketPathFor(root);
    expect(Buffer.byteLength(path.join(root, ".codemem", "daemon.sock"))).toBeGreaterThan(SOCKET_PATH_MAX);
    expect(sock.startsWith(root)).toBe(false);
    expect(path.basename(path.dirname(sock))).toMatch(/^codemem-\d+$/);
    expect(Buffer.byteLength(sock)).toBeLessThanOrEqual(SOCKET_PATH_MAX);

    const ping = (await callDaemon(root, "ping", {})) as { root: string };
    expect(ping.root).toBe(root);
    expect(fs.statSync(sock).isSocket()).toBe(true);
    expect(fs.statSync(path.dirname(sock)).mode & 0o077).toBe(0);
    expect((await stopDaemon(root)).stopped).toBe(true);
    expect(fs.existsSync(sock)).toBe(false);
    fs.rmSync(path.dirname(deep), { recursive: true, force: true });
  });

  it("refuses a socket directory another user could have made or entered (no XDG_RUNTIME_DIR, long path)", () => {
    const run = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cm-run-")));
    const deep = path.join(os.tmpdir(), "cm-squat-" + "x".repeat(60), "y".repeat(40));
    const root = makeProject({ base: deep });
    // The fallback runtime directory: <tmpdir>/codemem-<uid>; a private tmpdir here, so the real
    // /tmp/codemem-<uid> of other tests stays as it is.
    const env = { ...process.env, XDG_RUNTIME_DIR: "", TMPDIR: run };
    const cli = (...args: string[]) => spawnSync(process.execPath, [path.resolve("dist/client/cli.js"), ...args], { encoding: "utf8", env, timeout: 60_000 });
    const dir = path.join(run, `codemem-${process.getuid!()}`);
    fs.mkdirSync(dir);
    fs.chmodSync(dir, 0o777); // made by a squatter, open to everyone
    try {
      const open = cli("daemon", "start", root);
      expect(open.stderr).toMatch(/^codemem: RUNTIME_DIR_UNSAFE: .*codemem-\d+ has mode 0777/m);
      expect(open.stderr).toContain(dir);
      expect(open.status).toBe(4);
      expect(fs.readdirSync(dir)).toEqual([]); // no daemon listens there
      fs.chmodSync(dir, 0o750);
      expect(cli("daemon", "start", root).stderr).toMatch(/RUNTIME_DIR_UNSAFE/);
      if (process.getuid!() === 0) {
        // Owned by someone else (only root can make that here): refused even with mode 0700.
        fs.chmodSync(dir, 0o700);
        fs.chownSync(dir, 65534, 65534);
        const theirs = cli("daemon", "start", root);
        expect(theirs.stderr).toMatch(/RUNTIME_DIR_UNSAFE: .*belongs to uid 65534/);
        fs.chownSync(dir, 0, 0);
      }
      fs.rmSync(dir, { recursive: true });
      fs.symlinkSync(run, dir); // a symlink to a directory elsewhere
      expect(cli("daemon", "start", root).stderr).toMatch(/RUNTIME_DIR_UNSAFE: .*is a symbolic link/);
      fs.rmSync(dir);
      // Created by codemem itself: private, and used.
      const ok = cli("daemon", "start", root);
      expect(ok.status).toBe(0);
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
      expect(cli("daemon", "stop", root).status).toBe(0);
    } finally {
      fs.rmSync(run, { recursive: true, force: true });
      fs.rmSync(path.dirname(deep), { recursive: true, force: true });
    }
  });

  it("refuses a daemon socket, or a .codemem directory, that a cloned repository made a symbolic link", async () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cm-symsock-")));
    const elsewhere = path.join(base, "elsewhere");
    fs.mkdirSync(elsewhere);
    let connections = 0;
    const fake = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    const fakeSock = path.join(elsewhere, "daemon.sock");
    await new Promise<void>((r) => fake.listen(fakeSock, r));
    const git = (cwd: string, ...args: string[]) =>
      spawnSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "m", GIT_AUTHOR_EMAIL: "m@e", GIT_COMMITTER_NAME: "m", GIT_COMMITTER_EMAIL: "m@e" } });
    try {
      const upstream = path.join(base, "upstream");
      fs.mkdirSync(path.join(upstream, ".codemem"), { recursive: true });
      fs.writeFileSync(path.join(upstream, "a.py"), "def a():\n    return 1\n");
      fs.symlinkSync(fakeSock, path.join(upstream, ".codemem", "daemon.sock"));
      git(upstream, "init", "-q");
      git(upstream, "add", ".");
      git(upstream, "commit", "-qm", "x");
      expect(git(base, "clone", "-q", upstream, "clone").status).toBe(0);
      const root = path.join(base, "clone");
      expect(fs.lstatSync(path.join(root, ".codemem", "daemon.sock")).isSymbolicLink()).toBe(true);
      await expect(callDaemon(root, "ping", {})).rejects.toMatchObject({ code: "RUNTIME_DIR_UNSAFE" });
      expect(connections).toBe(0); // old code: the client talked to the fake daemon

      fs.rmSync(path.join(root, ".codemem"), { recursive: true });
      fs.symlinkSync(elsewhere, path.join(root, ".codemem"));
      await expect(callDaemon(root, "ping", {})).rejects.toMatchObject({ code: "RUNTIME_DIR_UNSAFE" });
      expect(connections).toBe(0);
    } finally {
      fake.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
