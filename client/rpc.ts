import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { CodememError, ERROR_CODES, type ErrorCode } from "../shared/errors.js";
import { checkOwnState, openOwnAppend } from "../shared/own-files.js";
import { fileStamp, resolveProjectRoot } from "../shared/paths.js";
import { ndjsonReader, ndjsonWriter, type MessageWriter } from "./ndjson.js";
import { checkSocketDir, DAEMON_STOP_MS, daemonFiles, isDaemonPid, pidAlive, readLockPid } from "./socket-path.js";

export interface CallOptions {
  /** Per-call reply timeout; default 60 s, 30 min for `build` and `benchmark`. */
  timeoutMs?: number;
  /** Start the daemon when none is listening (default true). */
  autostart?: boolean;
  /** Who is calling, for the daemon's logs ("cli", "mcp", "hook", ...). */
  source?: string;
}

export interface PingResult {
  pid: number;
  root: string;
  uptime_s: number;
  version: string;
  /** The entry point the daemon was started from, and its size and mtime then. */
  code?: { main: string; stamp: string };
}

/** Absolute path of the daemon entry point next to this module in dist/. */
export const DAEMON_MAIN = fileURLToPath(new URL("../daemon/main.js", import.meta.url));

const CONNECT_BUDGET_MS = 10_000;
const LOG_ROTATE_BYTES = 5 * 1024 * 1024;
const LONG_OPS = new Set(["build", "codemem_build", "benchmark", "codemem_benchmark"]);

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout };

/** One socket to one daemon, shared by all calls of this process; requests are pipelined. */
class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly writer: MessageWriter;
  closed = false;

  constructor(private readonly sock: net.Socket, onClose: () => void) {
    this.writer = ndjsonWriter(sock);
    const reader = ndjsonReader(sock);
    reader.onMessage((msg) => {
      const m = msg as { id?: number; ok?: boolean; result?: unknown; error?: { code?: string; message?: string; details?: Record<string, unknown> } };
      if (typeof m.id !== "number") return; // replies to unparseable requests carry no id
      const p = this.pending.get(m.id);
      if (!p) return;
      this.settle(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(replyError(m.error));
    });
    reader.onBadMessage((_r, detail) => this.fail(new CodememError("DAEMON_UNAVAILABLE", `The daemon sent a malformed reply (${detail}).`)));
    reader.onClose(() => {
      this.closed = true;
      onClose();
      this.fail(new ConnectionLost("The daemon closed the connection before replying."));
    });
    sock.on("error", () => {}); // surfaces as close
    sock.unref();
  }

  request(op: string, input: unknown, timeoutMs: number, source: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new ConnectionLost("connection closed"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const p: Pending = { resolve, reject };
      if (timeoutMs > 0) {
        p.timer = setTimeout(() => {
          this.settle(id);
          reject(new CodememError("DAEMON_UNAVAILABLE", `The daemon did not answer "${op}" within ${timeoutMs} ms; see its log (codemem daemon logs).`));
        }, timeoutMs);
      }
      this.pending.set(id, p);
      this.sock.ref(); // keep the process alive while a reply is owed
      if (!this.writer.write({ id, op, input, client: { pid: process.pid, source } })) {
        this.closed = true;
        this.settle(id);
        reject(new ConnectionLost("cannot write to the daemon socket"));
      }
    });
  }

  private settle(id: number): void {
    const p = this.pending.get(id);
    if (p?.timer) clearTimeout(p.timer);
    this.pending.delete(id);
    if (this.pending.size === 0 && !this.closed) this.sock.unref();
  }

  private fail(err: Error): void {
    for (const [id, p] of this.pending) {
      this.settle(id);
      p.reject(err);
    }
  }

  close(): void {
    this.closed = true;
    this.sock.destroy();
  }
}

class ConnectionLost extends Error {
  readonly code = "CONNECTION_LOST";
}

function replyError(e: { code?: string; message?: string; details?: Record<string, unknown> } | undefined): CodememError {
  const code = e?.code && (ERROR_CODES as readonly string[]).includes(e.code) ? (e.code as ErrorCode) : "INTERNAL";
  return new CodememError(code, e?.message ?? "The daemon reported an error without a message.", e?.details);
}

const connections = new Map<string, Promise<Connection>>();
/** Roots this process has a live connection to (so its requests reached, or are reaching, the daemon). */
const established = new Set<string>();

/** Whether this process is connected to the daemon of `root`: before that, nothing it asked has been sent. */
export function connectedTo(root: string): boolean {
  return established.has(root);
}

/** Connects once; rejects with the socket error code (ENOENT, ECONNREFUSED, ...). */
function connectOnce(socket: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(socket);
    const onError = (err: Error) => {
      sock.destroy();
      reject(err);
    };
    sock.once("error", onError);
    sock.once("connect", () => {
      sock.off("error", onError);
      resolve(sock);
    });
  });
}

function notListening(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === "ENOENT" || code === "ECONNREFUSED" || code === "ECONNRESET" || code === "ENOTSOCK";
}

/**
 * glibc malloc settings of every daemon (also in scripts/codemem.service). glibc gives each thread
 * that allocates an arena of its own and keeps what is freed there: the daemon's build, parser and
 * graph threads left it ~150 MB above its live memory at rest after a full build of Go's src. One
 * arena is enough (the threads' heaps are V8's, not malloc's), and two still kept what the vector
 * thread's load freed (Go tree, RSS at rest after a restart: two arenas 507 MB, one 470; before the
 * vector thread 467 and 463). Fixed mmap and trim thresholds keep large blocks freed after a full
 * build from being reused in place of returned (glibc raises the mmap threshold as large blocks are
 * freed): Go tree, 5 saves after a forced full build, RSS 624 → 574 MB.
 */
export const DAEMON_ENV = { MALLOC_ARENA_MAX: "1", MALLOC_MMAP_THRESHOLD_: "131072", MALLOC_TRIM_THRESHOLD_: "131072" };
/**
 * Node flags of every daemon (spawned here, or by the login service: client/service.ts). None for
 * now: semi-spaces of 4 MB took the Go tree's daemon from 509 to 455 MB at rest, but under the full
 * test suite's load a watch test of a large batch timed out twice with them (more scavenges in
 * every daemon thread); measured again before they come back.
 */
export const DAEMON_NODE_FLAGS: string[] = [];

/** Starts the daemon detached, its stderr appended to `.codemem/daemon.log`; it exits once idle (CODEMEM_IDLE_MINUTES). */
export function spawnDaemon(root: string): { pid: number | undefined; exited: Promise<number | null> } {
  const files = daemonFiles(root);
  checkOwnState(root); // a clone that ships links in its state fails here, naming the link
  try {
    if (fs.statSync(files.log).size > LOG_ROTATE_BYTES) fs.renameSync(files.log, `${files.log}.1`);
  } catch {
    // no log yet
  }
  const logFd = openOwnAppend(files.log);
  try {
    const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, DAEMON_MAIN, "--project", root, "--on-demand"], { detached: true, stdio: ["ignore", "ignore", logFd], cwd: root, env: { ...DAEMON_ENV, ...process.env } });
    const exited = new Promise<number | null>((resolve) => {
      child.once("exit", (code) => resolve(code));
      child.once("error", () => resolve(-1));
    });
    child.unref();
    return { pid: child.pid, exited };
  } finally {
    fs.closeSync(logFd);
  }
}

async function connect(root: string, autostart: boolean, onClose: () => void): Promise<Connection> {
  const files = daemonFiles(root);
  checkSocketDir(files.socket); // never talk to a socket another user could have put there
  const make = (sock: net.Socket) => new Connection(sock, onClose);
  let running: Connection | undefined;
  let retiring = false;
  try {
    const sock = await connectOnce(files.socket);
    running = new Connection(sock, () => {
      if (!retiring) onClose();
    });
  } catch (err) {
    if (!notListening(err)) throw unavailable(root, `cannot connect to ${files.socket} (${(err as Error).message})`);
    if (!autostart) throw unavailable(root, `no daemon is running for ${root}`, false);
  }
  if (running) {
    if (!autostart || !(await runsReplacedCode(running))) return running;
    // codemem was updated (or rebuilt) since this daemon started: replace it, or it would serve
    // the old code for as long as it lives.
    retiring = true;
    await retire(running, files.lock);
  }
  let childExit: number | null | undefined;
  let spawned = false;
  // A live lock holder is a daemon still starting: wait for it instead of spawning another.
  const maybeSpawn = () => {
    if (spawned) return;
    const holder = readLockPid(files.lock);
    if (holder !== undefined && isDaemonPid(holder)) return;
    spawned = true;
    try {
      void spawnDaemon(root).exited.then((c) => (childExit = c));
    } catch (err) {
      if (err instanceof CodememError) throw err;
      throw unavailable(root, `cannot start the daemon (${(err as Error).message})`);
    }
  };
  maybeSpawn();
  const deadline = Date.now() + CONNECT_BUDGET_MS;
  let delay = 20;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, delay));
    // A connect attempt on a Unix socket costs microseconds: a starting daemon is reached as soon as it listens.
    delay = Math.min(delay * 1.5, 50);
    try {
      return make(await connectOnce(files.socket));
    } catch (err) {
      lastErr = err;
    }
    // Exit 0 means another daemon won the lock: keep waiting for the winner.
    if (childExit !== undefined && childExit !== 0) throw unavailable(root, `the daemon exited with code ${childExit} during start`);
    maybeSpawn(); // the daemon we waited for may have died while starting
  }
  throw unavailable(root, `the daemon did not start listening on ${files.socket} within ${CONNECT_BUDGET_MS / 1000} s (${(lastErr as Error)?.message ?? "no error"})`);
}

/** Whether the daemon was started from this installation's entry point as it was before it changed on disk. */
async function runsReplacedCode(conn: Connection): Promise<boolean> {
  const info = (await conn.request("ping", {}, 5000, "api").catch(() => undefined)) as PingResult | undefined;
  return info?.code !== undefined && info.code.main === DAEMON_MAIN && info.code.stamp !== fileStamp(DAEMON_MAIN);
}

/** Asks the daemon to stop (it finishes requests in flight) and waits until it has exited. */
async function retire(conn: Connection, lock: string): Promise<void> {
  const pid = readLockPid(lock);
  await conn.request("shutdown", {}, 10_000, "api").catch(() => undefined);
  conn.close();
  const deadline = Date.now() + DAEMON_STOP_MS;
  while (pid !== undefined && isDaemonPid(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

function unavailable(root: string, what: string, withLog = true): CodememError {
  const log = daemonFiles(root).log;
  return new CodememError("DAEMON_UNAVAILABLE", withLog ? `${what} — see ${log}` : `${what}; start it with \`codemem daemon start\` or call without autostart=false.`, { log });
}

function getConnection(root: string, autostart: boolean): Promise<Connection> {
  let p = connections.get(root);
  if (!p) {
    const forget = () => {
      if (connections.get(root) !== mine) return;
      connections.delete(root);
      established.delete(root);
    };
    const mine = connect(root, autostart, forget);
    // Marked before any caller's continuation runs: a request follows in the same turn.
    mine.then(() => connections.get(root) === mine && established.add(root), forget);
    connections.set(root, mine);
    p = mine;
  }
  return p;
}

/**
 * Runs one operation (or admin op: ping, status, shutdown) in the project's daemon, starting
 * the daemon if needed. Errors from the daemon are re-thrown as CodememError with their code.
 */
export async function callDaemon(root: string, op: string, input: unknown, opts: CallOptions = {}): Promise<unknown> {
  const realRoot = resolveProjectRoot(root);
  const autostart = opts.autostart !== false;
  const timeoutMs = opts.timeoutMs ?? (LONG_OPS.has(op) ? 30 * 60_000 : 60_000);
  const source = opts.source ?? "api";
  for (let tries = 0; ; tries++) {
    const conn = await getConnection(realRoot, autostart);
    try {
      return await conn.request(op, input, timeoutMs, source);
    } catch (err) {
      // The daemon went away under a cached connection (restart, kill): reconnect. Twice, because a
      // dying daemon's socket can still take a connection between its memory and its files being
      // released (the process already looks gone), and that connection is then lost too.
      if (err instanceof ConnectionLost && tries < 2 && op !== "shutdown") {
        // A write can fail before the socket's close event has dropped it from the cache.
        const cached = connections.get(realRoot);
        if (cached && (await cached.catch(() => undefined)) === conn) connections.delete(realRoot);
        if (tries > 0) await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      if (err instanceof ConnectionLost) throw unavailable(realRoot, `the daemon connection was lost during "${op}"`);
      throw err;
    }
  }
}

/** Closes this process's cached daemon connections (tests, long-lived clients on exit). */
export async function closeConnections(): Promise<void> {
  const all = [...connections.values()];
  connections.clear();
  for (const p of all) (await p.catch(() => undefined))?.close();
}

/** The running daemon's identity, or null when none is listening (never starts one). */
/** Asks the project's daemon to stop its running build before it writes; whether one was running. */
export async function cancelBuild(root: string): Promise<boolean> {
  const r = (await callDaemon(root, "cancel_build", {}, { autostart: false, timeoutMs: 5000, source: "cli" })) as { cancelled: boolean };
  return r.cancelled;
}

export async function pingDaemon(root: string, opts: { timeoutMs?: number } = {}): Promise<PingResult | null> {
  try {
    return (await callDaemon(root, "ping", {}, { autostart: false, timeoutMs: opts.timeoutMs ?? 5000, source: "ping" })) as PingResult;
  } catch (err) {
    if (err instanceof CodememError && err.code === "DAEMON_UNAVAILABLE") return null;
    throw err;
  }
}

export interface DaemonStatus {
  running: boolean;
  root: string;
  socket: string;
  lock: string;
  log_file: string;
  pid?: number;
  uptime_s?: number;
  version?: string;
  /** The pid in the lock file when no daemon answers (a daemon starting, or a stale lock). */
  lock_pid?: number;
  lock_pid_alive?: boolean;
  index_exists?: boolean;
  rss_bytes?: number;
  watcher?: unknown;
  server?: unknown;
}

/** Whether the daemon runs, with its pid, uptime, watcher state and request counters. */
export async function daemonStatus(root: string): Promise<DaemonStatus> {
  const realRoot = resolveProjectRoot(root);
  const files = daemonFiles(realRoot);
  const base = { root: realRoot, socket: files.socket, lock: files.lock, log_file: files.log };
  try {
    const s = (await callDaemon(realRoot, "status", {}, { autostart: false, timeoutMs: 5000, source: "status" })) as Record<string, unknown>;
    return { ...base, ...s, running: true } as DaemonStatus;
  } catch (err) {
    if (!(err instanceof CodememError && err.code === "DAEMON_UNAVAILABLE")) throw err;
    const lockPid = readLockPid(files.lock);
    return { ...base, running: false, ...(lockPid ? { lock_pid: lockPid, lock_pid_alive: pidAlive(lockPid) } : {}) };
  }
}

export interface StopResult {
  was_running: boolean;
  pid?: number;
  stopped: boolean;
  /** True when the daemon ignored the shutdown request and was killed. */
  killed: boolean;
  ms: number;
}

/** Asks the daemon to shut down and waits for its process to exit (SIGKILL after timeoutMs). */
export async function stopDaemon(root: string, opts: { timeoutMs?: number } = {}): Promise<StopResult> {
  const started = Date.now();
  const timeoutMs = opts.timeoutMs ?? DAEMON_STOP_MS;
  const realRoot = resolveProjectRoot(root);
  const ping = await pingDaemon(realRoot);
  const ms = () => Date.now() - started;
  if (!ping) return { was_running: false, stopped: true, killed: false, ms: ms() };
  const pid = ping.pid;
  try {
    await callDaemon(realRoot, "shutdown", {}, { autostart: false, timeoutMs: 5000, source: "stop" });
  } catch {
    // it may close the connection before the reply arrives; the pid tells the truth
  }
  while (Date.now() - started < timeoutMs) {
    if (!pidAlive(pid)) return { was_running: true, pid, stopped: true, killed: false, ms: ms() };
    await new Promise((r) => setTimeout(r, 25));
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
  await new Promise((r) => setTimeout(r, 100));
  return { was_running: true, pid, stopped: !pidAlive(pid), killed: true, ms: ms() };
}
