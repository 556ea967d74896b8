import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CodememError } from "../../shared/errors.js";
import { sleepSync } from "../../shared/sleep.js";

/**
 * Generation directories of the LanceDB backend: `<dir>/gens/g<n>/` each hold one complete set of
 * tables, `<dir>/CURRENT` names the committed one, `<dir>/LOCK` marks a running apply.
 */
export interface Pointer {
  format: 1;
  generation: string;
  committed_at: string;
}

const GEN = /^g(\d+)$/;

function gensDir(dir: string): string {
  return path.join(dir, "gens");
}

/** The directory of one generation's tables. */
export function genDir(dir: string, gen: string): string {
  return path.join(gensDir(dir), gen);
}

/** The committed generation, or undefined when nothing was ever committed. Unreadable content is INDEX_CORRUPT. */
export function readPointer(dir: string): Pointer | undefined {
  const file = path.join(dir, "CURRENT");
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw corrupt(dir, `cannot read ${file}: ${(err as Error).message}`);
  }
  let p: Partial<Pointer>;
  try {
    p = JSON.parse(text) as Partial<Pointer>;
  } catch {
    throw corrupt(dir, `${file} is not JSON`);
  }
  if (p.format !== 1 || typeof p.generation !== "string" || !GEN.test(p.generation)) throw corrupt(dir, `${file} does not name a generation`);
  return p as Pointer;
}

/** INDEX_CORRUPT for the index at `dir`, with the fix. */
export function corrupt(dir: string, why: string): CodememError {
  return new CodememError("INDEX_CORRUPT", `The LanceDB index ${dir} is unreadable (${why}); rebuild it with \`codemem build --backend lancedb --force\`.`, { dir });
}

/** Switches CURRENT to `gen` by write-to-temp, fsync and rename: a reader or a crash sees one pointer or the other. */
export function writePointer(dir: string, gen: string): void {
  const file = path.join(dir, "CURRENT");
  const tmp = `${file}.tmp-${process.pid}`;
  const body: Pointer = { format: 1, generation: gen, committed_at: new Date().toISOString() };
  const fd = fs.openSync(tmp, "w");
  try {
    fs.writeSync(fd, JSON.stringify(body) + "\n");
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  // Windows refuses to replace a file another process is reading for a moment; retry briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      fs.renameSync(tmp, file);
      break;
    } catch (err) {
      if (attempt >= 20 || !["EPERM", "EBUSY", "EACCES"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
      sleepSync(25);
    }
  }
  syncDir(dir);
}

/** A generation name above every existing one, so a crashed apply's leftovers are never reused. */
export function nextGeneration(dir: string): string {
  let max = 0;
  for (const name of listGenerations(dir)) max = Math.max(max, Number(GEN.exec(name)![1]));
  return `g${max + 1}`;
}

function listGenerations(dir: string): string[] {
  try {
    return fs.readdirSync(gensDir(dir)).filter((n) => GEN.test(n));
  } catch {
    return [];
  }
}

/**
 * Copies a generation as hard links: Lance never rewrites a file in place (new data, deletion,
 * index and manifest files get new names; replaced ones are written aside and renamed), so the
 * copy can change freely without touching the original. Falls back to copying where links fail.
 */
export function linkTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, e.name);
    const b = path.join(to, e.name);
    if (e.isDirectory()) linkTree(a, b);
    else {
      try {
        fs.linkSync(a, b);
      } catch {
        fs.copyFileSync(a, b);
      }
    }
  }
}

/** Flushes the files written since `sinceMs` and every directory entry (new links included) to disk. */
export function syncTree(dir: string, sinceMs: number): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) syncTree(p, sinceMs);
    else if (fs.statSync(p).mtimeMs >= sinceMs) syncFile(p);
  }
  syncDir(dir);
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, "r");
  try {
    fs.fsyncSync(fd);
  } catch (err) {
    // Windows flushes only handles opened for writing; a real I/O error elsewhere must fail the apply.
    if (process.platform !== "win32" || (err as NodeJS.ErrnoException).code !== "EPERM") throw err;
  } finally {
    fs.closeSync(fd);
  }
}

function syncDir(dir: string): void {
  try {
    syncFile(dir);
  } catch {
    // Directories cannot be opened for fsync on Windows; NTFS journals the entries itself.
  }
}

/**
 * Removes every generation but `keep`, and pointer temp files of crashed commits. A generation a
 * reader still has open may refuse (Windows), which is harmless: the next commit tries again.
 */
export function removeGenerations(dir: string, keep: Set<string>): void {
  for (const name of fs.readdirSync(dir)) if (name.startsWith("CURRENT.tmp-")) fs.rmSync(path.join(dir, name), { force: true });
  for (const name of listGenerations(dir)) {
    if (keep.has(name)) continue;
    try {
      fs.rmSync(genDir(dir, name), { recursive: true, force: true });
    } catch {
      // retried after the next commit
    }
  }
}

/** Size in bytes of every file under `dir`. */
export function duBytes(dir: string): number {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += duBytes(p);
    else {
      try {
        total += fs.statSync(p).size;
      } catch {
        // removed meanwhile
      }
    }
  }
  return total;
}

/**
 * Takes the writer lock of `dir` for one apply: `LOCK` holds the owner's pid and host. A lock whose
 * process is gone (a crashed build) is taken over. Returns the release function.
 */
export function acquireLock(dir: string): () => void {
  const file = path.join(dir, "LOCK");
  const mine = JSON.stringify({ pid: process.pid, host: os.hostname(), at: new Date().toISOString() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, mine, { flag: "wx" });
      return () => {
        try {
          if (fs.readFileSync(file, "utf8") === mine) fs.rmSync(file, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = readLock(file);
      const stale = holder ? holder.host === os.hostname() && holder.pid !== process.pid && !alive(holder.pid) : ageMs(file) > 60_000;
      if (stale) {
        fs.rmSync(file, { force: true });
        continue;
      }
      throw new CodememError("BUILD_IN_PROGRESS", `Another build is writing the LanceDB index ${dir} (${holder ? `pid ${holder.pid} on ${holder.host}` : "unknown owner"}); wait for it, or remove ${file} if no build is running.`, { dir });
    }
  }
  throw new CodememError("BUILD_IN_PROGRESS", `Could not take the lock ${file}; retry the build.`, { dir });
}

function readLock(file: string): { pid: number; host: string } | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as { pid: number; host: string };
  } catch {
    return undefined;
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

