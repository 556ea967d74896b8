import { fork } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError, type ErrorCode } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { collectNow } from "../../shared/memory.js";
import { threadReply } from "../thread-reply.js";
import { stateDirs } from "../../shared/paths.js";
import type { BuildCache, BuildProgress, BuildResult } from "./build.js";
import { GraphFileState, type GraphFilePatch, type GraphFileWritten, type writeGraphFile } from "./graph-file.js";
import type { Embedder } from "./embed/embedder.js";
import type { ParsePool } from "./parse-pool.js";

/** One build as asked of a builder. */
export interface BuildRequest {
  force?: boolean;
  optimize?: boolean;
  /** Write graph.json once edits settle (watch-triggered builds) instead of before returning. */
  deferGraphFile?: boolean;
  /** The only files that may have changed (a watch batch); see BuildOptions.paths. */
  paths?: string[];
  /** Load the warm state even when nothing changed (a daemon's catch-up build). */
  warm?: boolean;
  /** Check the index's pages first (a user's build); see OpenStoreOptions.check. */
  check?: boolean;
}

/** Runs a project's builds one at a time, keeping what the next incremental build needs warm. */
export interface Builder {
  build(cfg: ResolvedConfig, req: BuildRequest, onProgress?: (p: BuildProgress) => void): Promise<BuildResult>;
  /** Stops the running build at its next checkpoint, before its write (BUILD_CANCELLED); false when none runs or it is writing. */
  cancel(): boolean;
  /** Forgets the warm state (the index moved to another backend). */
  reset(): void;
  /** Writes a pending graph.json and releases threads. */
  close(): Promise<void>;
  /**
   * The daemon stops: the running build ends now, whatever it is doing. One in a process of its own
   * is killed (its index is written in one final transaction, so the previous one stays); one on
   * the build thread is cancelled, and ends with the daemon's process if it cannot be.
   */
  abort?(): void;
  /** The daemon stops: the running build may finish, but nothing is started after it (no fresh build thread). */
  windDown?(): void;
  /** Heap of the thread builds run on (MB), when it is not the caller's: the daemon reports it. */
  memory?(): Promise<Record<string, number> | undefined>;
  /** Told of index changes made by background work between builds (a re-clustering), to refresh readers. */
  onBackground?: (result: BuildResult) => void;
  /** Told when a whole-tree build's fill (its vectors and tokens, after it was answerable) is written: the complete build's result. */
  onFilled?: (result: BuildResult) => void;
  /** Settles once the fills of the builds so far are written (or failed). */
  filled?(): Promise<void>;
  /** The daemon stops: a fill ends after the part it is writing; the next build fills the rest. */
  stopFills?(): void;
}

/** A thread's memory as `process.memoryUsage()` counts it there, in MB. */
export function memoryMb(): Record<string, number> {
  const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return Object.fromEntries(Object.entries({ heapUsed, heapTotal, external, arrayBuffers }).map(([k, v]) => [k, Math.round(v / 1e5) / 10]));
}

/** The whole process's resident memory, in MB (a thread's figures are memoryMb's). */
export function rssMb(): number {
  return Math.round(process.memoryUsage.rss() / 1e5) / 10;
}

/** A build that indexed this many files gets a fresh build thread afterwards (ThreadBuilder.recycle). */
const RECYCLE_AFTER_FILES = 1000;

/** A warm load's state is readied for saves this long after it (LocalBuilder.schedulePrepare). */
const PREPARE_AFTER_MS = 2000;

/** graph.json for watch builds is written once edits have settled this long, at least (see scheduleGraphWrite). */
const GRAPH_FILE_SETTLE_MS = 1500;
const GRAPH_FILE_QUIET_FACTOR = 3;

/** Builds in the calling thread (tests, benchmarks, the CLI-free engine; and inside the build thread). */
export class LocalBuilder implements Builder {
  private cache: { value?: BuildCache } = {};
  /** What the next graph.json write may copy from the last. */
  private readonly graphFile = new GraphFileState();
  private pool?: ParsePool;
  private graphWrite?: { timer: NodeJS.Timeout; write: () => Promise<void> };
  private reclusterTimer?: NodeJS.Timeout;
  /** Builds and background work, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  onBackground?: (result: BuildResult) => void;
  onFilled?: (result: BuildResult) => void;

  constructor(
    private readonly workers: number,
    private readonly embedder: (cfg: ResolvedConfig) => Promise<Embedder>,
    private readonly writeGraph?: typeof writeGraphFile,
    private readonly opts: {
      /** A process that builds once and exits keeps no warm state: the graph it resolved is let go before its fill. */
      keepsWarmState?: boolean;
      /** Where a save's files have their tokens counted, when not in this thread (ParsePool). */
      countTokens?: (source: string) => Promise<number>;
    } = {},
  ) {}

  /** `mayWrite`: see BuildOptions (the build thread asks the daemon). */
  build(cfg: ResolvedConfig, req: BuildRequest, onProgress?: (p: BuildProgress) => void, mayWrite?: () => Promise<boolean>): Promise<BuildResult> {
    clearTimeout(this.reclusterTimer);
    clearTimeout(this.prepareTimer);
    this.builds++;
    const run = this.chain.then(() => this.runBuild(cfg, req, onProgress, mayWrite));
    this.chain = run.catch(() => {});
    return run;
  }

  private running?: AbortController;

  cancel(): boolean {
    if (!this.running) return false;
    this.running.abort();
    return true;
  }

  private async runBuild(cfg: ResolvedConfig, req: BuildRequest, onProgress?: (p: BuildProgress) => void, mayWrite?: () => Promise<boolean>): Promise<BuildResult> {
    // The build pipeline (parsers, clustering) loads on the first build, never in a reader that only answers.
    const [{ buildIndex }, { ParsePool }] = await Promise.all([import("./build.js"), import("./parse-pool.js")]);
    this.pool ??= new ParsePool(this.workers, this.opts.countTokens);
    const running = (this.running = new AbortController());
    try {
      const result = await buildIndex(cfg, {
        signal: running.signal,
        mayWrite,
        force: req.force,
        optimize: req.optimize,
        paths: req.paths,
        writeGraph: this.writeGraph,
        graphFile: this.graphFile,
        warm: req.warm,
        check: req.check,
        embedder: await this.embedder(cfg),
        pool: this.pool,
        cache: this.opts.keepsWarmState !== false ? this.cache : undefined,
        onProgress,
        deferGraphFile: req.deferGraphFile ? (write) => this.scheduleGraphWrite(write) : undefined,
        // Where someone listens for background changes (the daemon), clustering waits for a quiet moment.
        deferRecluster: !!this.onBackground,
        fill: (job) => this.fill(job),
        fillStop: this.fillStop.signal,
        fillReleased: this.opts.keepsWarmState !== false ? undefined : () => collectNow(false),
      });
      if (result.recluster_due) this.scheduleRecluster(cfg);
      if (req.warm) this.schedulePrepare(cfg);
      return result;
    } catch (err) {
      this.cache = {}; // the next build reloads from the index, which the failed build left intact
      throw err;
    } finally {
      if (this.running === running) this.running = undefined;
      this.pool.idle();
    }
  }

  reset(): void {
    this.cache = {};
    this.graphFile.reset();
  }

  /**
   * A whole-tree build's fill runs next in the chain, before any later build: that one finds the
   * vectors and tokens written and its warm rows counted. A failed or stopped fill leaves the index
   * answerable and marked `filling`, with the parts it wrote: the next build fills the rest.
   */
  private fill(job: () => Promise<BuildResult>): void {
    const delivered = this.delivered;
    const run = this.chain.then(() => delivered).then(job).then(
      (result) => this.onFilled?.(result),
      (err: Error) => {
        this.cache = {};
        if ((err as CodememError).code === "BUILD_CANCELLED") log.info("the build's fill stopped; the next build fills the rest");
        else log.warn("writing the build's vectors and token counts failed; the next build fills them", { error: err.message });
      },
    );
    this.chain = run;
  }

  /** Settles once the build's answer has left for the daemon (`answerDelivered`). */
  private delivered?: Promise<void>;

  /**
   * The fill of the build about to run starts once `delivered` settles: a process's answer to the
   * daemon (Go's src: 380 KB) is written as its event loop turns, which the fill's first, synchronous
   * steps held back 6 s.
   */
  answerDelivered(delivered: Promise<void>): void {
    this.delivered = delivered;
  }

  private readonly fillStop = new AbortController();

  stopFills(): void {
    this.fillStop.abort();
  }

  filled(): Promise<void> {
    return this.chain.then(() => undefined);
  }

  /** Builds run so far: background work started before the latest one is stale. */
  private builds = 0;
  /** A re-clustering whose communities are being detected on a thread (close awaits it). */
  private detecting?: Promise<void>;

  /**
   * Once edits settle, communities are detected again and readers told (never on a save's path). The
   * detection runs on a thread of its own off the build chain: a save that arrives meanwhile is built
   * at once (at Go's src's 60K nodes detecting took 2-3 s that a save used to wait behind), and the
   * communities of the graph it changed are dropped; that build's own due flag schedules another.
   */
  private scheduleRecluster(cfg: ResolvedConfig): void {
    clearTimeout(this.reclusterTimer);
    this.reclusterTimer = setTimeout(() => {
      const cache = this.cache.value;
      if (!cache || this.detecting) return;
      this.detecting = this.recluster(cfg, cache)
        .catch((err: Error) => log.warn("re-clustering in the background failed; communities stay as carried", { error: err.message }))
        .finally(() => (this.detecting = undefined));
    }, GRAPH_FILE_SETTLE_MS);
  }

  private prepareTimer?: NodeJS.Timeout;

  /**
   * Once a warm load has settled (a daemon's start, a fresh build thread), the warm state is readied
   * for the first save (prepareForSaves), unless a build came first: the start's first answers go
   * before it.
   */
  private schedulePrepare(cfg: ResolvedConfig): void {
    const builds = this.builds;
    this.prepareTimer = setTimeout(() => {
      this.chain = this.chain.then(async () => {
        const cache = this.cache.value;
        if (!cache || !this.pool || this.builds !== builds) return;
        const t0 = performance.now();
        const { prepareForSaves } = await import("./build.js");
        await prepareForSaves(cfg, cache, this.pool, await this.embedder(cfg));
        log.debug("build state readied for saves", { ms: Math.round(performance.now() - t0) });
      }).catch((err: Error) => log.debug("readying the build state for saves failed; the first save does it", { error: err.message }));
    }, PREPARE_AFTER_MS);
    this.prepareTimer.unref();
  }

  /** Detects `cache`'s communities on a thread, then writes them in the chain's turn unless a build has run since. */
  private async recluster(cfg: ResolvedConfig, cache: BuildCache): Promise<void> {
    const builds = this.builds;
    const { detectCommunitiesApart } = await import("./communities-thread.js");
    const t0 = performance.now();
    const detected = await detectCommunitiesApart(cache.resolver.nodeList(), cache.resolver.edges(), [...cfg.index.testPatterns]);
    const job = this.chain.then(async () => {
      if (this.closing) return;
      if (this.builds !== builds || this.cache.value !== cache) {
        log.debug("communities detected again, dropped: the graph changed meanwhile", { ms: Math.round(performance.now() - t0) });
        return this.scheduleRecluster(cfg);
      }
      const { reclusterIndex } = await import("./build.js");
      const result = await reclusterIndex(cfg, cache, detected, { embedder: await this.embedder(cfg), writeGraph: this.writeGraph, graphFile: this.graphFile, deferGraphFile: (write) => this.scheduleGraphWrite(write) });
      this.onBackground?.(result);
    });
    this.chain = job.catch((err: Error) => {
      this.cache = {}; // the next build reloads what the index holds
      log.warn("re-clustering in the background failed; communities stay as carried", { error: err.message });
    });
    await this.chain;
  }

  /** graph.json writes, one at a time (at 300K nodes one holds a core and a gigabyte for seconds). */
  private graphWriting: Promise<void> = Promise.resolve();
  private lastGraphWriteMs = 0;

  /**
   * Bursts of saves write graph.json once, after edits have been quiet for GRAPH_FILE_SETTLE_MS or
   * GRAPH_FILE_QUIET_FACTOR times the last write's duration, whichever is longer: on a large tree a
   * steady stream of saves does not keep a core busy rewriting a file nothing answers from.
   */
  private scheduleGraphWrite(write: () => Promise<void>): void {
    if (this.graphWrite) clearTimeout(this.graphWrite.timer);
    const timer = setTimeout(() => {
      this.graphWrite = undefined;
      this.graphWriting = this.graphWriting.then(async () => {
        const t0 = performance.now();
        await writeGraph(write);
        this.lastGraphWriteMs = performance.now() - t0;
      });
    }, Math.max(GRAPH_FILE_SETTLE_MS, GRAPH_FILE_QUIET_FACTOR * this.lastGraphWriteMs));
    this.graphWrite = { timer, write };
  }

  private closing = false;

  async close(): Promise<void> {
    clearTimeout(this.reclusterTimer);
    this.closing = true;
    await this.detecting;
    await this.chain;
    await this.graphWriting;
    if (this.graphWrite) {
      clearTimeout(this.graphWrite.timer);
      await writeGraph(this.graphWrite.write);
      this.graphWrite = undefined;
    }
    await this.pool?.close();
  }
}

/** graph.json is derived and rewritten on the next build: a failed write is reported, not fatal. */
function writeGraph(write: () => Promise<void>): Promise<void> {
  return write().catch((err) => log.warn("graph.json not written", { error: (err as Error).message }));
}

/** graph.json written by a thread of its own (graph-thread.ts), which exits when done. */
export function writeGraphInThread(cfg: ResolvedConfig, meta: { built_at: string; index_version: string }, patch?: GraphFilePatch): Promise<GraphFileWritten> {
  return threadReply<{ ok: boolean; error?: ReturnType<CodememError["toJSON"]>; written?: GraphFileWritten }>(new URL("./graph-thread.js", import.meta.url), { cfg, meta, patch }, "graph.json thread").then((m) => {
    if (m.error) throw new CodememError(m.error.code, m.error.message, m.error.details); // PATH_UNSAFE, DISK_FULL: the code crosses the thread
    return m.written!;
  });
}

/** Messages between ThreadBuilder and its thread (daemon/index/build-thread.ts). */
export type ToThread =
  | { type: "build"; id: number; cfg: ResolvedConfig; req: BuildRequest }
  | { type: "reset" }
  | { type: "close" }
  | { type: "stop-fills" }
  | { type: "memory"; id: number }
  | { type: "cancel"; id: number }
  | { type: "may-write"; id: number; ok: boolean }
  | { type: "tokens"; id: number; tokens: number };
export type FromThread =
  | { type: "progress"; id: number; progress: BuildProgress }
  | { type: "may-write"; id: number }
  | { type: "background"; result: BuildResult }
  | { type: "filled"; result: BuildResult }
  | { type: "memory"; id: number; memory: Record<string, number> }
  /** A save's file to count tokens of, here (the daemon's thread holds the tokenizer; see ParsePool). */
  | { type: "count-tokens"; id: number; source: string }
  | { type: "done"; id: number; result: BuildResult }
  | { type: "failed"; id: number; error: { code: string; message: string; details?: Record<string, unknown> } }
  | { type: "closed" };

/** Where ThreadBuilder runs a build: its build thread, or a child process of the build's own. */
interface Host {
  send(m: ToThread): void;
  onMessage(fn: (m: FromThread) => void): void;
  /** When the host stopped, with why (a crash may tell twice: its error, then its exit). */
  onGone(fn: (why: string) => void): void;
  stop(): void;
}

function threadHost(): Host {
  const w = new Worker(new URL("./build-thread.js", import.meta.url));
  return {
    send: (m) => w.postMessage(m),
    onMessage: (fn) => void w.on("message", fn),
    onGone: (fn) => {
      w.on("error", (err) => {
        log.error("build thread failed", { error: err.stack ?? err.message });
        fn(err.message);
      });
      w.on("exit", (code) => fn(`exit ${code}`));
    },
    stop: () => void w.terminate(),
  };
}

function processHost(): Host {
  // The daemon's own flags and environment (its malloc settings); stdout and stderr are the daemon's log.
  const c = fork(fileURLToPath(new URL("./build-thread.js", import.meta.url)), [], { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
  // A daemon that exits however it exits takes its build along: a build busy in a loop never reads
  // the closed channel that would end it (orphaned with PPID 1, holding a core).
  const orphaned = () => void c.kill("SIGKILL");
  process.on("exit", orphaned);
  c.once("exit", () => process.off("exit", orphaned));
  return {
    send: (m) => {
      if (c.connected) c.send(m);
    },
    onMessage: (fn) => void c.on("message", (m) => fn(m as FromThread)),
    onGone: (fn) => {
      c.on("error", (err) => {
        log.error("build process failed", { error: err.stack ?? err.message });
        fn(err.message);
      });
      c.on("exit", (code, signal) => fn(`exit ${signal ?? code}`));
    },
    // SIGKILL: a build that is stuck (or stopped) does not act on SIGTERM.
    stop: () => void c.kill("SIGKILL"),
  };
}

/**
 * Builds off the daemon's main thread, which keeps answering from the previous index while a build
 * parses, resolves, embeds and writes (a forced build of a large tree holds a core for minutes), and
 * graph.json is serialised there too.
 * - Builds that change a few files run on the build thread, which keeps the warm build state
 *   between them; it starts on the first build.
 * - A build of the whole tree (forced, or the first one of a local index) runs in a child process of
 *   its own, which exits when it is done: the memory a full build leaves behind in the allocator's
 *   arenas (hundreds of MB on a large tree, native and never returned by a thread that exits) goes
 *   back to the system with it. A fresh build thread then loads the warm state from the index.
 */
export class ThreadBuilder implements Builder {
  onBackground?: (result: BuildResult) => void;
  onFilled?: (result: BuildResult) => void;
  /** A whole-tree build's process, filling its vectors and tokens after the build answered: it ends before another build starts. */
  private apart: Promise<void> = Promise.resolve();
  /** That process, while it lives. */
  private filling?: Host;
  private worker?: Host;
  /** The host of the build running now (the thread's or a process's). */
  private running?: Host;
  private nextId = 0;
  /** Builds sent to a host, by id; `stage` is where a cancel finds them (a writing build is past it). */
  private readonly pending = new Map<number, { host: Host; stage: "running" | "cancelled" | "writing"; resolve: (r: BuildResult) => void; reject: (e: Error) => void; onProgress?: (p: BuildProgress) => void }>();
  private readonly asked = new Map<number, (m: Record<string, number>) => void>();
  private closed?: Promise<void>;

  async build(cfg: ResolvedConfig, req: BuildRequest, onProgress?: (p: BuildProgress) => void): Promise<BuildResult> {
    await this.apart;
    if (wholeTree(cfg, req)) return this.buildApart(cfg, req, onProgress);
    const w = this.thread();
    const result = await this.buildOn(w, cfg, req, onProgress);
    if (result.files_changed >= RECYCLE_AFTER_FILES && this.worker === w) this.recycle(cfg);
    return result;
  }

  private async buildOn(host: Host, cfg: ResolvedConfig, req: BuildRequest, onProgress?: (p: BuildProgress) => void): Promise<BuildResult> {
    const id = this.nextId++;
    this.running = host;
    try {
      return await new Promise<BuildResult>((resolve, reject) => {
        this.pending.set(id, { host, stage: "running", resolve, reject, onProgress });
        host.send({ type: "build", id, cfg, req } satisfies ToThread);
      });
    } finally {
      if (this.running === host) this.running = undefined;
    }
  }

  /**
   * A whole-tree build in a process of its own. The build thread goes first: its warm state is about
   * to go stale, and a re-clustering it may have pending must not write beside the build.
   */
  private async buildApart(cfg: ResolvedConfig, req: BuildRequest, onProgress?: (p: BuildProgress) => void): Promise<BuildResult> {
    await this.closeThread();
    const host = this.host(processHost());
    log.info("building the whole tree in a process of its own", { force: !!req.force });
    // The process fills the build's vectors and tokens after it answered, then exits: the build
    // thread (and with it the next build) starts once it is gone, so one writer at a time.
    this.apart = new Promise((resolve) => host.onGone(() => resolve()));
    this.filling = host;
    void this.apart.then(() => {
      if (this.filling === host) this.filling = undefined;
    });
    try {
      return await this.buildOn(host, cfg, req, onProgress);
    } finally {
      host.send({ type: "close" } satisfies ToThread); // it finishes its fill, writes a pending graph.json, then exits
      void this.apart.then(() => this.warmThread(cfg));
    }
  }

  filled(): Promise<void> {
    return this.apart;
  }

  /**
   * A build of thousands of files leaves the thread's heap and its allocator's arenas hundreds of MB
   * above what the warm state needs (Go's src: the daemon at rest 926 MB after a full build, 580 MB
   * after a restart). The thread is replaced: the old one writes a pending graph.json and exits, the
   * new one loads the warm state.
   */
  private recycle(cfg: ResolvedConfig): void {
    void this.closeThread();
    log.info("build thread replaced after a large build", { files_over: RECYCLE_AFTER_FILES });
    this.warmThread(cfg);
  }

  /** A fresh build thread loads the warm state from the index at once (a build of no paths), so the next save finds it warm. */
  private warmThread(cfg: ResolvedConfig): void {
    if (this.windingDown) return; // the daemon is stopping
    this.buildOn(this.thread(), cfg, { paths: [], warm: true, deferGraphFile: true }).catch((err) => log.warn("loading the build state on a fresh build thread failed; the next build loads it", { error: (err as Error).message }));
  }

  /** The build thread closes (writing a pending graph.json, finishing a re-clustering) and exits. */
  private closeThread(): Promise<void> {
    const old = this.worker;
    if (!old) return Promise.resolve();
    this.worker = undefined;
    this.lastMemory = undefined;
    return new Promise((resolve) => {
      old.onGone(() => resolve());
      old.onMessage((m) => {
        if (m.type === "closed") old.stop();
      });
      old.send({ type: "close" } satisfies ToThread);
    });
  }

  /**
   * Cancels the running build unless it writes already. Its client hears at once: the build can no
   * longer write, for the write waits for this side's word (may-write), now no. A process of the
   * build's own holds nothing worth keeping and ends now; the build thread (its warm state kept)
   * stops at its next checkpoint, parse workers at once.
   */
  cancel(): boolean {
    const found = [...this.pending].find(([, b]) => b.host === this.running && b.stage !== "writing");
    if (!found) return false;
    const [id, p] = found;
    p.stage = "cancelled";
    p.reject(new CodememError("BUILD_CANCELLED", "The build was cancelled before it wrote anything; the index is as it was."));
    if (p.host === this.worker) p.host.send({ type: "cancel", id } satisfies ToThread);
    else p.host.stop();
    return true;
  }

  reset(): void {
    this.worker?.send({ type: "reset" } satisfies ToThread);
  }

  private aborted = false;
  private windingDown = false;

  windDown(): void {
    this.windingDown = true;
    this.stopFills();
  }

  /** The fill in hand (the whole-tree build's process, or a resumed one on the build thread) writes its part and stops. */
  stopFills(): void {
    for (const h of [this.filling, this.worker]) h?.send({ type: "stop-fills" } satisfies ToThread);
  }

  abort(): void {
    this.aborted = this.windingDown = true;
    if (this.running && this.running !== this.worker) this.running.stop();
    else this.cancel();
  }

  private lastMemory?: Record<string, number>;

  /**
   * The heap of the thread or process a build runs on (else the build thread's); undefined when none
   * runs. One busy in a parse or resolve loop answers late: after 100 ms the last figure it gave stands
   * in (daemon status must not wait on it).
   */
  memory(): Promise<Record<string, number> | undefined> {
    const w = this.running ?? this.worker;
    if (!w) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.asked.delete(id);
        resolve(this.lastMemory && { ...this.lastMemory, stale: 1 });
      }, 100);
      this.asked.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      w.send({ type: "memory", id } satisfies ToThread);
    });
  }

  private thread(): Host {
    if (!this.worker) {
      this.worker = this.host(threadHost());
      // A build let finish while the daemon stops (one that waited for a whole-tree build's process) leaves its fill for the next start.
      if (this.windingDown) this.worker.send({ type: "stop-fills" } satisfies ToThread);
    }
    return this.worker;
  }

  /** Wires a host's messages to the builds it runs; when it stops, they fail and the index stays as it was. */
  private host(h: Host): Host {
    h.onGone((why) => {
      if (this.worker === h) this.worker = undefined;
      for (const [id, p] of this.pending) {
        if (p.host !== h) continue;
        this.pending.delete(id);
        p.reject(
          this.aborted
            ? new CodememError("BUILD_CANCELLED", "The build was stopped because its daemon stopped; the previous index is intact. Run the build again.")
            : new CodememError("INTERNAL", `The build stopped (${why}); the previous index is intact. Run the build again.`),
        );
      }
    });
    h.onMessage((m) => {
      if (m.type === "closed") return;
      if (m.type === "background") return this.onBackground?.(m.result);
      if (m.type === "filled") return this.onFilled?.(m.result);
      if (m.type === "count-tokens") return void countHere(m.source).then((tokens) => h.send({ type: "tokens", id: m.id, tokens } satisfies ToThread));
      if (m.type === "memory") {
        this.lastMemory = m.memory; // a late answer still updates the stand-in
        this.asked.get(m.id)?.(m.memory);
        this.asked.delete(m.id);
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === "progress") return p.onProgress?.(m.progress);
      if (m.type === "may-write") {
        if (p.stage === "running") p.stage = "writing";
        return h.send({ type: "may-write", id: m.id, ok: p.stage === "writing" } satisfies ToThread);
      }
      this.pending.delete(m.id);
      if (m.type === "done") p.resolve(m.result);
      else p.reject(new CodememError(m.error.code as ErrorCode, m.error.message, m.error.details));
    });
    return h;
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      // A whole-tree build still running stops; its index is written in one final transaction, so the previous one stays.
      if (this.running && this.running !== this.worker) this.running.stop();
      await this.closeThread();
    })();
    return this.closed;
  }
}

/** The o200k count of a text in this thread (the daemon's, which answers with the tokenizer loaded). */
async function countHere(source: string): Promise<number> {
  return (await import("../../shared/tokens.js")).countTokens(source);
}

/** Builds of the whole tree: forced, or the first of a local index (another backend's first build is told by its store, in the build). */
function wholeTree(cfg: ResolvedConfig, req: BuildRequest): boolean {
  if (req.paths) return false;
  return !!req.force || (cfg.store.backend === "local" && !fs.existsSync(stateDirs(cfg.root).dbFile));
}
