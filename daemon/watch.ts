import fs from "node:fs";
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import ignore, { type Ignore } from "ignore";
import type { ResolvedConfig } from "../shared/config.js";
import { log } from "../shared/log.js";
import { hasIndex, leadsOutside } from "../shared/paths.js";
import { isScriptName, languageForPath, languageOfScript } from "./index/languages/registry.js";
import { ALWAYS_EXCLUDED_DIRS, isSettingsPath, makePathFilter } from "./index/walk.js";

/** What the watcher needs from the engine. */
export interface WatchTarget {
  readonly root: string;
  readonly cfg: ResolvedConfig;
  markChanged(): void;
  build(input: { project_path: string }, opts?: { deferGraphFile?: boolean; paths?: string[] }): Promise<{ files_changed: number; files_removed: number; reclustered?: boolean }>;
  /** The files of one batch changed together: the synapse store learns that. */
  recordWatchBatch?(files: string[]): Promise<void>;
}

export interface WatchOptions {
  /** Quiet period after the last event before a batch is processed. */
  quietMs?: number;
  /** A steady stream of events still gets processed after this long. */
  maxDelayMs?: number;
}

export interface BatchRecord {
  files: number;
  changed: number;
  removed: number;
  ms: number;
  at: string;
  error?: string;
}

export interface WatchStatus {
  ready: boolean;
  /** Project-relative paths changed on disk and not yet rebuilt (the batch being built and those of failed batches included). */
  pending: string[];
  building: boolean;
  batches: number;
  last_batch?: BatchRecord;
}

export interface ProjectWatcher {
  /** Resolves once the initial scan has finished and events are being delivered. */
  readonly ready: Promise<void>;
  status(): WatchStatus;
  close(): Promise<void>;
}

/** An editor's save (write a temp file, rename it over) arrives within a few ms; later edits join the next batch. */
const DEFAULT_QUIET_MS = 60;
const DEFAULT_MAX_DELAY_MS = 2000;
/**
 * A failed batch's files are queued again this many times in a row; then they wait, still pending
 * (the index reads stale), for the next event to bring them into a batch again.
 */
const BATCH_RETRIES = 2;

/** Settings whose edits change what is indexed (codemem.toml, at the root) or how imports resolve (module aliases, per package). */
/** Decides, for paths chokidar reports, whether they can matter to the index. */
export function makeWatchIgnore(cfg: ResolvedConfig): { ignored: (abs: string, stats?: fs.Stats) => boolean; gitignoreChanged: (rel: string) => void } {
  const root = cfg.root;
  const filter = makePathFilter(cfg);
  const gitignores = new Map<string, Ignore | null>();
  const gitignoreOf = (dirRel: string): Ignore | null => {
    let ig = gitignores.get(dirRel);
    if (ig === undefined) {
      try {
        ig = ignore().add(fs.readFileSync(path.join(root, dirRel, ".gitignore"), "utf8"));
      } catch {
        ig = null;
      }
      gitignores.set(dirRel, ig);
    }
    return ig;
  };
  // Same semantics as discover(): each .gitignore applies to paths below its own directory.
  const gitignored = (rel: string, isDir: boolean): boolean => {
    const parts = rel.split("/");
    for (let i = 0; i < parts.length; i++) {
      const base = parts.slice(0, i).join("/");
      const ig = gitignoreOf(base);
      if (!ig) continue;
      const sub = parts.slice(i).join("/");
      if (ig.ignores(isDir ? `${sub}/` : sub)) return true;
    }
    return false;
  };

  const ignored = (abs: string, stats?: fs.Stats): boolean => {
    const relNative = path.relative(root, abs);
    if (relNative === "") return false;
    if (leadsOutside(relNative)) return true;
    const rel = relNative.split(path.sep).join("/");
    const segments = rel.split("/");
    const base = segments[segments.length - 1];
    // Never descend into these, wherever they sit (cheap test first: no stat needed).
    if (segments.some((s) => ALWAYS_EXCLUDED_DIRS.has(s))) return true;
    let isDir: boolean;
    if (stats) isDir = stats.isDirectory();
    else if (languageForPath(base) || isSettingsPath(rel)) isDir = false;
    else {
      try {
        isDir = fs.statSync(abs).isDirectory();
      } catch {
        return true; // gone and not a source file: nothing to do
      }
    }
    if (isDir) return filter.dirExcluded(rel, path.dirname(abs)) || gitignored(rel, true);
    if (isSettingsPath(rel)) return false;
    // Temp files of atomic saves, docs, assets; a file without an extension may be a script (`bin/deploy`): the build reads its `#!`.
    if (!languageForPath(base) && !isScriptName(base)) return true;
    return filter.fileExcluded(rel) || gitignored(rel, false);
  };
  return {
    ignored,
    gitignoreChanged: (rel) => {
      const dir = path.posix.dirname(rel);
      gitignores.delete(dir === "." ? "" : dir);
    },
  };
}

/**
 * Watches the project and rebuilds incrementally after each quiet period. Events are hints:
 * the build re-hashes files, so a save-by-rename or a burst of writes is one batch.
 */
export function startWatcher(target: WatchTarget, opts: WatchOptions = {}): ProjectWatcher {
  const quietMs = opts.quietMs ?? DEFAULT_QUIET_MS;
  const maxDelayMs = opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const root = target.root;
  const { ignored, gitignoreChanged } = makeWatchIgnore(target.cfg);

  const pending = new Set<string>();
  let firstEventAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** The files of the batch being built. */
  let inFlight: string[] = [];
  /** Files of batches that failed more than BATCH_RETRIES times in a row: not indexed, so still pending. */
  const failed = new Set<string>();
  let failures = 0;
  let closed = false;
  let ready = false;
  let batches = 0;
  let lastBatch: BatchRecord | undefined;

  const fsw: FSWatcher = watch(root, {
    ignored,
    ignoreInitial: true,
    awaitWriteFinish: false,
    followSymlinks: false,
    persistent: true,
  });

  const schedule = () => {
    if (closed || running || pending.size === 0) return;
    clearTimeout(timer);
    const wait = Math.max(0, Math.min(quietMs, firstEventAt + maxDelayMs - Date.now()));
    timer = setTimeout(flush, wait);
  };

  const flush = () => {
    timer = undefined;
    if (closed || running || pending.size === 0) return;
    if (!hasIndex(root)) {
      // No index yet: the first explicit build indexes everything anyway.
      pending.clear();
      return;
    }
    const files = [...pending];
    inFlight = files;
    pending.clear();
    firstEventAt = 0;
    const started = performance.now();
    running = (async () => {
      let rec: BatchRecord;
      try {
        target.markChanged();
        const r = await target.build({ project_path: root }, { deferGraphFile: true, paths: files });
        await target.recordWatchBatch?.(files);
        failures = 0;
        for (const f of files) failed.delete(f);
        rec = { files: files.length, changed: r.files_changed, removed: r.files_removed, ms: Math.round(performance.now() - started), at: new Date().toISOString() };
        log.info("watch batch", { files: files.length, sample: files.slice(0, 5), changed: r.files_changed, removed: r.files_removed, reclustered: !!r.reclustered, ms: rec.ms });
      } catch (err) {
        rec = { files: files.length, changed: 0, removed: 0, ms: Math.round(performance.now() - started), at: new Date().toISOString(), error: (err as Error).message };
        failures++;
        const retry = failures <= BATCH_RETRIES;
        // Never dropped: queued again, or kept pending until an event brings them back.
        for (const f of files) (retry ? pending : failed).add(f);
        log.warn("watch batch failed", { files: files.length, error: rec.error, ms: rec.ms, retry, failures });
      }
      batches++;
      lastBatch = rec;
    })().finally(() => {
      running = undefined;
      inFlight = [];
      if (pending.size) {
        firstEventAt ||= Date.now();
        schedule();
      }
    });
  };

  const onEvent = (abs: string) => {
    const rel = path.relative(root, abs).split(path.sep).join("/");
    const base = rel.slice(rel.lastIndexOf("/") + 1);
    if (base === ".gitignore") {
      gitignoreChanged(rel);
      pending.add(rel); // a changed ignore list can add or drop files: rebuild
    } else if (isSettingsPath(rel) || languageForPath(base)) pending.add(rel); // the build reads an edited settings file again
    // A file without an extension that is a script now, is gone (it may have been one), or is still
    // empty: created, then written, its `#!` may not be there yet when the event comes (the batch,
    // after the quiet period, reads it again). Not a file that lost its `#!` line: it stays indexed
    // until the next full build.
    else if (isScriptName(base) && (languageOfScript(abs) || goneOrEmpty(abs))) pending.add(rel);
    else return;
    for (const f of failed) pending.add(f);
    failed.clear();
    target.markChanged();
    if (!firstEventAt) firstEventAt = Date.now();
    schedule();
  };
  fsw.on("add", onEvent).on("change", onEvent).on("unlink", onEvent);
  // A removed directory reports its files one by one; nothing extra to do for unlinkDir.
  fsw.on("error", (err) => log.warn("watcher error", { error: (err as Error).message }));

  const readyP = new Promise<void>((resolve) =>
    fsw.once("ready", () => {
      ready = true;
      log.info("watcher ready", { root });
      resolve();
    }),
  );

  return {
    ready: readyP,
    status: () => ({ ready, pending: [...new Set([...pending, ...inFlight, ...failed])].sort(), building: running !== undefined, batches, last_batch: lastBatch }),
    async close() {
      closed = true;
      clearTimeout(timer);
      await fsw.close();
      await running;
    },
  };
}

/** No file at `abs` (any more), or an empty one: one stat. */
function goneOrEmpty(abs: string): boolean {
  try {
    return fs.statSync(abs).size === 0;
  } catch {
    return true;
  }
}
