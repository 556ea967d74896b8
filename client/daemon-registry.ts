import fs from "node:fs";
import path from "node:path";
import { resolveProcessSettings } from "../shared/config.js";
import { writeFileAtomic } from "../shared/paths.js";
import { pidAlive, projectHash } from "./socket-path.js";

/** A running daemon's note in the user's state directory: what `codemem daemon list` reads. */
export interface DaemonEntry {
  root: string;
  pid: number;
  socket: string;
  started_at: string;
  version: string;
}

/** `<state dir>/daemons/`, one `<project hash>.json` per running daemon; undefined without HOME. */
function registryDir(): string | undefined {
  const base = resolveProcessSettings().stateDir;
  return base && path.join(base, "daemons");
}

/** Records a started daemon (best effort: a daemon serves its project whether or not it is listed). */
export function registerDaemon(entry: DaemonEntry): void {
  const dir = registryDir();
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileAtomic(path.join(dir, `${projectHash(entry.root)}.json`), JSON.stringify(entry) + "\n");
}

/** Removes a daemon's note, if it is still its own (a successor may have replaced it). */
export function unregisterDaemon(root: string, pid: number): void {
  const dir = registryDir();
  if (!dir) return;
  const file = path.join(dir, `${projectHash(root)}.json`);
  if (readEntry(file)?.pid === pid) fs.rmSync(file, { force: true });
}

function readEntry(file: string): DaemonEntry | undefined {
  try {
    const e = JSON.parse(fs.readFileSync(file, "utf8")) as DaemonEntry;
    return typeof e.root === "string" && Number.isInteger(e.pid) ? e : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The daemons whose process is alive, by project path. Notes of dead processes (a daemon killed
 * with -9, a reboot) are removed as they are found.
 */
export function listDaemons(): DaemonEntry[] {
  const dir = registryDir();
  if (!dir || !fs.existsSync(dir)) return [];
  const out: DaemonEntry[] = [];
  for (const name of fs.readdirSync(dir).filter((f) => f.endsWith(".json"))) {
    const file = path.join(dir, name);
    const e = readEntry(file);
    if (e && pidAlive(e.pid)) out.push(e);
    else fs.rmSync(file, { force: true });
  }
  return out.sort((a, b) => (a.root < b.root ? -1 : 1));
}
