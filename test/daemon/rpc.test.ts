import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { callDaemon, daemonStatus, pingDaemon } from "../../dist/client/rpc.js";
import { daemonFiles, readLockPid } from "../../dist/client/socket-path.js";
import { cleanupAll, daemonPids, makeProject, waitFor } from "./helpers.js";

const run = promisify(execFile);
const WORKER = path.resolve("test/daemon/fixtures/client-worker.mjs");

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { code?: string },
  );
  expect(err, `expected ${code}`).toBeDefined();
  expect(err!.code).toBe(code);
}

describe("callDaemon", () => {
  afterAll(cleanupAll);

  it("autostarts the daemon detached; build, stats and query go through the socket", async () => {
    const root = makeProject();
    expect(await pingDaemon(root)).toBeNull();
    const ping = (await callDaemon(root, "ping", {})) as { pid: number; root: string; version: string };
    expect(ping.root).toBe(root);
    expect(ping.pid).not.toBe(process.pid);
    expect(readLockPid(daemonFiles(root).lock)).toBe(ping.pid);
    expect(fs.existsSync(daemonFiles(root).socket)).toBe(true);
    // The daemon's stderr goes to the log file.
    expect(fs.readFileSync(daemonFiles(root).log, "utf8")).toContain("daemon listening");

    // No index yet: nothing was built at start.
    await expectCode(callDaemon(root, "stats", { project_path: root }), "INDEX_MISSING");
    const built = (await callDaemon(root, "build", { project_path: root })) as { node_count: number; files_indexed: number };
    expect(built.files_indexed).toBe(3);
    expect(built.node_count).toBeGreaterThan(5);

    const stats = (await callDaemon(root, "stats", { project_path: root })) as { node_count: number; file_count: number };
    expect(stats.node_count).toBe(built.node_count);
    expect(stats.file_count).toBe(3);
    const q = (await callDaemon(root, "codemem_query", { project_path: root, question: "how is stock reserved for an order?" })) as { tokens: number; citations: { file_path?: string }[] };
    expect(q.tokens).toBeGreaterThan(0);
    expect(JSON.stringify(q)).toContain("app/store.py");

    const st = await daemonStatus(root);
    expect(st.running).toBe(true);
    expect(st.pid).toBe(ping.pid);
    expect(st.index_exists).toBe(true);
  });

  it("unknown operation → UNKNOWN_OPERATION; invalid input → INVALID_ARGUMENT", async () => {
    const root = makeProject();
    await expectCode(callDaemon(root, "no_such_op", { project_path: root }), "UNKNOWN_OPERATION");
    await expectCode(callDaemon(root, "search", { project_path: root, query: 42 }), "INVALID_ARGUMENT");
    await expectCode(callDaemon(root, "search", { project_path: root, query: "x", bogus: true }), "INVALID_ARGUMENT");
    await expectCode(callDaemon(root, "stats", { project_path: "relative/path" }), "PATH_RELATIVE");
    // The daemon is still fine afterwards.
    expect(await pingDaemon(root)).not.toBeNull();
  });

  it("does not start a daemon when autostart is false", async () => {
    const root = makeProject();
    await expectCode(callDaemon(root, "ping", {}, { autostart: false }), "DAEMON_UNAVAILABLE");
    expect(daemonPids(root)).toEqual([]);
    expect((await daemonStatus(root)).running).toBe(false);
  });

  it("4 clients starting at once get one daemon, then 4 × 50 mixed calls run without error", async () => {
    const root = makeProject();
    const worker = (mode: string, calls: number) => run(process.execPath, [WORKER, root, String(calls), mode], { timeout: 60_000 }).then((r) => JSON.parse(r.stdout) as { pids: number[]; errors: string[] });

    const starts = await Promise.all([0, 1, 2, 3].map(() => worker("ping", 1)));
    const log = () => (fs.existsSync(daemonFiles(root).log) ? fs.readFileSync(daemonFiles(root).log, "utf8") : "(no log)");
    for (const s of starts) expect(s.errors, log()).toEqual([]);
    const pids = new Set(starts.flatMap((s) => s.pids));
    expect(pids.size).toBe(1);
    const [pid] = pids;
    // Losing starters exit on their own, quickly.
    await waitFor("losing daemons to exit", () => daemonPids(root).length === 1, 60_000);
    expect(daemonPids(root)).toEqual([pid]);

    await callDaemon(root, "build", { project_path: root });
    const loads = await Promise.all([0, 1, 2, 3].map(() => worker("mixed", 50)));
    for (const l of loads) {
      expect(l.errors).toEqual([]);
      expect(l.pids).toEqual([pid]);
    }
    expect(daemonPids(root)).toEqual([pid]);
    const st = await daemonStatus(root);
    expect((st.server as { requests: number }).requests).toBeGreaterThanOrEqual(200);
  });

  it("a client's Ctrl-C cancels its own build, queued behind another client's, and leaves that one running", async () => {
    const root = makeProject();
    await callDaemon(root, "build", {});
    const sock = net.createConnection(daemonFiles(root).socket);
    await new Promise((res, rej) => sock.once("connect", res).once("error", rej));
    const replies = new Map<number, { ok: boolean; result?: { cancelled?: boolean; node_count?: number }; error?: { code: string } }>();
    let buf = "";
    sock.on("data", (d) => {
      buf += d;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const r = JSON.parse(buf.slice(0, nl));
        replies.set(r.id, r);
        buf = buf.slice(nl + 1);
      }
    });
    // Client 1001 forces a rebuild; client 1002's build waits behind it; 1002 cancels; 1003, which asked
    // for nothing, cancels nothing.
    const request = (id: number, op: string, input: object, pid: number) => JSON.stringify({ id, op, input, client: { pid, source: "cli" } }) + "\n";
    sock.write(
      request(1, "build", { project_path: root, force: true }, 1001) +
        request(2, "build", { project_path: root }, 1002) +
        request(3, "cancel_build", {}, 1002) +
        request(4, "cancel_build", {}, 1003),
    );
    await waitFor("four replies", () => replies.size === 4, 60_000);
    sock.destroy();
    expect(replies.get(3)!.result).toEqual({ cancelled: true });
    expect(replies.get(4)!.result).toEqual({ cancelled: false });
    expect(replies.get(2)!.error?.code).toBe("BUILD_CANCELLED");
    expect(replies.get(1)!.ok).toBe(true);
    expect(replies.get(1)!.result!.node_count).toBeGreaterThan(0);
  });
});
