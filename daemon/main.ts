#!/usr/bin/env node
/**
 * The per-project daemon: `node dist/daemon/main.js --project <abs root> [--no-watch] [--on-demand]`.
 * Runs in the foreground; clients start it detached with `--on-demand`, and such a daemon exits
 * after CODEMEM_IDLE_MINUTES without a client (the login service's daemon stays). Exit codes: 0 clean shutdown (or another
 * daemon already owns the project), 1 unclean shutdown, 2 bad arguments, 3 cannot start.
 */
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { registerDaemon, unregisterDaemon } from "../client/daemon-registry.js";
import { DAEMON_STOP_MS, daemonFiles, ensureSocketDir, isDaemonPid, readLockPid } from "../client/socket-path.js";
import { resolveProcessSettings } from "../shared/config.js";
import { asCodememError } from "../shared/errors.js";
import { configureLog, log } from "../shared/log.js";
import { fileStamp, hasIndex, resolveProjectRoot } from "../shared/paths.js";
import { checkOwnState, ensureOwnDir } from "../shared/own-files.js";
import type { ProjectEngine } from "./engine.js";
import { memoryMb, rssMb } from "./index/builder.js";
import type { ProjectWatcher } from "./watch.js";
import { sleepSync } from "../shared/sleep.js";

const SHUTDOWN_GRACE_MS = 5000;
/**
 * How long a stop lets a running build finish before stopping it; the server waits a little longer
 * for the build's reply. The whole stop stays within DAEMON_STOP_MS, after which a client asking for
 * it kills the daemon (and a build stuck in a loop would outlive it).
 */
const BUILD_STOP_GRACE_MS = 6000;
const OWNERSHIP_CHECK_MS = 2000;
const VERSION = readVersion();
/** The code this daemon runs: clients of an updated installation restart it (client/rpc.ts). */
const CODE = { main: fileURLToPath(import.meta.url), stamp: fileStamp(fileURLToPath(import.meta.url)) };

function readVersion(): string {
  try {
    const pkg = fileURLToPath(new URL("../../package.json", import.meta.url));
    return (JSON.parse(fs.readFileSync(pkg, "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

function parseArgs(argv: string[]): { project?: string; watch: boolean; onDemand: boolean } {
  const out: { project?: string; watch: boolean; onDemand: boolean } = { watch: true, onDemand: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--project") out.project = argv[++i];
    else if (a.startsWith("--project=")) out.project = a.slice("--project=".length);
    else if (a === "--no-watch") out.watch = false;
    else if (a === "--on-demand") out.onDemand = true;
    else {
      process.stderr.write(`codemem daemon: unknown argument ${a}; usage: main.js --project <absolute project root> [--no-watch] [--on-demand]\n`);
      process.exit(2);
    }
  }
  return out;
}

type LockResult = { ok: true } | { ok: false; holder: number };

/**
 * Takes `.codemem/daemon.lock` (O_EXCL, holds our pid). A lock left by a dead process is taken
 * over under a short-lived takeover lock, so two starters cannot both remove and recreate it.
 */
function acquireLock(lock: string): LockResult {
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const fd = fs.openSync(lock, "wx", 0o644);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return { ok: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = readLockPid(lock);
    if (holder === undefined) {
      // Being written right now (created, pid not yet in it), or garbage. Wait, then judge.
      const st = statOrUndefined(lock);
      if (st && Date.now() - st.mtimeMs < 2000) {
        sleepSync(50);
        continue;
      }
    } else if (holder !== process.pid && isDaemonPid(holder)) {
      return { ok: false, holder };
    }
    const takeover = `${lock}.takeover`;
    try {
      const fd = fs.openSync(takeover, "wx");
      fs.closeSync(fd);
    } catch {
      const st = statOrUndefined(takeover);
      if (st && Date.now() - st.mtimeMs > 5000) fs.rmSync(takeover, { force: true }); // its owner died
      sleepSync(50);
      continue;
    }
    try {
      // Re-check under the takeover lock: someone may have taken over already.
      if (readLockPid(lock) === holder) {
        log.info("removing stale daemon lock", { lock, stale_pid: holder ?? null });
        fs.rmSync(lock, { force: true });
      }
    } finally {
      fs.rmSync(takeover, { force: true });
    }
  }
  throw new Error(`could not take ${lock} after 20 attempts`);
}

function statOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.statSync(p);
  } catch {
    return undefined;
  }
}

function releaseLock(lock: string): void {
  if (readLockPid(lock) === process.pid) fs.rmSync(lock, { force: true });
}

async function main(): Promise<void> {
  const settings = resolveProcessSettings();
  configureLog({ debug: settings.debug, component: "daemon" });
  const args = parseArgs(process.argv.slice(2));
  const idleMs = args.onDemand ? settings.idleMinutes * 60_000 : 0;
  let root: string;
  try {
    root = resolveProjectRoot(args.project ?? settings.project);
  } catch (err) {
    const e = asCodememError(err);
    log.error("cannot start daemon", { code: e.code, error: e.message });
    process.exit(2);
  }
  const files = daemonFiles(root);
  try {
    checkOwnState(root); // a daemon started by the login service meets a cloned link here
    ensureOwnDir(files.stateDir);
  } catch (err) {
    const e = asCodememError(err);
    log.error("cannot start daemon", { code: e.code, error: e.message });
    process.exit(2);
  }

  const lock = acquireLock(files.lock);
  if (!lock.ok) {
    log.info("another daemon already serves this project; exiting", { root, holder_pid: lock.holder });
    process.exit(0);
  }

  // Heavy modules load only once we own the project: a losing starter exits in milliseconds.
  const [{ ProjectEngine }, { DaemonServer }] = await Promise.all([import("./engine.js"), import("./server.js")]);
  /** Loaded once the reader is open: the watcher (chokidar) is not on the first answer's path. */
  let startWatcher: typeof import("./watch.js").startWatcher | undefined;
  const startedAt = Date.now();
  let engine: ProjectEngine;
  try {
    engine = await ProjectEngine.open(root, {
      daemon: true,
      // New rules (exclude_patterns, limits): watch with them from now on, and re-index by them
      // (a no-op when the change came with a build).
      onConfigChange: () => {
        const old = watcher;
        watcher = undefined;
        void (old?.close() ?? Promise.resolve()).then(() => {
          if (stopping || !indexed()) return;
          ensureWatcher();
          engine.build({ project_path: root }, { deferGraphFile: true }).catch((err) => log.warn("re-index after a codemem.toml edit failed", { error: (err as Error).message }));
        });
      },
    });
  } catch (err) {
    const e = asCodememError(err);
    log.error("cannot open project", { root, code: e.code, error: e.message });
    releaseLock(files.lock);
    process.exit(3);
  }

  const indexed = () => hasIndex(root);
  let watcher: ProjectWatcher | undefined;
  /** The watcher's catch-up build is done (or failed): the build state is warm, freshness is the watcher's. */
  let caughtUp = false;
  const ensureWatcher = () => {
    if (!args.watch || watcher || stopping || !startWatcher) return;
    if (!indexed()) return; // nothing to keep fresh before the first build
    const w = (watcher = startWatcher(engine));
    caughtUp = false;
    // Once it watches, one catch-up build indexes what changed while no daemon watched (in the build
    // thread, loading the warm state there); from then on answers' freshness is what it knows.
    void w.ready
      .then(() => engine.build({ project_path: root }, { deferGraphFile: true, warm: true }))
      .then(
        () => {
          if (watcher !== w) return;
          caughtUp = true;
          engine.watchWith(() => {
            const s = watcher === w ? w.status() : undefined;
            return s && !s.last_batch?.error ? s.pending : undefined;
          });
        },
        (err) => {
          if (watcher === w) caughtUp = true;
          log.warn("catch-up build failed; answers' freshness walks the tree", { error: (err as Error).message });
        },
      );
  };

  let stopping: Promise<never> | undefined;
  const info = () => ({ pid: process.pid, root, uptime_s: Math.round((Date.now() - startedAt) / 1000), version: VERSION, code: CODE });
  const server: InstanceType<typeof DaemonServer> = new DaemonServer(
    async (op, input, client) => {
      // Clients may leave project_path out: this daemon serves exactly one project.
      if (input && typeof input === "object" && !Array.isArray(input) && !("project_path" in input)) input = { ...input, project_path: root };
      const result = await engine.dispatch(op, input, { owner: client.pid });
      // What changes on disk meanwhile is the catch-up build's, once the watcher is ready.
      if (op === "build" || op === "codemem_build") void engine.readerWarm().then(ensureWatcher);
      return result;
    },
    {
      ping: info,
      status: async () => ({
        ...info(),
        socket: files.socket,
        lock: files.lock,
        log_file: files.log,
        index_exists: indexed(),
        idle_exit: idleMs > 0 ? { after_minutes: settings.idleMinutes, idle_s: Math.round(server.idleMs() / 1000) } : null,
        rss_bytes: process.memoryUsage.rss(),
        memory_mb: { rss: rssMb(), main: memoryMb(), build_thread: (await engine.builder.memory?.()) ?? null },
        watcher: watcher ? { ...watcher.status(), caught_up: caughtUp } : null,
        build: engine.buildProgress ?? null,
      }),
      shutdown: () => void shutdown("shutdown request"),
      cancelBuild: (client) => ({ cancelled: engine.cancelBuild(client.pid) }),
    },
  );

  /** The socket file this daemon listens on (by inode): the path may be reused by a successor. */
  let socketIno: number | undefined;
  const ownsSocket = () => {
    try {
      return socketIno !== undefined && fs.statSync(files.socket).ino === socketIno;
    } catch {
      return false;
    }
  };
  const shutdown = (reason: string, code?: number): Promise<never> => {
    stopping ??= (async () => {
      log.info("daemon stopping", { reason });
      let clean = code === undefined || code === 0;
      // Every step within the stop's budget (less a margin for the exit), so the daemon exits before a client kills it.
      const deadline = Date.now() + DAEMON_STOP_MS - 2000;
      const grace = () => Math.max(0, Math.min(SHUTDOWN_GRACE_MS, deadline - Date.now()));
      const timeout = <T>(p: Promise<T>, what: string) =>
        Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), grace()).unref())]).then((ok) => {
          if (!ok) log.warn(`shutdown: ${what} did not finish in time`);
          return ok;
        }, (err) => {
          log.warn(`shutdown: ${what} failed`, { error: (err as Error).message });
          return false;
        });
      // Alongside the server's close, which waits for the build's request: a build still running after
      // the grace is stopped, so no build outlives its daemon (nor holds the stop past its client's patience).
      const buildsStopped = engine.stopBuilds(BUILD_STOP_GRACE_MS);
      clean = (await server.close(BUILD_STOP_GRACE_MS + 1000, ownsSocket() ? undefined : files.socket)) && clean;
      await buildsStopped;
      if (watcher) clean = (await timeout(watcher.close(), "watcher close")) && clean;
      clean = (await timeout(engine.close(), "engine close")) && clean;
      try {
        // Only our own: after `rm -rf .codemem` another daemon may own the path by now, and its
        // socket may even have been given our old socket's inode number: the lock says whose it is.
        if (readLockPid(files.lock) === process.pid && ownsSocket()) fs.rmSync(files.socket, { force: true });
        releaseLock(files.lock);
        unregisterDaemon(root, process.pid);
      } catch (err) {
        clean = false;
        log.warn("shutdown: cannot remove socket or lock", { error: (err as Error).message });
      }
      log.info("daemon stopped", { reason, clean });
      process.exit(clean ? 0 : 1);
    })();
    return stopping;
  };

  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGHUP", () => void shutdown("SIGHUP"));
  process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: err instanceof Error ? err.stack : String(err) }));
  process.on("uncaughtException", (err) => {
    log.error("uncaught exception", { error: err.stack ?? String(err) });
    void shutdown("uncaught exception", 1);
  });

  // We hold the lock, so whatever sits at the socket path belongs to a dead daemon.
  try {
    ensureSocketDir(files.socket);
    fs.rmSync(files.socket, { force: true });
    await server.listen(files.socket);
  } catch (err) {
    log.error("cannot listen", { socket: files.socket, error: (err as Error).message });
    releaseLock(files.lock);
    process.exit(3);
  }
  socketIno = fs.statSync(files.socket).ino;
  log.info("daemon listening", { root, socket: files.socket, pid: process.pid, version: VERSION, node: process.version });
  try {
    registerDaemon({ root, pid: process.pid, socket: files.socket, started_at: new Date(startedAt).toISOString(), version: VERSION });
  } catch (err) {
    log.warn("cannot record this daemon for `codemem daemon list`", { error: (err as Error).message });
  }
  // Its socket or lock removed (rm -rf .codemem, git clean -fdx): clients can no longer reach this
  // daemon and start another one, so this one steps down instead of building beside it.
  setInterval(() => {
    if (!stopping && (readLockPid(files.lock) !== process.pid || !ownsSocket())) void shutdown("its socket or lock file was removed");
  }, OWNERSHIP_CHECK_MS).unref();

  // Every project a client ever touched would otherwise keep a daemon (150 MB and more) for ever.
  if (idleMs > 0) {
    setInterval(() => {
      if (!stopping && !engine.buildProgress && server.idleMs() >= idleMs) void shutdown(`no client for ${settings.idleMinutes} min (CODEMEM_IDLE_MINUTES)`);
    }, Math.min(60_000, Math.max(250, idleMs / 4))).unref();
  }

  // Open the read path first, so a start's first question does not wait for the watcher's walk of the
  // tree, and watch once the reader is warm: answers are lexical until then.
  if (indexed()) {
    engine.prefetchFreshness();
    try {
      await engine.retriever();
      await engine.embedder();
    } catch (err) {
      log.warn("warm-up failed; requests will report the problem", { error: (err as Error).message });
    }
    await engine.readerWarm();
  }
  if (args.watch) ({ startWatcher } = await import("./watch.js"));
  ensureWatcher();
}

void main().catch((err) => {
  log.error("daemon crashed during start", { error: (err as Error).stack ?? String(err) });
  process.exit(3);
});
