import path from "node:path";
import { UndirectedGraph } from "graphology";
import louvainModule from "graphology-communities-louvain";
import type { GraphCommunity, GraphEdge } from "./types.js";
import type { NodeRecord } from "./resolve.js";
import { seededRandom } from "../../shared/random.js";

/** Edge weights for clustering: calls and inheritance bind code together more than containment does. */
// The package is CommonJS; under NodeNext its default import is the function itself.
const louvain = louvainModule as unknown as (
  g: UndirectedGraph,
  opts: { getEdgeWeight: string; rng: () => number; resolution: number },
) => Record<string, number>;

const WEIGHT: Record<string, number> = { calls: 1, inherits: 1.5, imports: 0.7, contains: 0.6 };
const MIN_COMMUNITY = 4;


/** What clustering and naming read of a node. */
export type CommunityNode = { id: string; name: string; type: string; file_path: string };

export interface CommunityResult {
  communityOf: Map<string, number>;
  communities: GraphCommunity[];
}

/** Louvain modularity clustering over the code graph, then naming from directories and central symbols. */
export function detectCommunities(nodes: CommunityNode[], edges: GraphEdge[]): CommunityResult {
  const g = new UndirectedGraph({ allowSelfLoops: false });
  for (const n of nodes) g.addNode(n.id);
  for (const e of edges) {
    if (!g.hasNode(e.source) || !g.hasNode(e.target) || e.source === e.target) continue;
    const w = WEIGHT[e.type] ?? 0.5;
    if (g.hasEdge(e.source, e.target)) g.updateEdgeAttribute(e.source, e.target, "weight", (x: number) => x + w);
    else g.addEdge(e.source, e.target, { weight: w });
  }
  const raw: Record<string, number> = g.size > 0 ? louvain(g, { getEdgeWeight: "weight", rng: seededRandom(42) /* the same graph always yields the same communities */, resolution: 0.8 }) : {};

  // Fold communities too small to mean anything into the neighbour community they touch most,
  // falling back to the community holding most of their file.
  const groups = new Map<number, string[]>();
  for (const n of nodes) {
    const c = raw[n.id] ?? -1;
    const l = groups.get(c) ?? [];
    l.push(n.id);
    groups.set(c, l);
  }
  const assign = new Map<string, number>();
  for (const n of nodes) assign.set(n.id, raw[n.id] ?? -1);
  const byFile = new Map<string, string[]>();
  for (const n of nodes) {
    const l = byFile.get(n.file_path) ?? [];
    l.push(n.id);
    byFile.set(n.file_path, l);
  }
  const fileOf = new Map(nodes.map((n) => [n.id, n.file_path]));
  const small = [...groups.entries()].filter(([c, ids]) => c === -1 || ids.length < MIN_COMMUNITY);
  for (const [, ids] of small) {
    const votes = new Map<number, number>();
    const own = assign.get(ids[0]);
    for (const id of ids) {
      if (g.hasNode(id)) {
        g.forEachNeighbor(id, (nb: string, attr: Record<string, unknown>) => {
          const c = assign.get(nb)!;
          if (c !== own) votes.set(c, (votes.get(c) ?? 0) + ((attr.weight as number) ?? 1));
        });
      }
      for (const other of byFile.get(fileOf.get(id) ?? "") ?? []) {
        const c = assign.get(other)!;
        if (c !== own && (groups.get(c)?.length ?? 0) >= MIN_COMMUNITY) votes.set(c, (votes.get(c) ?? 0) + 0.2);
      }
    }
    const best = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
    if (best) for (const id of ids) assign.set(id, best[0]);
  }

  // Renumber by size (largest first) so ids are stable for the same graph and readable.
  const sizes = new Map<number, number>();
  for (const c of assign.values()) sizes.set(c, (sizes.get(c) ?? 0) + 1);
  const order = [...sizes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([c]) => c);
  const renum = new Map(order.map((c, i) => [c, i]));
  const communityOf = new Map<string, number>();
  for (const [id, c] of assign) communityOf.set(id, renum.get(c)!);
  const degree = new Map<string, number>();
  g.forEachNode((id: string) => degree.set(id, g.degree(id)));
  return { communityOf, communities: nameCommunities(nodes, degree, communityOf) };
}

/** Names each community by its common directory and its most connected symbols. */
export function nameCommunities(nodes: CommunityNode[], degree: Map<string, number>, communityOf: Map<string, number>): GraphCommunity[] {
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
    const fileCounts = new Map<string, number>();
    for (const n of list) fileCounts.set(n.file_path, (fileCounts.get(n.file_path) ?? 0) + 1);
    const files = [...fileCounts.entries()].sort((a, b) => b[1] - a[1]).map(([f]) => f);
    const dir = commonDir(files);
    const central = list
      .filter((n) => n.type !== "module")
      .map((n) => ({ n, deg: degree.get(n.id) ?? 0, cls: n.type === "class" || n.type === "struct" || n.type === "interface" ? 1 : 0 }))
      .sort((a, b) => b.cls - a.cls || b.deg - a.deg || (a.n.name < b.n.name ? -1 : 1))
      .slice(0, 4)
      .map((x) => x.n.name);
    const where = dir || files[0].replace(/\.[^./]+$/, "");
    const name = `${where}${central.length ? ` · ${central.slice(0, 3).join(", ")}` : ""}`;
    const topFiles = files.slice(0, 3).map((f) => path.posix.basename(f));
    const description =
      `${list.length} symbols in ${files.length} file${files.length === 1 ? "" : "s"}${dir ? ` under ${dir}/` : ""}` +
      (central.length ? `; central: ${central.join(", ")}` : "") +
      `; main files: ${topFiles.join(", ")}${files.length > 3 ? ", …" : ""}`;
    out.push({ id, name, description, size: list.length, files: files.slice(0, 20) });
  }
  return out;
}

function commonDir(files: string[]): string {
  if (files.length === 0) return "";
  // The deepest directory holding at least 60% of the community's files.
  const counts = new Map<string, number>();
  for (const f of files) {
    const parts = path.posix.dirname(f).split("/");
    for (let i = 1; i <= parts.length; i++) {
      const d = parts.slice(0, i).join("/");
      if (d !== ".") counts.set(d, (counts.get(d) ?? 0) + 1);
    }
  }
  let best = "";
  let bestDepth = 0;
  for (const [d, c] of counts) {
    const depth = d.split("/").length;
    if (c >= files.length * 0.6 && depth > bestDepth) {
      best = d;
      bestDepth = depth;
    }
  }
  return best;
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
export function recountCommunities(previous: GraphCommunity[], sizes: Map<number, number>, communityOf: Map<string, number>, placed: CommunityNode[]): GraphCommunity[] {
  const out: GraphCommunity[] = previous.filter((c) => (sizes.get(c.id) ?? 0) > 0).map((c) => ({ ...c, size: sizes.get(c.id)! }));
  const known = new Set(previous.map((c) => c.id));
  const members = placed.filter((n) => !known.has(communityOf.get(n.id)!));
  if (members.length) out.push(...nameCommunities(members, new Map(), communityOf));
  return out.sort((a, b) => a.id - b.id);
}
