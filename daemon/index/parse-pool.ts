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

/** Fill jobs each worker holds at once (one job is a file's texts and tokens: a few ms). */
const FILL_DEPTH = 8;

/** A worker died (out of heap on a pathological file, a crash) with the job in flight. */
class WorkerLost extends Error {}

/**
 * Languages a build has little of, each given to one worker (by index) to parse alone. A worker that
 * meets a language loads its grammar, compiles its query (C++'s takes 0.44 s) and warms its parser
 * up (the first files of a grammar parse several times slower): Go's src's 16 C++, 17 shell and
 * 79 C files cost each of two workers that much more than parsing them. A language is pinned when
 * its bytes are at most half of a worker's share of the build, so the shared rest still balances
 * the workers (each takes its own languages first); the largest pinned language goes first, to the
 * worker with the fewest pinned bytes.
 */
export function pinnedLanguages(jobs: readonly { language: LanguageId; source: string }[], workers: number): Map<LanguageId, number> {
  const pinned = new Map<LanguageId, number>();
  if (workers <= 1) return pinned;
  const bytes = new Map<LanguageId, number>();
  let total = 0;
  for (const j of jobs) {
    bytes.set(j.language, (bytes.get(j.language) ?? 0) + j.source.length);
    total += j.source.length;
  }
  const load = new Array<number>(workers).fill(0);
  const small = [...bytes].filter(([, b]) => b <= total / workers / 2).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  for (const [language, b] of small) {
    // Never pin all a build's languages: one language left shared keeps every worker busy to the end.
    if (pinned.size === bytes.size - 1) break;
    const w = load.indexOf(Math.min(...load));
    pinned.set(language, w);
    load[w] += b;
  }
  return pinned;
}

/** Parses on worker threads when there is enough work to pay for them; small batches stay in-process. */
export class ParsePool {
  private workers: Worker[] = [];
  private local = new Extractor();
  private nextId = 0;
  private pending = new Map<number, { resolve: (e: Parsed) => void; reject: (e: Error) => void }>();
  private idleTimer?: NodeJS.Timeout;
  private owner = new Map<number, Worker>();

  /**
   * `countElsewhere`: where files parsed in this thread have their tokens counted instead of here
   * (the daemon's build thread asks its main thread, which holds the tokenizer already: a second
   * copy cost the build thread ~45 MB at rest and its first save ~0.26 s to load).
   */
  constructor(
    private readonly size: number,
    private readonly countElsewhere?: (source: string) => Promise<number>,
  ) {}

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
        const elsewhere = light ? undefined : this.countElsewhere;
        const parsed = this.local.extract(job.path, job.source, languageById(job.language), { countTokens: !light && !elsewhere }).then(async (extract) => {
          if (elsewhere) extract.tokens = await elsewhere(job.source);
          return { extract };
        });
        await record(parsed, job, true);
      }
    } else {
      this.start();
      // Largest first spreads the tail across workers.
      const order = [...jobs].sort((a, b) => b.source.length - a.source.length).map((j) => ({ ...j, embedder, light, stored }));
      const lanes = this.workers.length;
      const pin = pinnedLanguages(order, lanes);
      // A worker's own languages first: the others share what is left, and they finish together.
      const own: Job[][] = Array.from({ length: lanes }, () => []);
      const shared: Job[] = [];
      for (const job of order) {
        const w = pin.get(job.language);
        if (w === undefined) shared.push(job);
        else own[w].push(job);
      }
      let cursor = 0;
      const next = (k: number): Job | undefined => own[k].shift() ?? (cursor < shared.length ? shared[cursor++] : undefined);
      const left = (k: number) => own[k].length > 0 || cursor < shared.length;
      // Each worker keeps a few jobs queued, so it never waits for the busy main thread between files.
      const lane = async (w: Worker, k: number) => {
        const inFlight = new Set<Promise<unknown>>();
        const alive = () => this.workers.includes(w);
        while ((left(k) && alive() && !signal?.aborted) || inFlight.size > 0) {
          while (left(k) && inFlight.size < WORKER_QUEUE && alive() && !signal?.aborted) {
            const job = next(k)!;
            const p: Promise<unknown> = record(this.run(w, job), job).finally(() => inFlight.delete(p));
            inFlight.add(p);
          }
          if (inFlight.size > 0) await Promise.race(inFlight);
        }
      };
      await Promise.all(this.workers.map(lane));
      // What a dead worker took down with it, and what it had left (no live worker took those): one
      // file at a time, so only the file that kills a worker fails.
      for (const job of [...lost, ...own.flat(), ...shared.slice(cursor)]) {
        if (signal?.aborted) break;
        this.start();
        await record(this.run(this.workers[0], job), job, true);
      }
    }
  }

  /**
   * A build's fill on the workers: each file's tokens counted and, with `embedder` (the built-in or
   * trained one's id), its texts embedded. Few jobs, or one worker, count here and embed nothing
   * (the caller embeds what comes back without vectors).
   */
  async fillAll(jobs: FillJob[], embedder: string | undefined, count: (source: string) => number): Promise<Map<string, Filled>> {
    const out = new Map<string, Filled>();
    if (jobs.length < 24 || this.size <= 1) {
      for (const j of jobs) out.set(j.path, { tokens: j.source === undefined ? undefined : count(j.source) });
      return out;
    }
    this.start();
    let cursor = 0;
    const lane = async (w: Worker) => {
      while (cursor < jobs.length && this.workers.includes(w)) {
        const j = jobs[cursor++];
        const filled = await this.ask<Filled>(w, { fill: true, source: j.source, texts: j.texts, embedder }).catch(() => undefined);
        if (filled) out.set(j.path, filled);
      }
    };
    // Several jobs in hand per worker: it goes on with them while this thread writes a part (a build's fill).
    await Promise.all(this.workers.flatMap((w) => Array.from({ length: FILL_DEPTH }, () => lane(w))));
    // A worker lost under a job: what is left is done here, without vectors (the caller embeds them).
    for (const j of jobs) if (!out.has(j.path)) out.set(j.path, { tokens: j.source === undefined ? undefined : count(j.source) });
    return out;
  }

  /**
   * Loads a language's grammar and compiles its query in this thread, ahead of the files parsed here
   * (a save's); with a sample file, parses it too (its code paths' first run is several times slower).
   */
  async prepare(language: LanguageId, sample?: { path: string; source: string }): Promise<void> {
    const spec = languageById(language);
    if (sample) await this.local.extract(sample.path, sample.source, spec, { countTokens: false });
    else await this.local.prepare(spec);
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

  private start(): void {
    clearTimeout(this.idleTimer);
    while (this.workers.length < this.size) {
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
