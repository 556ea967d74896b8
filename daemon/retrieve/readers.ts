import type { ResolvedConfig } from "../../shared/config.js";
import { log } from "../../shared/log.js";
import { collectWhenIdle } from "../../shared/memory.js";
import type { BuildResult } from "../index/build.js";
import { testClassifier } from "../index/test-code.js";
import { openStore } from "../store/open.js";
import { Retriever } from "./retriever.js";

/** A replaced reader stays open this long, so answers already under way on it finish. */
const READER_CLOSE_DELAY_MS = 10_000;

/**
 * The warm read view of a project's index: opened on first use, patched after small builds,
 * reopened after large ones, and after a forced build replaced by a new reader only once that one is
 * warm. A replaced reader closes a little later, so answers already under way on it finish.
 */
export class Readers {
  private ret?: Promise<Retriever>;
  /** The reader being opened to take over from one whose index was replaced (see handOver). */
  private next?: Promise<Retriever>;
  /** Replaced readers waiting out READER_CLOSE_DELAY_MS; `close` closes them at once. */
  private readonly delayed = new Set<() => Promise<void>>();
  /** Closed (the engine stops): nothing opens a reader any more. */
  private closed = false;

  constructor(
    private readonly cfg: () => ResolvedConfig,
    /** Serving as the daemon: a reader answers once its catalog is read while the rest warms up. */
    private readonly daemon: boolean,
  ) {}

  /** The warm reader, opened now if there is none (`opts`: how, see Retriever.open). */
  current(opts?: Parameters<typeof Retriever.open>[1]): Promise<Retriever> {
    this.ret ??= this.open(opts).catch((err) => {
      this.ret = undefined;
      throw err;
    });
    return this.ret;
  }

  /**
   * The reader of the index as last built: the one taking over when a handover is under way (it
   * resolves once that one is warm), else the warm one. What describes the index (stats) reads it;
   * answers read `current`, which does not wait.
   */
  latest(): Promise<Retriever> {
    return this.next ? this.next.catch(() => this.current()) : this.current();
  }

  /** The reader, or undefined when there is no index yet. */
  async currentOrNone(): Promise<Retriever | undefined> {
    try {
      return await this.current();
    } catch {
      return undefined; // no code index yet
    }
  }

  /** codemem.toml was read again: the warm reader classifies test code and ranks by its settings. */
  settingsChanged(): void {
    this.ret?.then((r) => configure(r, this.cfg()), () => undefined);
  }

  /** See Retriever.open; a reader is opened `gentle` beside a warm one (handOver). */
  private open(opts: Parameters<typeof Retriever.open>[1] = { background: this.daemon }): Promise<Retriever> {
    const cfg = this.cfg();
    return openStore(cfg, { mode: "read" })
      .then((store) =>
        Retriever.open(store, opts).catch(async (err) => {
          await store.close();
          throw err;
        }),
      )
      .then((r) => configure(r, cfg));
  }

  /**
   * A forced build swapped a new index file in: the warm reader still reads the old one, whole, so
   * it answers until the new reader is warm (its catalog, term weights and vectors loaded), then
   * closes a little later like any replaced reader. Before, the next question waited for the new
   * reader's catalog and answered without vectors until they had loaded.
   */
  private handOver(): void {
    if (this.closed) return;
    const next = (this.next = this.open({ gentle: true }));
    next.then(
      (r) => {
        if (this.next !== next || this.closed) return void r.store.close().catch(() => {});
        this.next = undefined;
        void this.invalidate();
        this.ret = next;
      },
      (err: Error) => {
        if (this.next !== next) return;
        this.next = undefined;
        log.warn("opening the replaced index's reader failed; the next question opens it", { error: err.message });
        void this.invalidate();
      },
    );
  }

  /**
   * A whole-tree build's fill wrote its vectors and tokens into the index: a daemon's warm reader
   * keeps answering (lexically, as it did) until a reader with the vectors is warm, as after a forced
   * build; elsewhere the next question opens one.
   */
  async afterFill(): Promise<void> {
    const warm = this.ret ? await this.ret.catch(() => undefined) : undefined;
    if (warm && this.daemon) this.handOver();
    else void this.invalidate();
  }

  /** Brings the warm reader up to date: small builds patch it, large ones reload it. */
  async afterBuild(r: Pick<BuildResult, "changed_paths" | "rows_changed" | "reclustered">): Promise<void> {
    const warm = this.ret ? await this.ret.catch(() => undefined) : undefined;
    if (warm && this.daemon && warm.store.replaced?.()) this.handOver();
    else if (warm && r.changed_paths.length === 0 && !r.reclustered) return warm.reloadRows();
    else if (warm && !r.reclustered && r.changed_paths.length <= 50) {
      await warm.refresh(r.changed_paths, r.rows_changed);
      // Saves grow this thread's heap by what patched the reader and answered meanwhile: one full
      // collection once they settle, not when V8's own reducer comes to it ~30 s later (Go's src,
      // ten saves after a full build: RSS 8 s after the last 492 → 452 MB).
      if (this.daemon) collectWhenIdle();
    } else {
      void this.invalidate();
      // A daemon opens the new reader now, not on the next question (819 ms of the first search after
      // a full build of Go's src), and warms it at once: the builder's next answer waits for it
      // (ProjectEngine.answering), where a start's first answers go before its warming.
      if (this.daemon && !this.closed) void this.current({ background: true, warmDelayMs: 0 }).catch(() => undefined);
    }
  }

  /** Drops the warm reader after the index changed underneath; it closes later unless `now`. */
  invalidate(opts: { now?: boolean } = {}): Promise<void> {
    const old = this.ret;
    this.ret = undefined;
    this.next = undefined;
    if (!old) return Promise.resolve();
    const close = () =>
      old
        .then((r) => r.store.close())
        .catch(() => {})
        .finally(() => collectWhenIdle());
    if (opts.now) return close();
    const later = () => {
      this.delayed.delete(later);
      return close();
    };
    this.delayed.add(later);
    setTimeout(later, READER_CLOSE_DELAY_MS).unref();
    return Promise.resolve();
  }

  /**
   * Closes every reader: the warm one, one being opened to take over (a build's fill may have just
   * asked for it) and replaced ones still waiting out their delay. No reader opens afterwards, so
   * nothing touches the index's files once this resolves (a test removing the project, a stop).
   */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.next;
    await this.invalidate({ now: true });
    await pending?.then((r) => r.store.close(), () => {});
    await Promise.all([...this.delayed].map((later) => later()));
  }
}

/** What a reader takes from codemem.toml: which files are tests, and how it ranks. */
function configure(r: Retriever, cfg: ResolvedConfig): Retriever {
  r.isTest = testClassifier(cfg.index.testPatterns);
  r.rankBy = { kind: cfg.query.ranker, model: cfg.query.rankerModel };
  return r;
}
