/**
 * The focus of the sessions under way: the files recently worked in (the nodes the store saw
 * activated, by their files) and, at half strength, the files associated with them (session
 * synapses and co-change history). Recall lifts candidates in these files, so that a question many
 * areas could answer is answered from the area being worked on (docs/synapses.md, "Focus").
 */
import type { SynapseStore } from "./store.js";

/** Activity older than this is no longer the current session. */
export const FOCUS_WINDOW_MS = 60 * 60 * 1000;
/** An activation counts half after this long. */
const HALF_LIFE_MS = 10 * 60 * 1000;
/** Most recent activations read; the strongest focus files spread to their associations. */
const RECENT = 64;
const SEEDS = 8;
/** Associated files count at most this share of a file worked in. */
const ASSOCIATED = 0.5;

/** A file's focus in [0, 1] (1: the file most worked in lately; 0 for every file when nothing was active). */
export type Focus = (file: string) => number;

/**
 * The focus by file: the files worked in and their associations (`focusedFiles`), and, at most at
 * the associations' share, the files near those worked in, by how much of their directory path they
 * share (`a/b/x.py` worked in: `a/b/y.py` 1, `a/c/z.py` ½ of it, `d/w.py` and root files nothing). The
 * area being worked on is more than the files opened: a session in `email/`'s parser asks about
 * `email/` code it has not opened yet.
 */
export function sessionFocus(store: SynapseStore, fileOf: (id: string) => string | undefined, now = Date.now()): Focus | undefined {
  const { worked, focus } = focusedFiles(store, fileOf, now);
  if (worked.length === 0) return undefined;
  // The strongest weight per directory worked in.
  const dirs = new Map<string, { parts: string[]; w: number }>();
  for (const f of worked) {
    const parts = dirOf(f);
    const key = parts.join("/");
    const w = focus.get(f)!;
    if (parts.length > 0 && w > (dirs.get(key)?.w ?? 0)) dirs.set(key, { parts, w });
  }
  return (file) => {
    let best = focus.get(file) ?? 0;
    const parts = dirOf(file);
    if (parts.length === 0) return best;
    for (const d of dirs.values()) {
      let shared = 0;
      while (shared < parts.length && shared < d.parts.length && parts[shared] === d.parts[shared]) shared++;
      if (shared > 0) best = Math.max(best, ASSOCIATED * d.w * (shared / Math.max(parts.length, d.parts.length)));
    }
    return best;
  };
}

function dirOf(file: string): string[] {
  const parts = file.split("/");
  parts.pop();
  return parts;
}

/** The files worked in (`worked`) and the focus of each file, those worked in scaled to the most worked in, their associations at half strength. */
function focusedFiles(store: SynapseStore, fileOf: (id: string) => string | undefined, now: number): { worked: string[]; focus: Map<string, number> } {
  const direct = new Map<string, number>();
  for (const { id, at } of store.recentActivity(now - FOCUS_WINDOW_MS, RECENT)) {
    const file = fileOf(id);
    if (file) direct.set(file, (direct.get(file) ?? 0) + Math.pow(0.5, Math.max(0, now - at) / HALF_LIFE_MS));
  }
  const focus = new Map<string, number>();
  const peak = Math.max(0, ...direct.values());
  if (peak <= 0) return { worked: [], focus };
  for (const [f, w] of direct) focus.set(f, w / peak);
  const seeds = [...direct.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, SEEDS).map(([f]) => f);
  const spread = new Map<string, number>();
  for (const n of store.neighbors(seeds, { depth: 1, k: 24 })) {
    const file = fileOf(n.id);
    if (file && !direct.has(file)) spread.set(file, Math.max(spread.get(file) ?? 0, n.activation));
  }
  const top = Math.max(0, ...spread.values());
  if (top > 0) for (const [f, a] of spread) focus.set(f, ASSOCIATED * (a / top));
  return { worked: [...direct.keys()], focus };
}
