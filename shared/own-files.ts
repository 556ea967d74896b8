import fs from "node:fs";
import path from "node:path";
import { CodememError } from "./errors.js";

/**
 * codemem's own state inside a project: `.codemem/` and `codegraph-out/`. A clone is someone else's
 * writing, and it can ship these paths as symbolic links (`codegraph-out/graph.json ->
 * ../../../.bashrc`, `.codemem -> /tmp/somebody-elses-dir`): nothing codemem writes there may go
 * through a link, or into a directory that is not a real one of this user's. Directories are
 * created one level at a time and checked (type, owner, not a link); files are replaced by rename
 * or opened with O_NOFOLLOW; a link anywhere in the state refuses the write with PATH_UNSAFE.
 */
export const OWN_DIR_NAMES = [".codemem", "codegraph-out"] as const;

/** The nearest directory at or above `p` named like one of codemem's own; undefined outside them. */
export function ownTop(p: string): string | undefined {
  for (let d = p; ; d = path.dirname(d)) {
    if ((OWN_DIR_NAMES as readonly string[]).includes(path.basename(d))) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

function unsafe(p: string, problem: string): CodememError {
  const top = ownTop(p) ?? p;
  return new CodememError(
    "PATH_UNSAFE",
    `${p} ${problem}; codemem writes its state only into real files and directories of its own, never through what a repository supplies. Remove it (\`rm -rf ${top}\`) and run again: codemem recreates its state.`,
    { path: p },
  );
}

function linkTarget(p: string): string {
  try {
    return fs.readlinkSync(p);
  } catch {
    return "?";
  }
}

const uid = typeof process.getuid === "function" ? process.getuid() : undefined;

/** Throws PATH_UNSAFE unless `st` (an lstat of `p`) is a real directory owned by this user. */
function checkDir(p: string, st: fs.Stats): void {
  if (st.isSymbolicLink()) throw unsafe(p, `is a symbolic link (to ${linkTarget(p)})`);
  if (!st.isDirectory()) throw unsafe(p, "is not a directory");
  if (uid !== undefined && st.uid !== uid) throw unsafe(p, `belongs to uid ${st.uid}, not to you (uid ${uid})`);
}

/**
 * Creates `dir` (inside `.codemem/` or `codegraph-out/`, or one of them) and the own directories
 * above it, one level at a time, each checked to be a real directory of this user's. The top one
 * gets a `.gitignore` of `*`, so none of it is committed by accident. Never creates the project: a
 * project deleted under a running daemon must not come back as a folder of codemem's state (ENOENT).
 */
export function ensureOwnDir(dir: string): void {
  const chain = ownChain(dir);
  for (const d of chain) {
    try {
      fs.mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    checkDir(d, fs.lstatSync(d));
  }
  try {
    // O_EXCL: an existing .gitignore (the user's, or a link) is left alone, never written through.
    fs.writeFileSync(path.join(chain[0], ".gitignore"), "# Made by codemem: derived state, not for version control.\n*\n", { flag: "wx" });
  } catch {
    // already there, or not writable: the real write that follows reports a read-only disk
  }
}

/** The own directories from the top one (`.codemem`, `codegraph-out`) down to `dir`. */
function ownChain(dir: string): string[] {
  const top = ownTop(dir);
  if (top === undefined) throw new CodememError("INTERNAL", `${dir} is not inside .codemem/ or codegraph-out/.`);
  const chain: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    chain.unshift(d);
    if (d === top) break;
  }
  return chain;
}

/** Whether `dir` and the own directories above it all exist, each checked (lstat only: no mkdir, no .gitignore). */
function ownDirExists(dir: string): boolean {
  for (const d of ownChain(dir)) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw err;
    }
    checkDir(d, st);
  }
  return true;
}

/**
 * Makes `file`'s directory before a library that follows links opens it (SQLite and its -wal, -shm
 * and -journal files). In codemem's own state the directory is checked, and none of those files may
 * be a link or other than a regular file; elsewhere (a path the user named) the directory is made.
 */
export function prepareFile(file: string, sidecars: readonly string[] = []): void {
  if (ownTop(path.dirname(file)) === undefined) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    return;
  }
  ensureOwnDir(path.dirname(file));
  for (const f of [file, ...sidecars.map((s) => file + s)]) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(f);
    } catch {
      continue; // not there yet: whoever creates it creates a file of ours
    }
    if (st.isSymbolicLink()) throw unsafe(f, `is a symbolic link (to ${linkTarget(f)})`);
    if (!st.isFile()) throw unsafe(f, "is not a regular file");
  }
}

/** SQLite's files beside a database. */
export const SQLITE_SIDECARS = ["-wal", "-shm", "-journal"] as const;

/** Opens an own file for appending (created 0644 if missing), never through a link. */
export function openOwnAppend(file: string): number {
  // Every event is an append: an existing directory is only checked, not made again.
  if (!ownDirExists(path.dirname(file))) ensureOwnDir(path.dirname(file));
  try {
    return fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw unsafe(file, `is a symbolic link (to ${linkTarget(file)})`);
    throw err;
  }
}

/** Refuses a link at `file`, an own file about to be replaced by rename. */
export function checkOwnTarget(file: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return;
  }
  if (st.isSymbolicLink()) throw unsafe(file, `is a symbolic link (to ${linkTarget(file)})`);
}

/**
 * Checks the whole of a project's state (`.codemem/`, `codegraph-out/`) before a daemon works in it:
 * no link anywhere below, and every directory a real one of this user's (a file of someone else's
 * is replaced by rename, never written into). Run where a daemon starts (the client that
 * spawns it and the daemon itself), so a clone that ships links fails at once with the path to remove.
 */
export function checkOwnState(root: string): void {
  for (const name of OWN_DIR_NAMES) {
    const top = path.join(root, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(top);
    } catch {
      continue;
    }
    checkDir(top, st);
    walk(top);
  }
}

/** `ensureOwnDir`, then no link anywhere below `dir` (a store whose library writes files of its own there, LanceDB's). */
export function ensureOwnTree(dir: string): void {
  ensureOwnDir(dir);
  walk(dir);
}

function walk(dir: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isSymbolicLink()) throw unsafe(p, `is a symbolic link (to ${linkTarget(p)})`);
    if (e.isDirectory()) {
      checkDir(p, fs.lstatSync(p));
      walk(p);
    }
  }
}
