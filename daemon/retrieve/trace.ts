import { CodememError } from "../../shared/errors.js";
import type { GraphEdge } from "../index/types.js";
import type { MemNode, Retriever } from "./retriever.js";

/** Entries listed per depth: a hub's thousand callers would drown the answer. */
export const TRACE_LEVEL_CAP = 50;
/** Candidates an ambiguity error names. */
const CANDIDATES_SHOWN = 10;

export interface GraphEntry {
  id: string;
  name: string;
  type: string;
  at: string;
}

/** A node as trace and impact list it: its qualified name and `path:line`. */
export function entryOf(n: MemNode): GraphEntry {
  return { id: n.id, name: n.qualified_name || n.name, type: n.type, at: `${n.file_path}:${n.line_start}` };
}

/**
 * An edge that is one of several run-time candidates (an interface call, an override): the index
 * may mark it `dispatch`; an index without the mark has none.
 */
export function isDispatch(e: GraphEdge): boolean {
  return !!e.dispatch;
}

/** The output fields of an entry reached through an edge: `dispatch: true` and the candidate's confidence, or nothing. */
export function dispatchFields(confidence: number | undefined): { dispatch?: true; confidence?: number } {
  return confidence ? { dispatch: true, confidence } : {};
}

/**
 * The node a symbol names: its id, a file path (its module), `path:Name` / `path::Name`, a
 * qualified name (`Class.method`) or a bare name. Several matches answer SYMBOL_AMBIGUOUS listing
 * them, so the caller picks one by id or `path:name`.
 */
export function resolveSymbol(r: Retriever, spec: string): MemNode {
  const exact = r.byId.get(spec);
  if (exact) return exact;
  // A bare name matches methods too: `validate` may be Entity.validate as well as a function.
  const found = inFile(r, spec) ?? r.nodes.filter((n) => n.type !== "module" && (n.qualified_name === spec || n.name === spec));
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    throw new CodememError("SYMBOL_NOT_FOUND", `No symbol "${spec}" in the index; check the spelling (names are case-sensitive), find it with \`codemem search\`, or rebuild if it is new.`, { value: spec });
  }
  const sorted = [...found].sort((a, b) => (a.file_path < b.file_path ? -1 : a.file_path > b.file_path ? 1 : a.line_start - b.line_start));
  const shown = sorted.slice(0, CANDIDATES_SHOWN).map((n) => `${n.file_path}:${n.qualified_name} (${n.type}, line ${n.line_start})`);
  const more = sorted.length > CANDIDATES_SHOWN ? `, and ${sorted.length - CANDIDATES_SHOWN} more` : "";
  throw new CodememError("SYMBOL_AMBIGUOUS", `"${spec}" names ${sorted.length} symbols: ${shown.join("; ")}${more}. Pass one as path:name or by its id.`, {
    value: spec,
    candidates: sorted.slice(0, CANDIDATES_SHOWN).map((n) => ({ id: n.id, at: `${n.file_path}:${n.line_start}` })),
  });
}

/** `path`, `path:Name` or `path::Name` of an indexed file: its module or the nodes of that name in it; undefined when no file is named. */
function inFile(r: Retriever, spec: string): MemNode[] | undefined {
  if (r.files.has(spec)) return r.nodesOf(spec).filter((n) => n.type === "module");
  const m = /^(.+?)::?([^:]+)$/.exec(spec);
  if (!m || !r.files.has(m[1])) return undefined;
  return r.nodesOf(m[1]).filter((n) => n.type !== "module" && (n.qualified_name === m[2] || n.name === m[2]));
}

export interface TraceLevel {
  depth: number;
  entries: (GraphEntry & { via: string; dispatch?: boolean; confidence?: number })[];
  truncated: number;
}

/**
 * Callers (or callees) of `start`, breadth first over `calls` edges to `depth` hops; each node
 * appears once, at its nearest depth, with the node one hop closer that it was reached through.
 */
export async function traceCalls(r: Retriever, start: MemNode, direction: "callers" | "callees", depth: number): Promise<TraceLevel[]> {
  const seen = new Set([start.id]);
  const levels: TraceLevel[] = [];
  let frontier = [start.id];
  for (let d = 1; d <= depth && frontier.length > 0; d++) {
    const found = new Map<string, { via: string; dispatch: boolean; confidence?: number }>();
    const ends = new Set(frontier);
    for (const e of await r.store.neighbors(frontier)) {
      if (e.type !== "calls") continue;
      const [from, to] = direction === "callers" ? [e.target, e.source] : [e.source, e.target];
      if (!ends.has(from) || seen.has(to) || !r.byId.has(to)) continue;
      const prev = found.get(to);
      const x = { via: from, dispatch: isDispatch(e), confidence: e.dispatch };
      // Reached several ways: a direct edge before a dispatch candidate, then the first id (answers stay the same).
      if (!prev || (prev.dispatch && !x.dispatch) || (prev.dispatch === x.dispatch && from < prev.via)) found.set(to, x);
    }
    for (const id of found.keys()) seen.add(id);
    const entries = [...found].map(([id, f]) => ({ ...entryOf(r.byId.get(id)!), via: f.via, ...dispatchFields(f.confidence) }));
    entries.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    // The next hop walks from every node found, listed or not: the cap is the answer's size, not the graph's.
    frontier = [...found.keys()];
    levels.push({ depth: d, entries: entries.slice(0, TRACE_LEVEL_CAP), truncated: Math.max(0, entries.length - TRACE_LEVEL_CAP) });
  }
  return levels;
}
