/**
 * A reader's vector search on a thread of its own. The thread loads every vector of the index into
 * one VectorMatrix (from its own connection's snapshot) and answers nearest-neighbour requests, so a
 * search's node query runs on the reader's thread while the vectors are scored here: at 60K nodes
 * the scan (~3.5 ms) no longer adds to it. The whole-file BM25 query (~2 ms) runs here too, after
 * the scan, on the thread's own connection (committed index, as the reader's). Loading no longer
 * holds the reader's thread either. Messages are handled in order: a patch sent before a search is
 * in the matrix that search reads.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { CodememError } from "../../shared/errors.js";
import { collectWhenIdle } from "../../shared/memory.js";
import { bm25, FILE_WEIGHTS } from "./bm25.js";
import type { LexicalHit } from "./types.js";
import { VectorMatrix, type Quantized } from "./vector-matrix.js";

interface Start {
  file: string;
  dim: number;
}

type ToThread =
  | { type: "patch"; files: string[]; rows: { rowid: number; file: string }[]; vectors: [number, Quantized][] }
  | { type: "nearest"; id: number; q: Float32Array; limit: number }
  | { type: "files"; id: number; words: string[]; limit: number; common: string[] };

/** A request's answer: rowids and their similarities (nearest) or BM25 scores (files), best first. */
type FromThread =
  | { type: "loaded" }
  | { type: "failed"; message: string }
  | { type: "hits"; id: number; rowids: Int32Array; scores: Float64Array }
  | { type: "error"; id: number; message: string };

/** The reader's end: starts the thread, which loads at once; `loaded` settles when it has. */
export class VectorThread {
  readonly loaded: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (m: { rowids: Int32Array; scores: Float64Array }) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private gone?: Error;

  /** `onGone` is told when the thread stops by itself (a crash): the reader starts another when asked. */
  constructor(start: Start, onGone: () => void) {
    this.worker = new Worker(new URL("./vector-thread.js", import.meta.url), {
      workerData: { vectorThread: start },
      // Its allocations are small and short-lived (a search's hits): a small young generation keeps
      // an idle thread's footprint down (a reader of Go src warmed alone: 10–20 MB less resident than with V8's default).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    this.loaded = new Promise((resolve, reject) => {
      const fail = (why: string) => {
        if (this.gone) return;
        this.gone = new CodememError("INTERNAL", `The vector search thread stopped (${why}); the next search starts another.`);
        reject(this.gone);
        for (const p of this.pending.values()) p.reject(this.gone);
        this.pending.clear();
        onGone();
      };
      this.worker.on("message", (m: FromThread) => {
        if (m.type === "loaded") resolve();
        else if (m.type === "failed") {
          fail(m.message);
          void this.worker.terminate();
        } else {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          if (m.type === "hits") p?.resolve(m);
          else p?.reject(new CodememError("INTERNAL", `The vector search thread could not answer: ${m.message}`));
        }
      });
      this.worker.on("error", (err) => fail(err.message));
      this.worker.on("exit", (code) => fail(`exit ${code}`));
    });
    // A reader closed before its vectors loaded awaits nothing: the rejection is not an error then.
    this.loaded.catch(() => {});
  }

  /** Sent at once (not after an await), so the caller's next synchronous work overlaps the scan. */
  async nearest(q: Float32Array, limit: number): Promise<{ rowid: number; sim: number }[]> {
    const m = await this.ask((id) => ({ type: "nearest", id, q, limit }));
    return Array.from(m.rowids, (rowid, i) => ({ rowid, sim: m.scores[i] }));
  }

  /** The best files by whole-file BM25 (`bm25` on fts_files), after the vector requests sent before. */
  async lexicalFiles(words: string[], limit: number, common?: ReadonlySet<string>): Promise<LexicalHit[]> {
    const m = await this.ask((id) => ({ type: "files", id, words, limit, common: [...(common ?? [])] }));
    return Array.from(m.rowids, (rowid, i) => ({ rowid, score: m.scores[i] }));
  }

  private ask(request: (id: number) => ToThread): Promise<{ rowids: Int32Array; scores: Float64Array }> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage(request(id));
    });
  }

  /** Frees the slots of `files` and puts their current rows' vectors in (VectorMatrix.patch). */
  patch(files: string[], rows: { rowid: number; file: string }[], vectors: Map<number, Quantized>): void {
    if (this.gone) return;
    this.worker.postMessage({ type: "patch", files, rows, vectors: [...vectors] } satisfies ToThread);
  }

  async close(): Promise<void> {
    this.gone ??= new CodememError("INTERNAL", "The index reader was closed.");
    for (const p of this.pending.values()) p.reject(this.gone);
    this.pending.clear();
    await this.worker.terminate();
  }
}

/** The thread: load, then answer in order. */
async function serve(start: Start): Promise<void> {
  const port = parentPort!;
  let matrix: VectorMatrix;
  let db: Database.Database;
  try {
    db = new Database(start.file, { readonly: true, fileMustExist: true });
    try {
      sqliteVec.load(db);
      db.exec("BEGIN");
      // No pauses: nothing else runs on this thread, and requests wait in its queue meanwhile.
      matrix = await VectorMatrix.load(db, start.dim, () => Promise.resolve());
      db.exec("COMMIT");
    } catch (err) {
      db.close();
      throw err;
    }
  } catch (err) {
    port.postMessage({ type: "failed", message: (err as Error).message } satisfies FromThread);
    return;
  }
  const stmts = new Map<string, Database.Statement>();
  const stmt = (sql: string) => stmts.get(sql) ?? stmts.set(sql, db.prepare(sql)).get(sql)!;
  const reply = (id: number, hits: { rowid: number; score: number }[]) => {
    const rowids = Int32Array.from(hits, (h) => h.rowid);
    const scores = Float64Array.from(hits, (h) => h.score);
    port.postMessage({ type: "hits", id, rowids, scores } satisfies FromThread, [rowids.buffer, scores.buffer]);
  };
  port.on("message", (m: ToThread) => {
    if (m.type === "patch") return matrix.patch(m.files, m.rows, new Map(m.vectors));
    if (m.type === "nearest") return reply(m.id, matrix.nearest(m.q, m.limit).map((h) => ({ rowid: h.rowid, score: h.sim })));
    try {
      reply(m.id, bm25(stmt, "fts_files", FILE_WEIGHTS, m.words, m.limit, new Set(m.common)));
    } catch (err) {
      port.postMessage({ type: "error", id: m.id, message: (err as Error).message } satisfies FromThread);
    }
  });
  port.postMessage({ type: "loaded" } satisfies FromThread);
  // The load's row objects and buffers are garbage now, and an idle thread would keep them.
  collectWhenIdle(0);
}

if (!isMainThread && (workerData as { vectorThread?: Start } | undefined)?.vectorThread) void serve((workerData as { vectorThread: Start }).vectorThread);
