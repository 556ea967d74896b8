import { UndirectedGraph } from "graphology";
import louvainModule from "graphology-communities-louvain";
import { describe, expect, it } from "vitest";
import { WeightedGraph } from "../../daemon/index/weighted-graph.js";
import { seededRandom } from "../../shared/random.js";

const louvain = louvainModule as unknown as (g: UndirectedGraph, opts: { getEdgeWeight: string; rng: () => number; resolution: number }) => Record<string, number>;

/**
 * A code-like graph: clusters of nodes with dense calls inside and a few across, parallel edges in
 * both orientations, self-loops, and some keys that are array indices (which V8 objects, and so
 * graphology's adjacency, enumerate first).
 */
function randomGraph(seed: number) {
  const rand = seededRandom(seed);
  const ids = Array.from({ length: 600 }, (_, i) => (i % 7 === 3 ? String(1000 - i) : `pkg${i % 13}/file${i % 40}.go::sym${i}`));
  const src: number[] = [];
  const dst: number[] = [];
  const w: number[] = [];
  const weights = [1, 1.5, 0.7, 0.6, 0.5];
  for (let k = 0; k < 4000; k++) {
    const a = Math.floor(rand() * ids.length);
    const near = rand() < 0.85;
    const b = near ? (a - (a % 20) + Math.floor(rand() * 20)) % ids.length : Math.floor(rand() * ids.length);
    src.push(a);
    dst.push(b);
    w.push(weights[Math.floor(rand() * weights.length)]);
  }
  return { ids, src: Int32Array.from(src), dst: Int32Array.from(dst), w: Float64Array.from(w) };
}

/** The graph as clustering built it with graphology: parallel edges' weights summed onto the first. */
function graphologyOf({ ids, src, dst, w }: ReturnType<typeof randomGraph>): UndirectedGraph {
  const g = new UndirectedGraph({ allowSelfLoops: false });
  for (const id of ids) g.addNode(id);
  for (let k = 0; k < src.length; k++) {
    const [s, t] = [ids[src[k]], ids[dst[k]]];
    if (s === t) continue;
    if (g.hasEdge(s, t)) g.updateEdgeAttribute(s, t, "weight", (x: number) => x + w[k]);
    else g.addEdge(s, t, { weight: w[k] });
  }
  return g;
}

describe("WeightedGraph", () => {
  it.each([1, 2, 3])("has graphology's edges, weights, degrees and neighbour order, and Louvain finds the same communities on it (seed %i)", (seed) => {
    const input = randomGraph(seed);
    const g = graphologyOf(input);
    const ours = new WeightedGraph(input.ids.length, input.src, input.dst, input.w, input.ids);
    const { ids } = input;

    const edges: [string, string, number][] = [];
    g.forEachEdge((_e, attr, s, t) => void edges.push([s, t, attr.weight as number]));
    expect([...ours.source].map((s, e) => [ids[s], ids[ours.target[e]], ours.weight[e]])).toEqual(edges);
    for (const [i, id] of ids.entries()) {
      expect(ours.degree(i)).toBe(g.degree(id));
      expect([...ours.neighbours(i)].map((j) => ids[j])).toEqual(g.neighbors(id));
    }

    for (const resolution of [0.8, 1.5]) {
      const theirs = louvain(g, { getEdgeWeight: "weight", rng: seededRandom(42), resolution });
      const mine = ours.louvain(seededRandom(42), resolution);
      expect(new Set(mine).size).toBeGreaterThan(5);
      expect(ids.map((id) => theirs[id])).toEqual([...mine]);
    }
  });
});
