import fs from "node:fs";
import path from "node:path";
import type { ResolvedConfig } from "../../shared/config.js";
import { fileStamps, sizeStamp } from "../../shared/paths.js";
import type { FreshnessT } from "../../shared/schemas.js";
import { discover, isSettingsPath } from "../index/walk.js";
import { walkApart, type WalkedFile } from "../index/walk-thread.js";
import type { Retriever } from "./retriever.js";

/** An answer's freshness is reused this long: a burst of calls walks the tree once. */
const FRESHNESS_TTL_MS = 1500;

/**
 * What is changed on disk and not in the index, for every answer's freshness: the watcher's account
 * once it has caught up with the disk, else a walk of the tree (cached briefly; a daemon's first
 * answers use the listing its start made on another thread).
 */
export class Freshness {
  private cache?: { at: number; value: FreshnessT };
  /** What a watcher that has caught up with the disk knows is not indexed yet (the daemon's). */
  private watched?: () => string[] | undefined;
  /** The tree as a walk started with the daemon lists it (walk-thread.ts), for the first answers' freshness. */
  private listing?: { at: number; files: Promise<WalkedFile[]> };

  constructor(private readonly root: string) {}

  watchWith(pending: () => string[] | undefined): void {
    this.watched = pending;
    this.cache = undefined;
  }

  /** Starts listing the tree on another thread. */
  prefetch(cfg: ResolvedConfig): void {
    const files = walkApart(cfg);
    files.catch(() => {}); // the answer walks the tree itself then
    this.listing = { at: Date.now(), files };
  }

  /** A build or an edit moved the index or the disk: the next answer looks again. */
  forget(): void {
    this.cache = undefined;
  }

  markChanged(): void {
    this.cache = undefined;
    this.listing = undefined;
  }

  /** What is changed on disk and not indexed: the watcher's account, else a walk of the tree (cached briefly). */
  async of(r: Retriever, cfg: ResolvedConfig): Promise<FreshnessT> {
    const now = Date.now();
    if (this.cache && now - this.cache.at < FRESHNESS_TTL_MS) return this.cache.value;
    const watched = this.watched?.();
    if (watched) {
      const left = this.differFromIndex(r, watched);
      return { indexed_at: r.meta.built_at ?? null, stale: left.length > 0, pending_count: left.length, pending_files: left.slice(0, 20) };
    }
    // A daemon's start listed the tree on another thread (prefetch): that listing serves while it is fresh.
    const started = this.listing && now - this.listing.at < FRESHNESS_TTL_MS ? this.listing : undefined;
    this.listing = undefined;
    const listed = started ? await started.files.catch(() => undefined) : undefined;
    const indexed = r.files;
    const pending: string[] = [];
    const seen = new Set<string>();
    // Files the last build read and left out for their content are current while they stay unchanged.
    const leftOut = fileStamps(r.meta.content_skipped);
    for (const f of listed ?? discover(cfg).files) {
      seen.add(f.path);
      const prev = indexed.get(f.path);
      if (prev ? prev.size !== f.size || prev.mtime_ms !== f.mtimeMs : leftOut[f.path] !== sizeStamp(f.size, f.mtimeMs)) pending.push(f.path);
    }
    for (const p of indexed.keys()) if (!seen.has(p)) pending.push(p);
    const value: FreshnessT = { indexed_at: r.meta.built_at ?? null, stale: pending.length > 0, pending_count: pending.length, pending_files: pending.slice(0, 20) };
    this.cache = { at: started?.at ?? now, value };
    return value;
  }

  /**
   * The watcher's files whose disk state is not what the index holds. Its queue may trail a build
   * that already read them (a checkout's events still arriving, batches queued behind `codemem
   * build`): those are current, and the batch that comes later finds nothing to do.
   */
  private differFromIndex(r: Retriever, files: string[]): string[] {
    if (files.length === 0) return files;
    const leftOut = fileStamps(r.meta.content_skipped);
    const builtAt = Date.parse(r.meta.built_at ?? "") || 0;
    return files.filter((rel) => {
      const prev = r.files.get(rel);
      let st: fs.Stats;
      try {
        st = fs.statSync(path.join(this.root, rel));
      } catch {
        return prev !== undefined; // gone: pending while the index still holds it
      }
      // Settings files (codemem.toml, .gitignore, tsconfig.json) are in no index: one written before the
      // last build was read by it (a checkout's), a later one is pending until its batch.
      if (isSettingsPath(rel)) return st.mtimeMs > builtAt;
      if (!prev && !(rel in leftOut)) return true;
      return prev ? prev.size !== st.size || prev.mtime_ms !== st.mtimeMs : leftOut[rel] !== sizeStamp(st.size, st.mtimeMs);
    });
  }
}
