import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { resolveProcessSettings } from "../shared/config.js";
import { CodememError } from "../shared/errors.js";

/** sockaddr_un.sun_path is 108 bytes on Linux and 104 on macOS; stay clear of both. */
export const SOCKET_PATH_MAX = 100;

/** Short stable key of a project root (service names, fallback socket names). */
export function projectHash(root: string): string {
  return createHash("sha1").update(root).digest("hex").slice(0, 16);
}

/**
 * Where the daemon of `root` listens: `<root>/.codemem/daemon.sock`, or, when that path is too
 * long for a Unix socket, `<XDG_RUNTIME_DIR or tmpdir>/codemem-<uid>/<hash>.sock`.
 */
export function socketPathFor(root: string, runtimeDir = resolveProcessSettings().runtimeDir): string {
  const inProject = path.join(root, ".codemem", "daemon.sock");
  if (Buffer.byteLength(inProject) <= SOCKET_PATH_MAX) return inProject;
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return path.join(runtimeDir ?? os.tmpdir(), `codemem-${uid}`, `${projectHash(root)}.sock`);
}

/**
 * How long a daemon's stop may take: its steps (a running build's grace, the server's requests in
 * flight, the watcher and the store closing) share this budget, and a client asking it to stop waits
 * this long before it kills it.
 */
export const DAEMON_STOP_MS = 20_000;

/** Files the daemon of a project owns besides its socket. */
export function daemonFiles(root: string) {
  const stateDir = path.join(root, ".codemem");
  return {
    stateDir,
    socket: socketPathFor(root),
    lock: path.join(stateDir, "daemon.lock"),
    log: path.join(stateDir, "daemon.log"),
  };
}

/** Creates the socket's directory; the runtime-dir fallback is private to the user (0700). */
export function ensureSocketDir(socket: string): void {
  const dir = path.dirname(socket);
  if (path.basename(dir) === ".codemem") fs.mkdirSync(dir, { recursive: true });
  else fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkSocketDir(socket);
}

/**
 * The runtime-dir fallback (`/tmp/codemem-<uid>`) may have been created by another local user
 * before us: a daemon of theirs would then answer our questions. Only a real directory of ours
 * that nobody else can enter or write is used. In the project, `.codemem` and its socket must not
 * be symbolic links: a repository can ship them, pointing at a socket someone else listens on.
 */
export function checkSocketDir(socket: string): void {
  const dir = path.dirname(socket);
  for (const p of [dir, socket]) {
    let link = false;
    try {
      link = fs.lstatSync(p).isSymbolicLink();
    } catch {
      // not there yet
    }
    if (link) {
      throw new CodememError(
        "RUNTIME_DIR_UNSAFE",
        `${p} is a symbolic link (to ${fs.readlinkSync(p)}), so the daemon socket could belong to someone else. Remove it (\`rm ${p}\`) and run again; codemem creates what it needs.`,
        { path: p },
      );
    }
  }
  if (path.basename(dir) === ".codemem") return;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch {
    return; // not there yet: whoever creates it (ensureSocketDir) makes it ours
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const problem = !st.isDirectory()
    ? "is not a directory"
    : uid !== undefined && st.uid !== uid
      ? `belongs to uid ${st.uid}, not to you (uid ${uid})`
      : (st.mode & 0o077) !== 0
        ? `has mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}: other users can enter or write it`
        : undefined;
  if (problem) {
    throw new CodememError(
      "RUNTIME_DIR_UNSAFE",
      `The daemon socket directory ${dir} ${problem}, so another user could answer in codemem's place. Remove it (\`rm -rf ${dir}\`, as its owner or root) and run again, or set XDG_RUNTIME_DIR to a private directory.`,
      { dir },
    );
  }
}

/** Whether a process is alive; a zombie (exited, not yet reaped) counts as dead. */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no procfs (macOS): kill(0) is all we have
  }
}

/** A live process that looks like a codemem daemon (guards against recycled pids in stale locks). */
export function isDaemonPid(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("main.js");
  } catch {
    return true; // no procfs: kill(0) is all we have
  }
}

/** Reads the pid recorded in a lock file, or undefined when absent or unreadable. */
export function readLockPid(lock: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(lock, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
