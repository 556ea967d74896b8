/**
 * The daemon's build thread: runs one build at a time for ThreadBuilder (builder.ts) and keeps the
 * warm build state between them. Messages are handled in order, so builds never overlap.
 * Forked as a child process instead (a whole-tree build), it runs that build and exits when closed.
 */
import os from "node:os";
import { parentPort } from "node:worker_threads";
import type { ResolvedConfig } from "../../shared/config.js";
import { asCodememError } from "../../shared/errors.js";
import { configureLog, log } from "../../shared/log.js";
import { collectWhenIdle } from "../../shared/memory.js";
import { LocalBuilder, memoryMb, rssMb, writeGraphInThread, type FromThread, type ToThread } from "./builder.js";
import type { Embedder } from "./embed/embedder.js";
import { createEmbedder } from "./embed/select.js";

/** The daemon's end: the thread's parent port, or the IPC channel of a child process. */
const port = parentPort
  ? { postMessage: (m: FromThread) => parentPort!.postMessage(m), on: (fn: (m: ToThread) => void) => void parentPort!.on("message", fn) }
  : { postMessage: (m: FromThread) => void process.send!(m), on: (fn: (m: ToThread) => void) => void process.on("message", fn) };

/** Posts `m`; settles once it has left (a process's channel writes as the event loop turns, a thread's port at once). */
function deliver(m: FromThread): Promise<void> {
  if (parentPort) {
    parentPort.postMessage(m);
    return Promise.resolve();
  }
  return new Promise((resolve) => void process.send!(m, undefined, {}, () => resolve()));
}
const apart = !parentPort;
// A process whose daemon is gone has no one to build for (its index is written in one final transaction).
if (apart) process.on("disconnect", () => process.exit(0));
let builder: LocalBuilder | undefined;
let embedder: { key: string; value: Promise<Embedder> } | undefined;

/** The embedder the configuration names, made again when the configuration changes it. */
function embedderFor(cfg: ResolvedConfig): Promise<Embedder> {
  const key = JSON.stringify(cfg.embedder);
  if (embedder?.key !== key) {
    const old = embedder?.value;
    embedder = { key, value: createEmbedder(cfg) };
    void old?.then((e) => e.close?.()).catch(() => {});
  }
  return embedder.value;
}

/**
 * Builds of at least this many files (or a warm load) end with a full collection once the thread is
 * idle. A save's build leaves little garbage at a time, which V8 collects as it goes; a forced
 * compacting collection after each save held the next save's build back by 0.2–0.7 s at 300K nodes.
 */
const HEAVY_BUILD_FILES = 24;
/**
 * Saves quiet this long: the thread is collected as after heavy work. What saves leave adds up and
 * an idle thread keeps it (Go's src, twenty saves and a delete: heap 174 MB against 139 after the
 * warm load, RSS at rest 514 MB; collected 5 s after the last, 139 MB and 467 MB).
 */
const SAVES_QUIET_MS = 5000;

/** The build running now, and builds cancelled before they started. */
let current: number | undefined;
const cancelledIds = new Set<number>();

/**
 * The niceness of a whole-tree build's process once it has answered: its fill (vectors, tokens,
 * graph.json) runs while the daemon opens the new index and answers, which come first.
 */
const FILL_NICENESS = 10;

/**
 * Lowers this thread's priority; the threads it starts from now on (the fill's workers, the
 * graph.json thread) inherit it. Raising niceness needs no privilege; where it fails, the fill runs as is.
 */
function yieldToAnswers(): void {
  try {
    os.setPriority(FILL_NICENESS);
  } catch (err) {
    log.debug("the fill keeps its priority", { error: (err as Error).message });
  }
}

/** Builds waiting for the daemon's word before their write, by id. */
const writeAsked = new Map<number, (ok: boolean) => void>();

/** Token counts asked of the daemon's thread, by id (countTokens). */
const countAsked = new Map<number, (tokens: number) => void>();
let nextCount = 0;

/**
 * A save's file counted by the daemon's thread, which holds the tokenizer for its answers: this
 * thread never loads a second copy (~45 MB at rest; 0.26 s of the first save after a start). A
 * process of a whole-tree build counts on its own workers (the build's fill).
 */
function countTokens(source: string): Promise<number> {
  const id = nextCount++;
  return askDaemon(countAsked, id, { type: "count-tokens", id, source });
}

/** Posts a question to the daemon's thread; its answer (by id, in `pending`) settles it. */
function askDaemon<T>(pending: Map<number, (answer: T) => void>, id: number, question: FromThread): Promise<T> {
  return new Promise((resolve) => {
    pending.set(id, (answer) => {
      pending.delete(id);
      resolve(answer);
    });
    port.postMessage(question);
  });
}

/** The daemon stops: fills end after their part (a builder made after this hears it too). */
let stopFills = false;

let queue = Promise.resolve();
port.on((m: ToThread) => {
  // Answered at once, between a build's awaits: a status request does not wait for the build.
  if (m.type === "memory") return void port.postMessage({ type: "memory", id: m.id, memory: apart ? { ...memoryMb(), rss: rssMb() } : memoryMb() } satisfies FromThread);
  // Also at once: it stops that build if it runs now, else it never starts (it may wait behind a warm load).
  if (m.type === "cancel") return void (m.id === current ? builder?.cancel() : cancelledIds.add(m.id));
  if (m.type === "may-write") return void writeAsked.get(m.id)?.(m.ok);
  if (m.type === "tokens") return void countAsked.get(m.id)?.(m.tokens);
  if (m.type === "stop-fills") {
    stopFills = true;
    return builder?.stopFills();
  }
  queue = queue.then(() => handle(m));
});

async function handle(m: ToThread): Promise<void> {
  if (m.type === "memory" || m.type === "cancel" || m.type === "may-write" || m.type === "stop-fills" || m.type === "tokens") return;
  if (m.type === "reset") return builder?.reset();
  if (m.type === "close") {
    await builder?.close();
    await embedder?.value.then((e) => e.close?.()).catch(() => {});
    if (apart) return void process.send!({ type: "closed" } satisfies FromThread, () => process.exit(0));
    return port.postMessage({ type: "closed" } satisfies FromThread);
  }
  configureLog({ debug: m.cfg.debug, component: "daemon" });
  if (!builder) {
    builder = new LocalBuilder(m.cfg.build.workers, embedderFor, writeGraphInThread, apart ? { keepsWarmState: false } : { countTokens });
    // A process exits after its build: clustering is done in it, not left for the background.
    if (!apart) builder.onBackground = (result) => port.postMessage({ type: "background", result } satisfies FromThread);
    builder.onFilled = (result) => port.postMessage({ type: "filled", result } satisfies FromThread);
    if (stopFills) builder.stopFills();
  }
  if (cancelledIds.delete(m.id)) {
    return port.postMessage({ type: "failed", id: m.id, error: { code: "BUILD_CANCELLED", message: "The build was cancelled before it started; the index is as it was." } } satisfies FromThread);
  }
  current = m.id;
  let heavy = true;
  // The fill this build may leave starts once its answer has left (a failed build's at once).
  let answered!: () => void;
  builder.answerDelivered(new Promise<void>((resolve) => (answered = resolve)));
  try {
    const mayWrite = () => askDaemon(writeAsked, m.id, { type: "may-write", id: m.id });
    const result = await builder.build(m.cfg, m.req, (progress) => port.postMessage({ type: "progress", id: m.id, progress } satisfies FromThread), mayWrite);
    heavy = !!m.req.warm || result.files_changed + result.files_removed >= HEAVY_BUILD_FILES;
    void deliver({ type: "done", id: m.id, result } satisfies FromThread).finally(answered);
    if (result.filling?.length) {
      if (apart) yieldToAnswers();
      // The fill's garbage (its parts' texts, vectors and counts) is the thread's to drop once it is
      // done: a daemon that resumed a fill kept it at rest (Go's src: heap 123 → 203 MB, RSS 413 → 593 MB).
      else void builder.filled().then(() => collectWhenIdle());
    }
  } catch (err) {
    const e = asCodememError(err);
    port.postMessage({ type: "failed", id: m.id, error: { code: e.code, message: e.message, details: e.details } } satisfies FromThread);
    answered();
  } finally {
    current = undefined;
    collectWhenIdle(heavy ? undefined : SAVES_QUIET_MS);
  }
}
