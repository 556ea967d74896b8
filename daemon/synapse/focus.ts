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

/** File → focus in [0, 1] (1: the file most worked in lately); empty when nothing was active. */
export function sessionFocus(store: SynapseStore, fileOf: (id: string) => string | undefined, now = Date.now()): Map<string, number> {
  const direct = new Map<string, number>();
  for (const { id, at } of store.recentActivity(now - FOCUS_WINDOW_MS, RECENT)) {
    const file = fileOf(id);
    if (file) direct.set(file, (direct.get(file) ?? 0) + Math.pow(0.5, Math.max(0, now - at) / HALF_LIFE_MS));
  }
  const focus = new Map<string, number>();
  const peak = Math.max(0, ...direct.values());
  if (peak <= 0) return focus;
  for (const [f, w] of direct) focus.set(f, w / peak);
  const seeds = [...direct.entries()].sort((a, b) => b[1] - a[1]).slice(0, SEEDS).map(([f]) => f);
  const spread = new Map<string, number>();
  for (const n of store.neighbors(seeds, { depth: 1, k: 24 })) {
    const file = fileOf(n.id);
    if (file && !direct.has(file)) spread.set(file, Math.max(spread.get(file) ?? 0, n.activation));
  }
  const top = Math.max(0, ...spread.values());
  if (top > 0) for (const [f, a] of spread) focus.set(f, ASSOCIATED * (a / top));
  return focus;
}
