import { Worker } from "node:worker_threads";
import type { PreparedDoc } from "./documents.js";
import { split, type Packed } from "../store/deflate-thread.js";
import { Extractor } from "./extract.js";
import { languageById } from "./languages/registry.js";
import type { FileExtract, LanguageId } from "./types.js";

const WORKER_QUEUE = 4;
/**
 * Old-generation cap per worker: it holds the file in hand (≤ max_file_bytes), its extract and, with
 * the built-in embedder, that embedder's word index and the file's documents. At 64 MB, preparing
 * documents made the Go tree's workers collect garbage so often that parsing took 45.8 s instead of
 * 21.5 (in-process forced build); at 128 MB it took 21.5 s with the documents made.
 */
const WORKER_HEAP_MB = 128;

interface Job {
  path: string;
  language: LanguageId;
  source: string;
  /** The built-in or trained embedder's id: a worker also prepares the file's definition documents with it. */
  embedder?: string;
  /** Tokens and vectors left for the build's fill (see build.ts): documents come without vectors. */
  light?: boolean;
  /** Definitions' texts and the extract come in a local index's stored form too (Prepared). */
  stored?: boolean;
}

/** A file's share of a build's fill: its source to count tokens of (when they are due) and its nodes' embedding texts. */
export interface FillJob {
  path: string;
  source?: string;
  texts: string[];
}

/** What a fill job gives back: the file's tokens (when counted) and its texts' vectors (when the workers' embedder made them). */
export interface Filled {
  tokens?: number;
  vectors?: Float32Array[];
}

/** A worker's answer: the extract, and the documents it prepared (its definitions', its module's file words). */
interface Parsed {
  extract: FileExtract;
  docs?: [string, PreparedDoc][];
  fileWords?: string;
  /** The stored form of each of `docs`' texts, in order, then the extract's (Job's `stored`). */
  stored?: Packed;
}

/** Documents the workers prepared while parsing: definitions' by `docKey`, modules' file words by path. */
export interface Prepared {
  docs: Map<string, PreparedDoc>;
  fileWords: Map<string, string>;
  /** Extracts in a local index's stored form, by path, when asked for (`stored`). */
  extracts: Map<string, Buffer>;
}

/** Fill jobs each worker holds at once (one job is a file's texts and tokens: a few ms; a part's write, ~50 ms). */
const FILL_DEPTH = 24;
/** Parts of a fill the workers may run ahead of the one being written. */
const FILL_AHEAD = 2;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A worker died (out of heap on a pathological file, a crash) with the job in flight. */
class WorkerLost extends Error {}

/** Parses on worker threads when there is enough work to pay for them; small batches stay in-process. */
export class ParsePool {
  private workers: Worker[] = [];
  private local = new Extractor();
  private nextId = 0;
  private pending = new Map<number, { resolve: (e: Parsed) => void; reject: (e: Error) => void }>();
  private idleTimer?: NodeJS.Timeout;
  private owner = new Map<number, Worker>();

  constructor(private readonly size: number) {}

  /**
   * Extracts of the files; with `embedder` (the built-in one's id), files parsed on workers also come
   * with their definitions' documents, keyed by `docKey` (files parsed in-process come without).
   */
  async extractAll(
    jobs: Job[],
    onDone?: (n: number) => void,
    signal?: AbortSignal,
    embedder?: string,
    light = false,
    stored = false,
  ): Promise<{ extracts: FileExtract[]; failed: { path: string; error: string }[]; prepared: Prepared }> {
    const extracts: FileExtract[] = [];
    const prepared: Prepared = { docs: new Map(), fileWords: new Map(), extracts: new Map() };
    const failed: { path: string; error: string }[] = [];
    /** Jobs whose worker died under them: any of its in-flight files may have caused it. */
    const lost: Job[] = [];
    let done = 0;
    const record = (p: Promise<Parsed>, job: Job, alone = false) =>
      p.then(
        (e) => {
          extracts.push(e.extract);
          const stored = e.stored && split(e.stored.bytes, e.stored.ends);
          for (const [i, [k, d]] of (e.docs ?? []).entries()) prepared.docs.set(k, stored ? { ...d, stored: stored[i] } : d);
          if (e.fileWords !== undefined) prepared.fileWords.set(e.extract.path, e.fileWords);
          if (stored) prepared.extracts.set(e.extract.path, stored[stored.length - 1]);
          onDone?.(++done);
        },
        (err: Error) => {
          if (err instanceof WorkerLost && !alone) return void lost.push(job);
          const why = err instanceof WorkerLost ? `needs more memory than a parser worker has (${WORKER_HEAP_MB} MB): ${err.message}` : err.message;
          failed.push({ path: job.path, error: why });
          onDone?.(++done);
        },
      );
    // A cancel stops the workers at once, files in hand included (a large file takes seconds to parse
    // on a busy machine): what they held comes back as lost and is not retried once the signal fired.
    const stop = () => void this.close();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      await this.extractInto(jobs, record, lost, signal, embedder, light, stored);
    } finally {
      signal?.removeEventListener("abort", stop);
    }
    extracts.sort((a, b) => (a.path < b.path ? -1 : 1));
    return { extracts, failed, prepared };
  }

  private async extractInto(jobs: Job[], record: (p: Promise<Parsed>, job: Job, alone?: boolean) => Promise<void>, lost: Job[], signal: AbortSignal | undefined, embedder: string | undefined, light: boolean, stored: boolean): Promise<void> {
    if (jobs.length < 24 || this.size <= 1) {
      for (const job of jobs) {
        if (signal?.aborted) break;
        await record(this.local.extract(job.path, job.source, languageById(job.language), { countTokens: !light }).then((extract) => ({ extract })), job, true);
      }
    } else {
      this.start();
      // Largest first spreads the tail across workers.
      const order = [...jobs].sort((a, b) => b.source.length - a.source.length).map((j) => ({ ...j, embedder, light, stored }));
      let cursor = 0;
      // Each worker keeps a few jobs queued, so it never waits for the busy main thread between files.
      const lane = async (w: Worker) => {
        const inFlight = new Set<Promise<unknown>>();
        const alive = () => this.workers.includes(w);
        while ((cursor < order.length && alive() && !signal?.aborted) || inFlight.size > 0) {
          while (cursor < order.length && inFlight.size < WORKER_QUEUE && alive() && !signal?.aborted) {
            const job = order[cursor++];
            const p: Promise<unknown> = record(this.run(w, job), job).finally(() => inFlight.delete(p));
            inFlight.add(p);
          }
          if (inFlight.size > 0) await Promise.race(inFlight);
        }
      };
      await Promise.all(this.workers.map(lane));
      // What a dead worker took down with it (and what no live worker was left to take): one file
      // at a time, so only the file that kills a worker fails.
      for (const job of [...lost, ...order.slice(cursor)]) {
        if (signal?.aborted) break;
        this.start();
        await record(this.run(this.workers[0], job), job, true);
      }
    }
  }

  /**
   * A build's fill on the workers: each file's tokens counted and, with `embedder` (the built-in or
   * trained one's id), its texts embedded; its parts answered in order, each part's files by path. The workers go on with the parts
   * after the one the caller is writing (up to FILL_AHEAD of them) instead of waiting for its write
   * and, between parts, for the part's last file (Go's src: they sat idle a third of the fill).
   * A part's jobs (`jobOf` of its paths) are made once it comes within reach, so its sources are
   * copied no earlier. Fewer than 24 files in all, and a worker lost under a job, leave their jobs to
   * this thread, without vectors (the caller embeds them).
   */
  async *fillParts(parts: string[][], jobOf: (path: string) => FillJob, embedder: string | undefined, counter: () => Promise<(source: string) => number>, opts: { oneWorkerUntil?: Promise<unknown> } = {}): AsyncGenerator<Map<string, Filled>> {
    const count = parts.length;
    const jobs: FillJob[][] = [];
    const made = (i: number) => (jobs[i] ??= parts[i].map(jobOf));
    // This thread loads the token counter only for files it counts itself (its rank table: ~0.5 s, 20 MB).
    const here = async (j: FillJob): Promise<Filled> => ({ tokens: j.source === undefined ? undefined : (await counter())(j.source) });
    if (this.size <= 1 || parts.reduce((n, p) => n + p.length, 0) < 24) {
      for (let i = 0; i < count; i++) {
        const got = new Map<string, Filled>();
        for (const j of made(i)) got.set(j.path, await here(j));
        yield got;
      }
      return;
    }
    // One worker while `oneWorkerUntil` (graph.json's thread) holds the other core and its memory.
    this.start(opts.oneWorkerUntil ? 1 : this.size);
    const out = Array.from({ length: count }, () => new Map<string, Filled>());
    const left: number[] = [];
    const ready = Array.from({ length: count }, () => deferred());
    let at = { part: 0, job: 0 };
    let written = 0;
    let stopped = false;
    let waiting: (() => void)[] = [];
    const wake = () => {
      for (const w of waiting) w();
      waiting = [];
    };
    /** The next job for a lane, "wait" when it lies beyond reach, undefined when none is left. */
    const take = (): { part: number; job: FillJob } | "wait" | undefined => {
      while (at.part < count) {
        if (at.part > written + FILL_AHEAD) return "wait";
        const part = made(at.part);
        left[at.part] ??= part.length;
        if (part.length === 0) ready[at.part].resolve();
        if (at.job < part.length) return { part: at.part, job: part[at.job++] };
        at = { part: at.part + 1, job: 0 };
      }
      return undefined;
    };
    const lane = async (w: Worker) => {
      while (!stopped && this.workers.includes(w)) {
        const next = take();
        if (next === undefined) return;
        if (next === "wait") {
          await new Promise<void>((r) => waiting.push(r));
          continue;
        }
        const filled = await this.ask<Filled>(w, { fill: true, source: next.job.source, texts: next.job.texts, embedder }).catch(() => undefined);
        if (filled) out[next.part].set(next.job.path, filled);
        if (--left[next.part] === 0) ready[next.part].resolve();
      }
    };
    // Several jobs in hand per worker: it goes on with them while this thread writes a part.
    const lanesOf = (ws: Worker[]) => Promise.all(ws.flatMap((w) => Array.from({ length: FILL_DEPTH }, () => lane(w))));
    const first = [...this.workers];
    const lanes: Promise<unknown>[] = [lanesOf(first)];
    if (opts.oneWorkerUntil) {
      const then = opts.oneWorkerUntil.catch(() => {}).then(() => {
        if (stopped) return;
        this.start();
        return lanesOf(this.workers.filter((w) => !first.includes(w)));
      });
      lanes.push(then.then(() => undefined));
    }
    // Lanes that all ended (their workers lost) leave every part to this thread.
    const lanesEnded = Promise.all(lanes).then(() => undefined);
    try {
      for (let i = 0; i < count; i++) {
        await Promise.race([ready[i].promise, lanesEnded]);
        const got = out[i];
        for (const j of made(i)) if (!got.has(j.path)) got.set(j.path, await here(j));
        yield got;
        out[i] = new Map();
        jobs[i] = [];
        written = i + 1;
        wake();
      }
    } finally {
      stopped = true;
      wake();
    }
  }

  /** Workers running now (started by the first job, gone after `close` or an idle spell). */
  get live(): number {
    return this.workers.length;
  }

  /** Workers hold a V8 heap and grammars each: release them when no build has needed them for a while. */
  idle(afterMs = 10_000): void {
    clearTimeout(this.idleTimer);
    if (this.workers.length === 0) return;
    // Workers with jobs in hand (a build's fill) are not idle.
    this.idleTimer = setTimeout(() => (this.pending.size > 0 ? this.idle(afterMs) : void this.close()), afterMs);
    this.idleTimer.unref();
  }

  private start(count = this.size): void {
    clearTimeout(this.idleTimer);
    while (this.workers.length < Math.min(count, this.size)) {
      // A worker's heap only holds the file in hand and its extract: cap it so idle garbage is collected early.
      const w = new Worker(new URL("./parse-worker.js", import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
      // A worker that dies (out of heap on a pathological file, a crash) fails its jobs, never hangs the build.
      const fail = (why: string) => {
        for (const [id, p] of this.pending) {
          if (this.owner.get(id) !== w) continue;
          this.pending.delete(id);
          p.reject(new WorkerLost(why));
        }
        this.workers = this.workers.filter((x) => x !== w);
      };
      w.on("error", (err) => fail(err.message));
      w.on("exit", (code) => fail(`parser worker exited (${code})`));
      w.on("message", (m: Partial<Parsed> & { id: number; error?: string; filled?: Filled }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        this.owner.delete(m.id);
        if (m.filled) p.resolve(m.filled as never);
        else if (m.extract) p.resolve({ extract: m.extract, docs: m.docs, fileWords: m.fileWords, stored: m.stored });
        else p.reject(new Error(m.error ?? "parse failed"));
      });
      this.workers.push(w);
    }
  }

  private run(w: Worker, job: Job): Promise<Parsed> {
    return this.ask<Parsed>(w, job);
  }

  /** One message to a worker and its answer. */
  private ask<T>(w: Worker, msg: object): Promise<T> {
    if (!this.workers.includes(w)) return Promise.reject(new WorkerLost("parser worker is gone"));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (e: Parsed) => void, reject });
      this.owner.set(id, w);
      w.postMessage({ id, ...msg });
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}
