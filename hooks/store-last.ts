import fs from "node:fs";
import path from "node:path";
import { stateDirs, writeFileAtomic } from "../shared/paths.js";

/** How many compressed originals stay on disk. */
export const LAST_KEEP = 20;

export interface LastOutput {
  file: string;
  tool: string;
  /** ISO 8601 time the original was saved. */
  ts: string;
  text: string;
}

/** `.codemem/hooks/last/`: the full original of every compressed output. */
export function lastDir(root: string): string {
  return path.join(stateDirs(root).stateDir, "hooks", "last");
}

// Sortable and filename-safe: 2026-11-22T04-25-33-123Z
function stamp(d: Date): string {
  return d.toISOString().replace(/[:.]/g, "-");
}

function safeTool(tool: string): string {
  return tool.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 40) || "tool";
}

function listOriginals(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((f) => f.endsWith(".txt")).sort();
  } catch {
    return [];
  }
}

/** Saves the full original of a compressed output (atomic) and prunes all but the newest LAST_KEEP. Returns its path. */
export function saveLast(root: string, tool: string, text: string, now: Date = new Date()): string {
  const dir = lastDir(root);
  // pid breaks ties between two hooks finishing in the same millisecond.
  const file = path.join(dir, `${stamp(now)}-${process.pid}-${safeTool(tool)}.txt`);
  writeFileAtomic(file, text);
  const all = listOriginals(dir);
  for (const old of all.slice(0, Math.max(0, all.length - LAST_KEEP))) {
    try {
      fs.rmSync(path.join(dir, old), { force: true });
    } catch {
      // Another hook pruned it first.
    }
  }
  return file;
}

/** The n-th newest saved original (n=1: the last one), or null when there is none. */
export function readLast(root: string, n = 1): LastOutput | null {
  const dir = lastDir(root);
  const all = listOriginals(dir);
  if (!Number.isInteger(n) || n < 1 || n > all.length) return null;
  const name = all[all.length - n];
  const file = path.join(dir, name);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const m = /^(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d)-(\d{3})Z-\d+-(.+)\.txt$/.exec(name);
  const ts = m ? `${m[1]}:${m[2]}:${m[3]}.${m[4]}Z` : "";
  return { file, tool: m ? m[5] : "", ts, text };
}
