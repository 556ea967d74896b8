import { countTokens } from "../../shared/tokens.js";
import type { ChangedLines } from "./git-diff.js";
import type { MemNode, Retriever } from "./retriever.js";
import { dispatchFields, entryOf, type GraphEntry } from "./trace.js";

/** Weight of a node reached at depth d: halved per hop (a direct caller counts twice a caller's caller). */
const hopWeight = (d: number) => 0.5 ** (d - 1);
/** Nodes walked per depth at most: a hub's callers of callers would walk the whole graph. */
const WALK_CAP = 2000;
/**
 * A co-changed test file's credit per unit of the history's aged weight (0–1): a partner of weight
 * 0.5 counts as one direct caller. Chosen, not tuned; scripts/bench-impact.mjs measures the result
 * with and without the history (docs/graph-questions.md).
 */
export const CO_CHANGE_SHARE = 2;
/** Partners read per changed file from the history. */
const PARTNERS_PER_FILE = 20;

export type Partners = (file: string) => { id: string; commits: number; weight: number }[];

export interface ImpactInput {
  seeds: MemNode[];
  /** Files changed whole or in part: their importers are affected, and their history partners. */
  files: string[];
  depth: number;
  /** o200k tokens the three lists may take (the rest of the answer is the caller's). */
  budget: number;
  partners?: Partners;
}

export interface Caller extends GraphEntry {
  depth: number;
  score: number;
  dispatch?: boolean;
  confidence?: number;
}

export interface ImpactResult {
  callers: Caller[];
  tests: { file_path: string; score: number; via: string }[];
  co_change: { file_path: string; commits: number; weight: number }[];
  tokens: number;
  truncated: number;
}

/** The nodes a diff's line ranges touch: the innermost definitions overlapping them, and the file's module for a range outside every definition. */
export function seedsOfDiff(r: Retriever, changed: ChangedLines): MemNode[] {
  const out: MemNode[] = [];
  for (const [file, ranges] of changed) {
    const nodes = r.nodesOf(file);
    const module = nodes.filter((n) => n.type === "module");
    if (ranges.length === 0) {
      out.push(...nodes);
      continue;
    }
    const defs = nodes.filter((n) => n.type !== "module");
    const overlaps = (n: MemNode, [a, b]: [number, number]) => n.line_start <= b && a <= n.line_end;
    const hit = defs.filter((n) => ranges.some((x) => overlaps(n, x)));
    const parents = new Set(hit.map((n) => n.parent));
    out.push(...hit.filter((n) => !parents.has(n.id)));
    // File-level code changed (an import, a constant): the module stands for it.
    if (ranges.some((x) => !defs.some((n) => overlaps(n, x)))) out.push(...module);
  }
  return out;
}

/**
 * Transitive callers of the seeds (and subclasses of seed classes) by incoming `calls` and
 * `inherits` edges, to `depth` hops, each scored by its nearest depth; importers of the changed
 * files count as depth 1.
 */
async function walkCallers(r: Retriever, seeds: MemNode[], files: string[], depth: number): Promise<Map<string, { depth: number; dispatch?: number }>> {
  const reached = new Map<string, { depth: number; dispatch?: number }>();
  const seen = new Set(seeds.map((s) => s.id));
  for (const e of await r.store.importers(files)) {
    if (!seen.has(e.source) && r.byId.has(e.source)) reached.set(e.source, { depth: 1 });
  }
  let frontier = seeds.map((s) => s.id);
  for (let d = 1; d <= depth && frontier.length > 0; d++) {
    const ends = new Set(frontier);
    const next: string[] = [];
    for (const e of await r.store.neighbors(frontier)) {
      if ((e.type !== "calls" && e.type !== "inherits") || !ends.has(e.target) || seen.has(e.source) || !r.byId.has(e.source)) continue;
      seen.add(e.source);
      next.push(e.source);
      const prev = reached.get(e.source);
      if (!prev || prev.depth > d) reached.set(e.source, { depth: d, dispatch: e.dispatch });
    }
    frontier = next.slice(0, WALK_CAP);
  }
  return reached;
}

/** What the seeds' change affects: callers by depth, the tests reaching them, files that change with them. */
export async function impactOf(r: Retriever, input: ImpactInput): Promise<ImpactResult> {
  const reached = await walkCallers(r, input.seeds, input.files, input.depth);
  const seedFiles = new Set([...input.files, ...input.seeds.map((s) => s.file_path)]);
  const tests = new Map<string, { score: number; via: Set<string> }>();
  const credit = (file: string, score: number, via: string) => {
    const t = tests.get(file) ?? tests.set(file, { score: 0, via: new Set() }).get(file)!;
    t.score += score;
    t.via.add(via);
  };
  const callers: Caller[] = [];
  for (const [id, x] of reached) {
    const n = r.byId.get(id)!;
    const score = hopWeight(x.depth);
    if (r.isTest(n.file_path)) credit(n.file_path, score, n.type === "module" && x.depth === 1 ? "imports" : "calls");
    else callers.push({ ...entryOf(n), depth: x.depth, score: round(score), ...dispatchFields(x.dispatch) });
  }
  for (const f of seedFiles) if (r.isTest(f)) credit(f, 1, "changed");
  const co_change = coChange(input.partners, seedFiles);
  for (const p of co_change) if (r.isTest(p.file_path) && r.files.has(p.file_path)) credit(p.file_path, p.weight * CO_CHANGE_SHARE, "co-change");
  callers.sort((a, b) => b.score - a.score || cmp(a.at, b.at));
  const testList = [...tests].map(([file_path, t]) => ({ file_path, score: round(t.score), via: [...t.via].sort().join("+") })).sort((a, b) => b.score - a.score || cmp(a.file_path, b.file_path));
  return fit({ callers, tests: testList, co_change }, input.budget);
}

/** History partners of the changed files, weights summed over them, strongest first. */
function coChange(partners: Partners | undefined, files: Set<string>): ImpactResult["co_change"] {
  if (!partners) return [];
  const sum = new Map<string, { commits: number; weight: number }>();
  for (const f of files) {
    for (const p of partners(f)) {
      if (files.has(p.id)) continue;
      const s = sum.get(p.id) ?? sum.set(p.id, { commits: 0, weight: 0 }).get(p.id)!;
      s.commits += p.commits;
      s.weight += p.weight;
    }
  }
  return [...sum].map(([file_path, s]) => ({ file_path, commits: s.commits, weight: round(s.weight) })).sort((a, b) => b.weight - a.weight || cmp(a.file_path, b.file_path));
}

/**
 * Keeps the best entries of each list that fit in `budget` o200k tokens (as JSON, what a tool
 * result holds), taken in turn from tests, callers and co-change partners so each list keeps its head.
 */
function fit(lists: Pick<ImpactResult, "callers" | "tests" | "co_change">, budget: number): ImpactResult {
  const order = ["tests", "callers", "co_change"] as const;
  const kept = { callers: [] as Caller[], tests: [] as ImpactResult["tests"], co_change: [] as ImpactResult["co_change"] };
  const total = order.reduce((s, k) => s + lists[k].length, 0);
  let left = budget;
  const next = { callers: 0, tests: 0, co_change: 0 };
  for (let open = true; open; ) {
    open = false;
    for (const k of order) {
      const item = lists[k][next[k]];
      if (!item) continue;
      const cost = countTokens(JSON.stringify(item)) + 1;
      if (cost > left) continue;
      left -= cost;
      (kept[k] as unknown[]).push(item);
      next[k]++;
      open = true;
    }
  }
  const tokens = countTokens(JSON.stringify(kept));
  const n = order.reduce((s, k) => s + kept[k].length, 0);
  return { ...kept, tokens, truncated: total - n };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
