import fs from "node:fs";
import { appendEvent } from "../../shared/events.js";
import { isCorruptionError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { stateDirs, toProjectPath } from "../../shared/paths.js";
import type { CoChangePartners } from "../retrieve/context.js";
import type { Recall, Retriever } from "../retrieve/retriever.js";
import { sessionFocus } from "./focus.js";
import { SynapseStore } from "./store.js";

/** How history is learned (`[synapses]`): newest commits read, the bulk cap, the half-lives of evidence in the file's and the project's commits. */
export interface HistoryLearning {
  commits: number;
  maxFiles: number;
  halfLife: { file: number; project: number };
}

/** A node's name and place, for synapse reports; ids missing from the index stay undescribed. */
export type Describe = (id: string) => { name: string; file_path: string; line_start: number } | undefined;

/**
 * A project's learned memory as the engine uses it: the synapse store's life (opened on first use, a
 * damaged one moved aside while answers go on), what teaches it (outlines opened, hooks, watch
 * batches, git history) and what it gives back (recall for ranking, co-change partners, reports).
 * Only the daemon's engine writes it.
 */
export class ProjectMemory {
  private opened?: SynapseStore;
  private warned = false;
  /** History replays run one at a time, after the build that started them. */
  private history: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly root: string,
    /** The code index's reader, or undefined before the first build. */
    private readonly reader: () => Promise<Retriever | undefined>,
    private readonly sideEffects: boolean,
  ) {}

  private get file(): string {
    return stateDirs(this.root).synapseDb;
  }

  /** The store (.codemem/synapses.db), opened on first use; the synapse tools report its errors. */
  store(): SynapseStore {
    this.opened ??= SynapseStore.open(this.file);
    return this.opened;
  }

  /** The store when one exists, without creating it. */
  existing(): SynapseStore | undefined {
    return fs.existsSync(this.file) ? this.store() : undefined;
  }

  /** The store for learning and recall alongside answers, or undefined when unreadable (warned once). */
  private readable(): SynapseStore | undefined {
    try {
      return this.store();
    } catch (err) {
      if (!this.warned) log.warn("synapse store unreadable; answering and indexing without it", { error: (err as Error).message });
      this.warned = true;
      return undefined;
    }
  }

  /**
   * Runs `fn` on the store alongside an answer. A damaged page found there (the store opened fine)
   * must not fail the answer: the store is moved aside as `synapses.db.corrupt-<time>` (learned
   * memory, kept, not deleted), a fresh one starts at the next use, and `fallback` stands in.
   */
  with<T>(fn: (s: SynapseStore) => T, fallback: T): T {
    const store = this.readable();
    if (!store) return fallback;
    try {
      return fn(store);
    } catch (err) {
      if (!isCorruptionError(err)) throw err;
      const aside = `${this.file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      try {
        store.close();
      } catch {
        // a damaged store may fail its final checkpoint
      }
      this.opened = undefined;
      fs.renameSync(this.file, aside);
      for (const s of ["-wal", "-shm"]) fs.rmSync(this.file + s, { force: true });
      log.warn("the synapse store is damaged; kept aside, learning starts over in a new one", { file: this.file, aside, error: (err as Error).message });
      return fallback;
    }
  }

  /** Co-activation of code used together (no-op for benchmark and evaluation runs). */
  reinforce(ids: string[], source: string): number {
    if (!this.sideEffects || ids.length < 2) return 0;
    return this.with((s) => s.reinforce(ids, { source }), { pairs: 0 }).pairs;
  }

  /** Spreading activation from the strongest hits, for search and query; undefined without a store. */
  recall(r: Retriever): Recall | undefined {
    if (!fs.existsSync(this.file) || !this.readable()) return undefined;
    const fileOf = (id: string) => r.byId.get(id)?.file_path;
    return {
      neighbors: (seeds) => this.with((store) => new Map(store.neighbors(seeds, { depth: 2, k: 10 }).map((n) => [n.id, n.activation])), new Map<string, number>()),
      focus: this.with((store) => sessionFocus(store, fileOf), undefined),
    };
  }

  /** Strong co-change partners of a file from the history, for the query answer (none without a store). */
  coChangePartners(): CoChangePartners | undefined {
    if (!fs.existsSync(this.file) || !this.readable()) return undefined;
    return (file) => this.with((s) => s.historyPartners(file, { limit: 3, minCommits: 3, minWeight: 0.15 }), []).map((p) => ({ file: p.id, commits: p.commits }));
  }

  /** Every co-change partner of a file the history knows (none without a store), for impact. */
  historyPartners(limit = 20): ((file: string) => { id: string; commits: number; weight: number }[]) | undefined {
    if (!fs.existsSync(this.file) || !this.readable()) return undefined;
    return (file) => this.with((s) => s.historyPartners(file, { limit, minCommits: 1, minWeight: 0 }), []);
  }

  async describer(): Promise<Describe> {
    const r = await this.reader();
    return (id) => {
      const n = r?.byId.get(id);
      return n ? { name: n.qualified_name, file_path: n.file_path, line_start: n.line_start } : undefined;
    };
  }

  /** A file named by an absolute or project-relative path, as its node id (its project path). */
  fileNode(file: string): string | undefined {
    try {
      return toProjectPath(this.root, file);
    } catch {
      return undefined;
    }
  }

  /** Hooks report touched files: their module nodes and (one file) its top-level symbols reinforce together. */
  async hookEvent(files: string[], event: string): Promise<{ reinforced_pairs: number; nodes: number }> {
    const r = await this.reader();
    if (!r) return { reinforced_pairs: 0, nodes: 0 }; // hooks may be installed before the first build
    // Files outside the project say nothing about it.
    const ids = files.map((f) => this.fileNode(f)).filter((f): f is string => !!f && r.byId.has(f));
    // One file touched: associate its module with its top-level symbols (what the assistant was in).
    if (ids.length === 1) {
      for (const nb of (await r.neighborsOf([ids[0]])).get(ids[0]) ?? []) if (nb.type === "contains" && ids.length < 12) ids.push(nb.id);
    }
    return { reinforced_pairs: this.reinforce(ids, `hook:${event}`), nodes: ids.length };
  }

  /** A watch batch: the files changed together are associated. */
  async watchBatch(files: string[]): Promise<void> {
    if (!this.sideEffects) return;
    const r = await this.reader();
    const ids = r ? files.filter((f) => r.byId.has(f)) : [];
    this.reinforce(ids, "watch");
    appendEvent(this.root, { source: "watch", kind: "watch_batch", files: files.slice(0, 50), nodes: ids.slice(0, 50) });
  }

  /** Reads the commits not yet read in the background, one replay after another. */
  learnInBackground(opts: HistoryLearning): void {
    if (!this.sideEffects) return;
    this.history = this.history.then(() => this.learnHistory(opts)).catch((err) => void log.warn("learning from git history failed", { error: (err as Error).message }));
  }

  /** Commits not yet read (all of the newest `commits` when re-reading) become co-change synapses. */
  async learnHistory(opts: HistoryLearning & { reread?: boolean }): Promise<{ commits: number; learned: number; pairs: number }> {
    // Outside git (or with history off) the store is not even opened.
    const { gitHead, replayHistory } = await import("./history.js");
    const head = opts.commits > 0 ? await gitHead(this.root) : undefined;
    const r = head ? await this.reader() : undefined;
    if (!head || !r) return { commits: 0, learned: 0, pairs: 0 };
    const t0 = performance.now();
    const out = await this.with(
      (store) => replayHistory(store, this.root, { ...opts, head, isIndexed: (f) => r.files.has(f) }),
      Promise.resolve({ commits: 0, learned: 0, pairs: 0 }),
    );
    if (out.commits > 0) {
      log.info("learned co-change from git history", { ...out, ms: Math.round(performance.now() - t0) });
      appendEvent(this.root, { source: "daemon", kind: "history", commits: out.commits, learned: out.learned });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.history;
    this.opened?.close();
  }
}
