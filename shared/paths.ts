import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { CodememError } from "./errors.js";
import { checkOwnTarget, ensureOwnDir, ownTop } from "./own-files.js";

/** `${workspaceFolder}`, `$HOME`, a leading `~`: text a host or shell should have replaced. */
const UNEXPANDED = /\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|^~(?=\/|$)/;

/**
 * Refuses a path that still holds a variable (a host that does not expand `${workspaceFolder}`
 * passes it as written): joined to the working directory it would name a directory nobody meant.
 * A real directory whose name holds a `$` passes.
 */
export function checkExpanded(input: string, what = "project_path"): void {
  const m = UNEXPANDED.exec(input);
  if (!m || (path.isAbsolute(input) && fs.existsSync(input))) return;
  throw new CodememError(
    "PATH_UNEXPANDED",
    `${what} "${input}" holds ${m[0]}, which was not expanded: the host passed it as written. Put the project's absolute path in its place in the host's MCP configuration (the server's args, or CODEMEM_PROJECT in its env), or drop it there if the host gives CLAUDE_PROJECT_DIR.`,
    { value: input },
  );
}

/** Canonical project root: absolute input required, resolved to its real path. */
export function resolveProjectRoot(input: string | undefined): string {
  if (!input || input.trim() === "") {
    throw new CodememError("INVALID_ARGUMENT", "project_path is required: pass the absolute path of the project root.");
  }
  checkExpanded(input);
  if (!path.isAbsolute(input)) {
    throw new CodememError(
      "PATH_RELATIVE",
      `project_path "${input}" is relative; pass an absolute path (e.g. "${path.resolve(input)}") so every process uses the same project.`,
      { value: input },
    );
  }
  let real: string;
  try {
    real = fs.realpathSync(input);
  } catch {
    throw new CodememError("PATH_NOT_FOUND", `project_path "${input}" does not exist; check the path.`, { value: input });
  }
  if (!fs.statSync(real).isDirectory()) {
    throw new CodememError("PATH_NOT_DIRECTORY", `project_path "${input}" is a file, not a directory; pass the project root.`, { value: input });
  }
  // A slip of the path would index (and watch) the whole machine or every project of the user.
  const what = real === path.parse(real).root ? "the file system's root" : real === homeDir() ? "the home directory" : undefined;
  if (what) {
    throw new CodememError("PATH_NOT_PROJECT", `project_path "${input}" is ${what}, not a project; pass the directory of one project (e.g. "${path.join(real, "my-project")}").`, { value: input });
  }
  return real;
}

/** The project's settings file, at its root. */
export const CONFIG_FILE_NAME = "codemem.toml";

/** Whether a build has succeeded here: each records its backend (`.codemem/store.json`); older local indexes have only their file. */
export function hasIndex(root: string): boolean {
  const dirs = stateDirs(root);
  return fs.existsSync(dirs.storeChoice) || fs.existsSync(dirs.dbFile);
}

/** A file's size and mtime as one string: tells whether it changed since it was read. */
export function sizeStamp(size: number, mtimeMs: number): string {
  return `${size}:${mtimeMs}`;
}

/** `sizeStamp` of a file on disk, "none" when it is missing. */
export function fileStamp(file: string): string {
  try {
    const st = fs.statSync(file);
    return sizeStamp(st.size, st.mtimeMs);
  } catch {
    return "none";
  }
}

let home: string | null | undefined;

/** The home directory's real path, resolved once per process (every call to the daemon checks it). */
function homeDir(): string | undefined {
  if (home === undefined) {
    try {
      home = fs.realpathSync(os.homedir());
    } catch {
      home = null;
    }
  }
  return home ?? undefined;
}

/**
 * Whether a relative path (path.relative's result, native or POSIX) leads out of its base: its first
 * segment is "..". Compared by segment, so a file named `..weird.py` is inside.
 */
export function leadsOutside(rel: string): boolean {
  return rel === ".." || rel.startsWith("../") || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
}

/** Whether `dir` is `root` or lies below it (both resolved paths). */
export function isWithin(root: string, dir: string): boolean {
  const rel = path.relative(root, dir);
  return rel === "" || !leadsOutside(rel);
}

/** Project-relative POSIX path of a file under root, or an error if it lies outside. */
export function toProjectPath(root: string, file: string): string {
  const abs = path.isAbsolute(file) ? file : path.join(root, file);
  let real = abs;
  try {
    real = fs.realpathSync(abs);
  } catch {
    // Missing files keep their lexical path; the caller decides whether that is an error.
  }
  const rel = path.relative(root, real);
  if (rel === "" || leadsOutside(rel)) {
    throw new CodememError("PATH_OUTSIDE_PROJECT", `"${file}" is outside the project ${root}; pass a file inside it.`, { value: file });
  }
  return rel.split(path.sep).join("/");
}

/** Directories two project paths share from the root (`a/b/x.py`, `a/b/c/y.py` → 2). */
export function sharedDirs(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  let i = 0;
  while (i < x.length - 1 && i < y.length - 1 && x[i] === y[i]) i++;
  return i;
}

/** Where project state lives. */
export function stateDirs(root: string) {
  return {
    graphOut: path.join(root, "codegraph-out"),
    graphFile: path.join(root, "codegraph-out", "graph.json"),
    dbDir: path.join(root, "codegraph-out", "codemem_db"),
    dbFile: path.join(root, "codegraph-out", "codemem_db", "index.db"),
    stateDir: path.join(root, ".codemem"),
    synapseDb: path.join(root, ".codemem", "synapses.db"),
    /** The backend of the last successful build (backend, URL without password, schema). */
    storeChoice: path.join(root, ".codemem", "store.json"),
    /** The offline (LanceDB) backend's tables. */
    lanceDir: path.join(root, "codegraph-out", "codemem_lance"),
    eventsFile: path.join(root, ".codemem", "events.jsonl"),
    auditDir: path.join(root, ".codemem", "audit"),
    configFile: path.join(root, CONFIG_FILE_NAME),
  };
}

/**
 * The nearest directory at or above `dir` (a resolved project path) that holds codemem's state
 * (`.codemem/` or `codegraph-out/`), below the home directory and the file system's root; undefined
 * when none does. A command run in a subdirectory answers from the project that encloses it.
 */
export function enclosingProject(dir: string): string | undefined {
  const stop = new Set([path.parse(dir).root, homeDir()]);
  for (let d = dir; !stop.has(d); d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, ".codemem")) || fs.existsSync(path.join(d, "codegraph-out"))) return d;
    if (path.dirname(d) === d) break;
  }
  return undefined;
}

/**
 * Writes a file so readers see either the old or the new content, never a partial one. In codemem's
 * own state (`.codemem/`, `codegraph-out/`) a link is never followed: the write is refused
 * (PATH_UNSAFE). Elsewhere a symlinked file (dotfiles kept in a repository) is written at its target
 * and stays a link; with `within`, only when that target lies inside the directory `within` (a
 * project's own host config must not lead out of the project).
 */
export function writeFileAtomic(file: string, data: string | Uint8Array | Iterable<Uint8Array>, opts: { within?: string } = {}): void {
  let target = file;
  if (ownTop(path.dirname(file)) !== undefined) {
    ensureOwnDir(path.dirname(file));
    checkOwnTarget(file);
  } else {
    try {
      target = fs.realpathSync(file);
    } catch {
      // a new file, or a dangling link: written where named
    }
    if (opts.within !== undefined && target !== file && leadsOutside(path.relative(opts.within, target))) {
      throw new CodememError("PATH_UNSAFE", `${file} is a symbolic link leading out of ${opts.within} (to ${target}); codemem does not write outside the project through a link it ships. Replace the link with a file of the project's own.`, { path: file });
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
  }
  // An existing file keeps its mode and owner (a 0600 ~/.claude.json must not become 0644); the
  // temporary file is private until then.
  const before = statOrUndefined(target);
  const tmp = `${target}.tmp-${process.pid}-${Date.now()}`;
  const fd = fs.openSync(tmp, "wx", before ? 0o600 : 0o666);
  try {
    if (typeof data === "string" || data instanceof Uint8Array) fs.writeFileSync(fd, data);
    else {
      // Chunks written as they come, a few MB at a time: no joined copy of a large file in memory.
      let batch: Uint8Array[] = [];
      let bytes = 0;
      const flush = () => {
        writeAll(fd, batch);
        batch = [];
        bytes = 0;
      };
      for (const chunk of data) {
        batch.push(chunk);
        bytes += chunk.length;
        if (batch.length >= 512 || bytes >= WRITE_BATCH_BYTES) flush();
      }
      flush();
    }
    if (before) {
      try {
        fs.fchownSync(fd, before.uid, before.gid);
      } catch {
        // only root may give a file away; ours already is ours
      }
      fs.fchmodSync(fd, before.mode & 0o7777);
    }
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, target);
}

/** Bytes of chunks gathered for one writev. */
const WRITE_BATCH_BYTES = 8 << 20;

/** writev until every byte is written (a large write may be partial). */
function writeAll(fd: number, chunks: Uint8Array[]): void {
  let rest = chunks;
  while (rest.length) {
    let n = fs.writevSync(fd, rest);
    let i = 0;
    while (i < rest.length && n >= rest[i].length) n -= rest[i++].length;
    rest = rest.slice(i);
    if (n > 0) rest[0] = rest[0].subarray(n);
  }
}

function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

/** `{path: "size:mtime"}` as recorded in the index's meta (`content_skipped`, `parse_failed`); {} when absent or unreadable. */
export function fileStamps(text: string | undefined): Record<string, string> {
  try {
    const v = JSON.parse(text ?? "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** The XDG base directories codemem keeps per-user files in, and their defaults under HOME. */
const USER_DIRS = { config: ["XDG_CONFIG_HOME", ".config"], state: ["XDG_STATE_HOME", ".local/state"], cache: ["XDG_CACHE_HOME", ".cache"] } as const;

/** `$XDG_<KIND>_HOME/codemem` (default `~/.config`, `~/.local/state` or `~/.cache`, then `codemem`); undefined without HOME. */
export function userDir(kind: keyof typeof USER_DIRS, env: Record<string, string | undefined> = process.env): string | undefined {
  const [variable, fallback] = USER_DIRS[kind];
  const base = env[variable] || (env.HOME ? path.join(env.HOME, fallback) : undefined);
  return base ? path.join(base, "codemem") : undefined;
}
