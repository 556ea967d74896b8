import path from "node:path";
import type { GraphCommunity, GraphEdge } from "./types.js";
import { seededRandom } from "../../shared/random.js";
import { isTestPath, type TestClassifier } from "./test-code.js";
import { WeightedGraph } from "./weighted-graph.js";

/** Edge weights for clustering: calls and inheritance bind code together more than containment does. */
const WEIGHT: Record<string, number> = { calls: 1, inherits: 1.5, imports: 0.7, contains: 0.6 };
const MIN_COMMUNITY = 4;
/**
 * On a large graph one Louvain pass lets a cluster swallow the tree (Go's src: 42 % of the symbols
 * in one "area"), which tells a reader nothing; no community may hold more than this share of them.
 * Small projects keep what modularity finds.
 */
const MAX_SHARE = 0.15;
const CAP_FROM_NODES = 2000;

/** What clustering and naming read of a node. */
export type CommunityNode = { id: string; name: string; type: string; file_path: string };

export interface CommunityResult {
  communityOf: Map<string, number>;
  communities: GraphCommunity[];
}

/** The edges clustering weighs, by node index (`nodes`' order): `source[k]`–`target[k]` weighs `weight[k]`. */
export interface ClusterEdges {
  source: Int32Array;
  target: Int32Array;
  weight: Float64Array;
}

/** `edges` between two of `nodes`, by index, with their clustering weight. */
export function clusterEdges(nodes: CommunityNode[], edges: GraphEdge[]): ClusterEdges {
  const index = new Map<string, number>();
  for (const [i, n] of nodes.entries()) index.set(n.id, i);
  const source = new Int32Array(edges.length);
  const target = new Int32Array(edges.length);
  const weight = new Float64Array(edges.length);
  let k = 0;
  for (const e of edges) {
    const s = index.get(e.source);
    const t = index.get(e.target);
    // A dispatch candidate is a possible call, not one: it would tie every implementer to each caller of its interface.
    if (s === undefined || t === undefined || s === t || e.dispatch) continue;
    source[k] = s;
    target[k] = t;
    weight[k++] = WEIGHT[e.type] ?? 0.5;
  }
  return { source: source.slice(0, k), target: target.slice(0, k), weight: weight.slice(0, k) };
}

/** Louvain modularity clustering over the code graph, then naming from directories and central symbols. */
export function detectCommunities(nodes: CommunityNode[], edges: GraphEdge[], isTest: TestClassifier = isTestPath): CommunityResult {
  const { community, communities } = clusterCommunities(nodes, clusterEdges(nodes, edges), isTest);
  return { communityOf: new Map(nodes.map((n, i) => [n.id, community[i]])), communities };
}

/** detectCommunities over edges by index: each node's community by index, and the communities. */
export function clusterCommunities(nodes: CommunityNode[], edges: ClusterEdges, isTest: TestClassifier = isTestPath): { community: Int32Array; communities: GraphCommunity[] } {
  const ids = nodes.map((n) => n.id);
  const g = new WeightedGraph(nodes.length, edges.source, edges.target, edges.weight, ids);
  // -1: no community (a graph without edges)
  const raw = g.size > 0 ? g.louvain(seededRandom(42) /* the same graph always yields the same communities */, 0.8) : new Int32Array(nodes.length).fill(-1);
  const cap = nodes.length >= CAP_FROM_NODES ? Math.floor(nodes.length * MAX_SHARE) : Infinity;
  splitOversized(g, nodes, raw, cap);
  const assign = foldSmall(g, nodes, raw, cap);

  // Renumber by size (largest first) so ids are stable for the same graph and readable.
  const sizes = new Map<number, number>();
  for (const c of assign) sizes.set(c, (sizes.get(c) ?? 0) + 1);
  const order = [...sizes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([c]) => c);
  const renum = new Map(order.map((c, i) => [c, i]));
  const community = new Int32Array(nodes.length);
  for (let i = 0; i < nodes.length; i++) community[i] = renum.get(assign[i])!;
  const communityOf = new Map<string, number>();
  const degree = new Map<string, number>();
  for (const [i, id] of ids.entries()) {
    communityOf.set(id, community[i]);
    degree.set(id, g.degree(i));
  }
  return { community, communities: nameCommunities(nodes, degree, communityOf, isTest) };
}

/**
 * Folds communities too small to mean anything into the neighbour community they touch most,
 * falling back to the community holding most of their file. Returns each node's community.
 */
function foldSmall(g: WeightedGraph, nodes: CommunityNode[], raw: Int32Array, cap: number): Int32Array {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < nodes.length; i++) {
    const l = groups.get(raw[i]) ?? [];
    l.push(i);
    groups.set(raw[i], l);
  }
  const assign = raw.slice();
  const byFile = new Map<string, number[]>();
  for (const [i, n] of nodes.entries()) {
    const l = byFile.get(n.file_path) ?? [];
    l.push(i);
    byFile.set(n.file_path, l);
  }
  const small = [...groups.entries()].filter(([c, members]) => c === -1 || members.length < MIN_COMMUNITY);
  for (const [, members] of small) {
    const votes = new Map<number, number>();
    const own = assign[members[0]];
    for (const i of members) {
      // Each neighbour counts 1, whatever its edge's weight (so it always has).
      for (const nb of g.neighbours(i)) {
        const c = assign[nb];
        if (c !== own) votes.set(c, (votes.get(c) ?? 0) + 1);
      }
      for (const other of byFile.get(nodes[i].file_path)!) {
        const c = assign[other];
        if (c !== own && (groups.get(c)?.length ?? 0) >= MIN_COMMUNITY) votes.set(c, (votes.get(c) ?? 0) + 0.2);
      }
    }
    const best = [...votes.entries()].filter(([c]) => (groups.get(c)?.length ?? 0) + members.length <= cap).sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    if (best) {
      for (const i of members) assign[i] = best[0];
      groups.get(best[0])?.push(...members);
    }
  }
  return assign;
}

/**
 * Splits every community above `cap` nodes (in `raw`, in place): first by modularity within it at
 * a finer resolution, and where the code does not come apart (one dense package), by directory.
 */
function splitOversized(g: WeightedGraph, nodes: CommunityNode[], raw: Int32Array, cap: number): void {
  if (!Number.isFinite(cap)) return;
  let next = 0;
  for (const c of raw) next = Math.max(next, c + 1);
  const stuck = new Set<number>();
  /** Position of a node in the community being split, -1 outside it. */
  const local = new Int32Array(nodes.length).fill(-1);
  for (let round = 0; round < 8; round++) {
    const members = new Map<number, number[]>();
    for (let i = 0; i < nodes.length; i++) {
      const c = raw[i];
      if (c !== -1) (members.get(c) ?? members.set(c, []).get(c)!).push(i);
    }
    const over = [...members.entries()].filter(([c, ids]) => ids.length > cap && !stuck.has(c));
    if (over.length === 0) return;
    for (const [, ids] of over) {
      const parts = subCommunities(g, nodes, ids, local, round);
      const distinct = new Set(parts);
      const byKey = new Map<string, number>();
      if (distinct.size > 1) {
        let most = -1;
        for (const [k, i] of ids.entries()) {
          raw[i] = next + parts[k] + 1;
          most = Math.max(most, parts[k]);
        }
        next += most + 2;
      } else {
        // One dense block: its files' directories, one level below what they share, grouped.
        const dirs = ids.map((i) => path.posix.dirname(nodes[i].file_path));
        const common = commonPrefix(dirs);
        for (const [k, i] of ids.entries()) {
          const key = dirs[k].slice(common.length).split("/").filter(Boolean)[0] ?? nodes[i].file_path;
          if (!byKey.has(key)) byKey.set(key, next++);
          raw[i] = byKey.get(key)!;
        }
        if (byKey.size === 1) stuck.add(raw[ids[0]]); // one directory and file: nothing left to split by
      }
    }
  }
}

/**
 * Louvain within the community `ids` at round `round`'s finer resolution: each member's part, -1
 * for all when its members share no edge. Every edge inside weighs 1 (so it always has).
 */
function subCommunities(g: WeightedGraph, nodes: CommunityNode[], ids: number[], local: Int32Array, round: number): Int32Array {
  for (const [k, i] of ids.entries()) local[i] = k;
  const src: number[] = [];
  const dst: number[] = [];
  // Each edge once, from its endpoint whose id sorts first, in the order graphology walked them.
  for (const [k, i] of ids.entries()) {
    for (const nb of g.neighbours(i)) {
      if (local[nb] !== -1 && nodes[i].id < nodes[nb].id) {
        src.push(k);
        dst.push(local[nb]);
      }
    }
  }
  for (const i of ids) local[i] = -1;
  if (src.length === 0) return new Int32Array(ids.length).fill(-1);
  const sub = new WeightedGraph(ids.length, Int32Array.from(src), Int32Array.from(dst), undefined);
  return sub.louvain(seededRandom(42 + round), 1 + round * 0.5);
}

function commonPrefix(dirs: string[]): string {
  let parts = dirs[0]?.split("/") ?? [];
  for (const d of dirs) {
    const p = d.split("/");
    let i = 0;
    while (i < parts.length && parts[i] === p[i]) i++;
    parts = parts.slice(0, i);
  }
  return parts.length && parts[0] !== "." ? `${parts.join("/")}/` : "";
}

/**
 * Names each community by the directory most of its code lives in and its most connected symbols,
 * both read from its non-test code: a test file never names an area or stands among its central
 * symbols (a community of tests only is named by their directory, with "tests").
 */
export function nameCommunities(nodes: CommunityNode[], degree: Map<string, number>, communityOf: Map<string, number>, isTest: TestClassifier = isTestPath): GraphCommunity[] {
  const members = new Map<number, CommunityNode[]>();
  for (const n of nodes) {
    const c = communityOf.get(n.id);
    if (c === undefined) continue;
    const l = members.get(c) ?? [];
    l.push(n);
    members.set(c, l);
  }
  const out: GraphCommunity[] = [];
  for (const [id, list] of [...members.entries()].sort((a, b) => a[0] - b[0])) {
    const code = list.filter((n) => !isTest(n.file_path));
    const named = code.length ? code : list;
    const fileCounts = new Map<string, number>();
    for (const n of named) fileCounts.set(n.file_path, (fileCounts.get(n.file_path) ?? 0) + 1);
    const files = [...fileCounts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([f]) => f);
    const dirs = mainDirs(fileCounts);
    const ranked = (code.length ? code : [])
      .filter((n) => n.type !== "module")
      .map((n) => ({ n, deg: degree.get(n.id) ?? 0, cls: n.type === "class" || n.type === "struct" || n.type === "interface" ? 1 : 0 }))
      .sort((a, b) => b.cls - a.cls || b.deg - a.deg || (a.n.name < b.n.name ? -1 : 1));
    // The first four distinct names (an indexOf per name was quadratic in a community's size).
    const central = [...new Set(ranked.map((x) => x.n.name))].slice(0, 4);
    const where = dirs.join(", ") + (code.length ? "" : " (tests)");
    const name = `${where}${central.length ? ` · ${central.slice(0, 3).join(", ")}` : ""}`;
    const topFiles = files.slice(0, 3).map((f) => path.posix.basename(f));
    const allFiles = new Set(list.map((n) => n.file_path)).size;
    const description =
      `${list.length} symbols in ${allFiles} file${allFiles === 1 ? "" : "s"} under ${dirs.map((d) => (d === "." ? "the project root" : `${d}/`)).join(", ")}` +
      (central.length ? `; central: ${central.join(", ")}` : "") +
      `; main files: ${topFiles.join(", ")}${files.length > 3 ? ", …" : ""}`;
    out.push({ id, name, description, size: list.length, files: files.slice(0, 20) });
  }
  return out;
}

/**
 * The deepest directory holding at least 60 % of the community's symbols; when none does (code
 * spread over the tree), the two directories holding most of them. "." is the project root.
 */
function mainDirs(symbolsPerFile: Map<string, number>): string[] {
  const counts = new Map<string, number>();
  let total = 0;
  for (const [f, n] of symbolsPerFile) {
    total += n;
    const parts = path.posix.dirname(f).split("/");
    for (let i = 1; i <= parts.length; i++) {
      const d = parts.slice(0, i).join("/");
      counts.set(d, (counts.get(d) ?? 0) + n);
    }
  }
  let best = "";
  let bestDepth = 0;
  for (const [d, c] of counts) {
    const depth = d === "." ? 0 : d.split("/").length;
    if (c >= total * 0.6 && (depth > bestDepth || !best)) {
      best = d;
      bestDepth = depth;
    }
  }
  if (best) return [best];
  // Leaf-most directories by symbols (a directory's count includes its subdirectories').
  const direct = new Map<string, number>();
  for (const [f, n] of symbolsPerFile) direct.set(path.posix.dirname(f), (direct.get(path.posix.dirname(f)) ?? 0) + n);
  return [...direct.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 2).map(([d]) => d);
}

/**
 * Places the nodes of re-indexed files without a community (in `communityOf`, which holds every
 * other node's) where their neighbours and their file's other nodes are; everything else stays.
 * `edges` are the edges the build added: every edge of a new node is among them.
 */
export function carryCommunities(nodes: CommunityNode[], edges: GraphEdge[], communityOf: Map<string, number>): void {
  const fresh = new Set(nodes.filter((n) => !communityOf.has(n.id)).map((n) => n.id));
  if (fresh.size === 0) return;
  const adj = new Map<string, string[]>();
  const link = (a: string, b: string) => (adj.get(a) ?? adj.set(a, []).get(a)!).push(b);
  for (const e of edges) {
    if (fresh.has(e.source)) link(e.source, e.target);
    if (fresh.has(e.target)) link(e.target, e.source);
  }
  const fileVotes = new Map<string, Map<number, number>>();
  for (const n of nodes) {
    const c = communityOf.get(n.id);
    if (c === undefined) continue;
    const m = fileVotes.get(n.file_path) ?? new Map<number, number>();
    m.set(c, (m.get(c) ?? 0) + 1);
    fileVotes.set(n.file_path, m);
  }
  for (let pass = 0; pass < 2; pass++) {
    for (const n of nodes) {
      if (communityOf.has(n.id)) continue;
      const votes = new Map<number, number>();
      for (const nb of adj.get(n.id) ?? []) {
        const c = communityOf.get(nb);
        if (c !== undefined) votes.set(c, (votes.get(c) ?? 0) + 1);
      }
      for (const [c, v] of fileVotes.get(n.file_path) ?? []) votes.set(c, (votes.get(c) ?? 0) + 0.5 * v);
      const best = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
      if (best) communityOf.set(n.id, best[0]);
    }
  }
  let fallback = 0;
  for (const c of communityOf.values()) fallback = Math.max(fallback, c + 1);
  for (const n of nodes) if (!communityOf.has(n.id)) communityOf.set(n.id, fallback);
}

/**
 * The previous communities with their new sizes after nodes were carried in or left; emptied ones
 * drop out, new ones (a new file with no neighbours) are named from their nodes (`placed`).
 */
export function recountCommunities(previous: GraphCommunity[], sizes: Map<number, number>, communityOf: Map<string, number>, placed: CommunityNode[], isTest: TestClassifier = isTestPath): GraphCommunity[] {
  const out: GraphCommunity[] = previous.filter((c) => (sizes.get(c.id) ?? 0) > 0).map((c) => ({ ...c, size: sizes.get(c.id)! }));
  const known = new Set(previous.map((c) => c.id));
  const members = placed.filter((n) => !known.has(communityOf.get(n.id)!));
  if (members.length) out.push(...nameCommunities(members, new Map(), communityOf, isTest));
  return out.sort((a, b) => a.id - b.id);
}
