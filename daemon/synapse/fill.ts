// When a seed's associations run out (a file new to the history, or one with few partners), the
// remaining places of synaptic_neighbors hold what a user expects to go with it otherwise: its test
// by name (or the code its test is named after), then the files the project changes lately
// (docs/synapses.md, "When the associations run out").
import { sharedDirs } from "../../shared/paths.js";
import { codeName, testedName, type TestClassifier } from "../index/test-code.js";

/** Why a file is listed: learned associations, a test's name, or the project's latest commits. */
export type NeighbourReason = "associated" | "test_pair" | "recent_change";

/**
 * The indexed files a seed's test naming pairs with it: its tests (`models.py` → `tests/test_models.py`),
 * or the code a test is named after; the nearest first (the longest shared directory), then by path.
 */
export function testPairs(seed: string, files: Iterable<string>, isTest: TestClassifier): string[] {
  const tested = isTest(seed) ? testedName(seed) : undefined;
  const own = codeName(seed);
  const out: string[] = [];
  for (const f of files) {
    if (f === seed) continue;
    const pairs = tested !== undefined ? !isTest(f) && codeName(f) === tested : isTest(f) && testedName(f) === own;
    if (pairs) out.push(f);
  }
  return out.sort((x, y) => sharedDirs(seed, y) - sharedDirs(seed, x) || (x < y ? -1 : x > y ? 1 : 0));
}


/**
 * The files to list after `listed` up to `k`: the seeds' test pairs, then `recent` (the project's
 * latest changes, newest first); never a seed, nor a file listed already, nor one outside the index.
 */
export function fillAfter(
  listed: readonly string[],
  k: number,
  seeds: readonly string[],
  pairsOf: (seed: string) => string[],
  recent: () => string[],
  indexed: (file: string) => boolean,
): { file: string; reason: NeighbourReason; via: string }[] {
  const taken = new Set([...seeds, ...listed]);
  const out: { file: string; reason: NeighbourReason; via: string }[] = [];
  const add = (file: string, reason: NeighbourReason, via: string) => {
    if (out.length + listed.length >= k || taken.has(file) || !indexed(file)) return;
    taken.add(file);
    out.push({ file, reason, via });
  };
  if (listed.length >= k) return out;
  for (const s of seeds) for (const f of pairsOf(s)) add(f, "test_pair", s);
  if (out.length + listed.length < k) for (const f of recent()) add(f, "recent_change", "");
  return out;
}
