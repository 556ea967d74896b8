/**
 * What the canvas page draws: graph.json trimmed to ids, labels, communities and degrees. Big
 * graphs (> FULL_LIMIT nodes) become one super-node per community plus the top nodes by degree,
 * so the browser lays out a few thousand elements at most. The view also maps every node id and
 * file of the full graph to the displayed nodes that stand for them, so an event naming a hidden
 * node still pulses its community.
 */
import fs from "node:fs";
import { CodememError } from "../../shared/errors.js";

export const VIEW_LIMITS = Object.freeze({
  /** Above this many nodes the page gets community super-nodes instead of the whole graph. */
  fullLimit: 3000,
  /** Individual nodes kept in a summarised view, by degree. */
  topNodes: 800,
  /**
   * Edges sent in any view. The page's force layout (fcose) takes ~2 s on 2 cores at 1,000 nodes
   * and 3,000 edges, and grows much faster than linearly past that.
   */
  maxEdges: 3000,
  /** Displayed nodes one event may pulse. */
  maxTargets: 200,
});

export interface ViewNode {
  id: string;
  label: string;
  community: number;
  type: string;
  file?: string;
  degree: number;
  /** For community super-nodes: members of the community not shown individually. */
  members?: number;
}

export interface ViewEdge {
  source: string;
  target: string;
  type: string;
  weight?: number;
}

export interface ViewCommunity {
  id: number;
  name: string;
  size: number;
}

export interface GraphView {
  summarised: boolean;
  totalNodes: number;
  totalEdges: number;
  nodes: ViewNode[];
  edges: ViewEdge[];
  communities: ViewCommunity[];
}

/** A view plus the lookups that turn an event's node ids and files into displayed node ids. */
export interface LoadedView {
  view: GraphView;
  targetsOf(nodes: readonly string[] | undefined, files: readonly string[] | undefined): string[];
  /** Learned associations between displayed nodes (a file stands for the first displayed node of it). */
  learned(pairs: readonly { a: string; b: string; weight: number }[], type: LearnedType): ViewEdge[];
}

/** Links the page draws apart from the code graph: session synapses and co-change from git history. */
export type LearnedType = "synapse" | "cochange";

interface RawNode {
  id: string;
  name?: string;
  type?: string;
  file_path?: string;
  community?: number | null;
}

interface RawGraph {
  nodes: RawNode[];
  edges: { source: string; target: string; type?: string }[];
  communities?: { id: number; name?: string; size?: number }[];
}

/** Super-node id of a community. */
export const superId = (community: number): string => `community:${community}`;

/** Reads and trims `graph.json`; GRAPH_MISSING / GRAPH_MALFORMED when it cannot. */
export function loadView(graphFile: string, limits = VIEW_LIMITS): LoadedView {
  let text: string;
  try {
    text = fs.readFileSync(graphFile, "utf8");
  } catch {
    throw new CodememError("GRAPH_MISSING", `No graph at ${graphFile}; build it first with "codemem build <project>".`, { value: graphFile });
  }
  let raw: RawGraph;
  try {
    raw = JSON.parse(text) as RawGraph;
    if (!Array.isArray(raw.nodes) || !Array.isArray(raw.edges)) throw new Error("nodes or edges is not an array");
  } catch (err) {
    throw new CodememError("GRAPH_MALFORMED", `${graphFile} is not a graph (${(err as Error).message}); rebuild it with "codemem build <project>".`, {
      value: graphFile,
    });
  }
  return buildView(raw, limits);
}

function buildView(raw: RawGraph, limits: typeof VIEW_LIMITS): LoadedView {
  const byId = new Map<string, RawNode>();
  for (const n of raw.nodes) if (n && typeof n.id === "string") byId.set(n.id, n);
  const edges = raw.edges.filter((e) => e && byId.has(e.source) && byId.has(e.target) && e.source !== e.target);
  const degree = new Map<string, number>();
  for (const e of edges) {
    degree.set(e.source, (degree.get(e.source) ?? 0) + 1);
    degree.set(e.target, (degree.get(e.target) ?? 0) + 1);
  }
  const communityOf = (n: RawNode): number => (typeof n.community === "number" ? n.community : -1);

  const names = new Map<number, string>();
  for (const c of raw.communities ?? []) if (typeof c?.id === "number") names.set(c.id, String(c.name ?? `community ${c.id}`));
  const sizes = new Map<number, number>();
  for (const n of byId.values()) sizes.set(communityOf(n), (sizes.get(communityOf(n)) ?? 0) + 1);
  const communities: ViewCommunity[] = [...sizes.entries()]
    .map(([id, size]) => ({ id, size, name: names.get(id) ?? (id < 0 ? "no community" : `community ${id}`) }))
    .sort((a, b) => b.size - a.size || a.id - b.id);

  const toView = (n: RawNode): ViewNode => ({
    id: n.id,
    label: String(n.name ?? n.id),
    community: communityOf(n),
    type: String(n.type ?? "node"),
    ...(n.file_path ? { file: n.file_path } : {}),
    degree: degree.get(n.id) ?? 0,
  });
  const byDegree = (a: { id: string }, b: { id: string }) => (degree.get(b.id) ?? 0) - (degree.get(a.id) ?? 0);

  // Which displayed node stands for each node of the full graph.
  const shownAs = new Map<string, string>();
  let nodes: ViewNode[];
  let viewEdges: ViewEdge[];
  const summarised = byId.size > limits.fullLimit;
  if (!summarised) {
    nodes = [...byId.values()].map(toView);
    for (const n of nodes) shownAs.set(n.id, n.id);
    viewEdges = edges.map((e) => ({ source: e.source, target: e.target, type: String(e.type ?? "edge") }));
  } else {
    const top = [...byId.values()].sort(byDegree).slice(0, limits.topNodes);
    const kept = new Set(top.map((n) => n.id));
    const hidden = new Map<number, number>();
    for (const n of byId.values()) {
      if (kept.has(n.id)) shownAs.set(n.id, n.id);
      else {
        shownAs.set(n.id, superId(communityOf(n)));
        hidden.set(communityOf(n), (hidden.get(communityOf(n)) ?? 0) + 1);
      }
    }
    const supers: ViewNode[] = communities
      .filter((c) => (hidden.get(c.id) ?? 0) > 0)
      .map((c) => ({ id: superId(c.id), label: c.name, community: c.id, type: "community", degree: 0, members: hidden.get(c.id) ?? 0 }));
    nodes = [...supers, ...top.map(toView)];
    // Edges between displayed stand-ins, merged and weighted; each kept node is tied to its community.
    const merged = new Map<string, ViewEdge>();
    for (const e of edges) {
      const s = shownAs.get(e.source)!;
      const t = shownAs.get(e.target)!;
      if (s === t) continue;
      const key = s < t ? `${s}\u0000${t}` : `${t}\u0000${s}`;
      const m = merged.get(key);
      if (m) m.weight = (m.weight ?? 1) + 1;
      else merged.set(key, { source: s, target: t, type: String(e.type ?? "edge"), weight: 1 });
    }
    const superIds = new Set(supers.map((s) => s.id));
    const membership: ViewEdge[] = top
      .filter((n) => superIds.has(superId(communityOf(n))))
      .map((n) => ({ source: n.id, target: superId(communityOf(n)), type: "member" }));
    // Membership first so the edge cap never cuts it: it is what keeps a community together.
    viewEdges = [...membership, ...[...merged.values()].sort((a, b) => (b.weight ?? 1) - (a.weight ?? 1))];
    const superDegree = new Map<string, number>();
    for (const e of viewEdges) {
      superDegree.set(e.source, (superDegree.get(e.source) ?? 0) + (e.weight ?? 1));
      superDegree.set(e.target, (superDegree.get(e.target) ?? 0) + (e.weight ?? 1));
    }
    for (const s of supers) s.degree = superDegree.get(s.id) ?? 0;
  }
  if (viewEdges.length > limits.maxEdges) viewEdges = viewEdges.slice(0, limits.maxEdges);

  const byFile = new Map<string, Set<string>>();
  for (const n of byId.values()) {
    if (!n.file_path) continue;
    let set = byFile.get(n.file_path);
    if (!set) byFile.set(n.file_path, (set = new Set()));
    set.add(shownAs.get(n.id)!);
  }

  const view: GraphView = { summarised, totalNodes: byId.size, totalEdges: edges.length, nodes, edges: viewEdges, communities };
  return {
    view,
    targetsOf(ids, files) {
      const out = new Set<string>();
      // A file lights all its displayed nodes only when the event names none of its nodes: a search's
      // five results light five nodes, not every node of their files.
      const named = new Set<string>();
      for (const id of ids ?? []) {
        const shown = shownAs.get(id);
        if (shown) out.add(shown);
        const file = byId.get(id)?.file_path;
        if (file) named.add(file);
      }
      for (const f of files ?? []) {
        const file = f.replace(/^\.\//, "");
        if (!named.has(file)) for (const shown of byFile.get(file) ?? []) out.add(shown);
      }
      return [...out].slice(0, limits.maxTargets);
    },
    learned(pairs, type) {
      const shown = (id: string) => shownAs.get(id) ?? byFile.get(id)?.values().next().value;
      const merged = new Map<string, ViewEdge>();
      for (const p of pairs) {
        const s = shown(p.a);
        const t = shown(p.b);
        if (!s || !t || s === t) continue;
        const key = s < t ? `${s}\u0000${t}` : `${t}\u0000${s}`;
        const weight = Math.round(p.weight * 1000) / 1000;
        if ((merged.get(key)?.weight ?? -1) < weight) merged.set(key, { source: s, target: t, type, weight });
      }
      return [...merged.values()];
    },
  };
}
