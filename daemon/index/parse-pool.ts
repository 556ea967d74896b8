import { Worker } from "node:worker_threads";
import { Extractor } from "./extract.js";
import { languageById } from "./languages/registry.js";
import type { FileExtract, LanguageId } from "./types.js";

interface Job {
  path: string;
  language: LanguageId;
  source: string;
}

/**
 * Parses on `size` lanes: the calling thread plus `size - 1` worker threads, when there is enough work
 * to pay for them; small batches stay in-process.
 */
export class ParsePool {
  private workers: Worker[] = [];
  private local = new Extractor();
  private nextId = 0;
  private pending = new Map<number, { resolve: (e: FileExtract) => void; reject: (e: Error) => void }>();
  private idleTimer?: NodeJS.Timeout;

  constructor(private readonly size: number) {}

  async extractAll(jobs: Job[], onDone?: (n: number) => void): Promise<{ extracts: FileExtract[]; failed: { path: string; error: string }[] }> {
    const extracts: FileExtract[] = [];
    const failed: { path: string; error: string }[] = [];
    let done = 0;
    const record = (p: Promise<FileExtract>, job: Job) =>
      p.then(
        (e) => extracts.push(e),
        (err: Error) => failed.push({ path: job.path, error: err.message }),
      ).finally(() => onDone?.(++done));
    if (jobs.length < 24 || this.size <= 1) {
      for (const job of jobs) await record(this.local.extract(job.path, job.source, languageById(job.language)), job);
    } else {
      this.start();
      // Largest first spreads the tail across workers.
      const order = [...jobs].sort((a, b) => b.source.length - a.source.length);
      let cursor = 0;
      const lane = async (w: Worker) => {
        while (cursor < order.length) {
          const job = order[cursor++];
          await record(this.run(w, job), job);
        }
      };
      // The calling thread is one lane too: both cores work with one worker heap fewer (~220 MB each).
      const localLane = async () => {
        while (cursor < order.length) {
          const job = order[cursor++];
          await record(this.local.extract(job.path, job.source, languageById(job.language)), job);
        }
      };
      await Promise.all([...this.workers.map(lane), localLane()]);
    }
    extracts.sort((a, b) => (a.path < b.path ? -1 : 1));
    return { extracts, failed };
  }

  /** Workers hold a V8 heap and grammars each: release them when no build has needed them for a while. */
  idle(afterMs = 10_000): void {
    clearTimeout(this.idleTimer);
    if (this.workers.length === 0) return;
    this.idleTimer = setTimeout(() => void this.close(), afterMs);
    this.idleTimer.unref();
  }

  private start(): void {
    clearTimeout(this.idleTimer);
    while (this.workers.length < this.size - 1) {
      const w = new Worker(new URL("./parse-worker.js", import.meta.url));
      w.on("message", (m: { id: number; extract?: FileExtract; error?: string }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.extract) p.resolve(m.extract);
        else p.reject(new Error(m.error ?? "parse failed"));
      });
      this.workers.push(w);
    }
  }

  private run(w: Worker, job: Job): Promise<FileExtract> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ id, ...job });
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}
