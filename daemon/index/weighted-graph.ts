import louvainModule from "graphology-communities-louvain";

/**
 * An undirected weighted graph over node indices in typed arrays, for clustering. It stands in for
 * graphology's UndirectedGraph (Go's src: 60K nodes and 240K edges took 4.8 s and ~250 MB of
 * objects to build there, Louvain itself 1 s) and reproduces what clustering read of one: nodes in
 * insertion order, an edge per pair of nodes in the order the pair first came with its first
 * orientation, parallel edges' weights summed in order, and each node's neighbours in the order
 * their edges came (graphology's for-in order over its adjacency object: integer-like keys first).
 */
export class WeightedGraph {
  /** Edge endpoints and weights, in the order each pair first came. */
  readonly source: Int32Array;
  readonly target: Int32Array;
  readonly weight: Float64Array;
  /** Neighbours of node i: neighbour[start[i] .. start[i + 1]). */
  private readonly start: Int32Array;
  private readonly neighbour: Int32Array;

  /**
   * Edges `src[k]`–`dst[k]` with weight `w[k]` among `order` nodes; a self-loop is dropped and a pair
   * seen again adds its weight to the pair's edge. `ids` (the nodes' keys) order each node's
   * neighbours as graphology's objects would.
   */
  constructor(
    readonly order: number,
    src: Int32Array,
    dst: Int32Array,
    w: Float64Array | undefined,
    ids?: readonly string[],
  ) {
    const { source, target, weight, m } = mergePairs(order, src, dst, w);
    this.source = source.subarray(0, m);
    this.target = target.subarray(0, m);
    this.weight = weight.subarray(0, m);
    const start = new Int32Array(order + 1);
    for (let e = 0; e < m; e++) {
      start[source[e] + 1]++;
      start[target[e] + 1]++;
    }
    for (let i = 0; i < order; i++) start[i + 1] += start[i];
    const fill = start.slice(0, order);
    const neighbour = new Int32Array(2 * m);
    for (let e = 0; e < m; e++) {
      neighbour[fill[source[e]]++] = target[e];
      neighbour[fill[target[e]]++] = source[e];
    }
    this.start = start;
    this.neighbour = neighbour;
    if (ids) this.integerKeysFirst(ids);
  }

  get size(): number {
    return this.source.length;
  }

  degree(i: number): number {
    return this.start[i + 1] - this.start[i];
  }

  /** Node i's neighbours, in graphology's order. */
  neighbours(i: number): Int32Array {
    return this.neighbour.subarray(this.start[i], this.start[i + 1]);
  }

  /** Louvain's communities (Louvain's own ids) of the nodes, by index. */
  louvain(rng: () => number, resolution: number): Int32Array {
    const byNode = louvain(louvainView(this), { getEdgeWeight: "weight", rng, resolution });
    const out = new Int32Array(this.order);
    for (let i = 0; i < this.order; i++) out[i] = byNode[i];
    return out;
  }

  /** A V8 object enumerates keys that are array indices first, ascending: so does graphology's adjacency. */
  private integerKeysFirst(ids: readonly string[]): void {
    const index = ids.map((id) => (/^(0|[1-9]\d{0,9})$/.test(id) && Number(id) < 2 ** 32 - 1 ? Number(id) : -1));
    if (!index.some((x) => x >= 0)) return;
    for (let i = 0; i < this.order; i++) {
      const nbs = this.neighbours(i);
      const ints = [...nbs].filter((j) => index[j] >= 0).sort((a, b) => index[a] - index[b]);
      if (ints.length) nbs.set([...ints, ...[...nbs].filter((j) => index[j] < 0)]);
    }
  }
}

/**
 * One edge per pair of nodes, in the order pairs first come, with the first one's orientation and
 * the sum of the pair's weights in the order they come. Pairs are found by bucketing the edges by
 * their lower endpoint (stable, so each bucket keeps the edges' order), not in a Map of 240K keys.
 */
function mergePairs(order: number, src: Int32Array, dst: Int32Array, w: Float64Array | undefined) {
  const n = src.length;
  const bucketStart = new Int32Array(order + 1);
  for (let k = 0; k < n; k++) if (src[k] !== dst[k]) bucketStart[Math.min(src[k], dst[k]) + 1]++;
  for (let i = 0; i < order; i++) bucketStart[i + 1] += bucketStart[i];
  const fill = bucketStart.slice(0, order);
  const byLow = new Int32Array(bucketStart[order]);
  for (let k = 0; k < n; k++) if (src[k] !== dst[k]) byLow[fill[Math.min(src[k], dst[k])]++] = k;
  // firstOf[k]: the first edge of k's pair; sum[first]: the pair's weight.
  const firstOf = new Int32Array(n).fill(-1);
  const sum = new Float64Array(n);
  const seenAt = new Int32Array(order).fill(-1); // the pair's first edge, for the bucket being read
  const seenIn = new Int32Array(order).fill(-1);
  for (let low = 0; low < order; low++) {
    for (let p = bucketStart[low]; p < bucketStart[low + 1]; p++) {
      const k = byLow[p];
      const high = Math.max(src[k], dst[k]);
      const wk = w ? w[k] : 1;
      if (seenIn[high] === low) {
        firstOf[k] = seenAt[high];
        sum[seenAt[high]] += wk;
      } else {
        seenIn[high] = low;
        seenAt[high] = k;
        firstOf[k] = k;
        sum[k] = wk;
      }
    }
  }
  const source = new Int32Array(n);
  const target = new Int32Array(n);
  const weight = new Float64Array(n);
  let m = 0;
  for (let k = 0; k < n; k++) {
    if (firstOf[k] !== k) continue;
    source[m] = src[k];
    target[m] = dst[k];
    weight[m++] = sum[k];
  }
  return { source, target, weight, m };
}

// The package is CommonJS; under NodeNext its default import is the function itself.
const louvain = louvainModule as unknown as (g: unknown, opts: { getEdgeWeight: string; rng: () => number; resolution: number }) => Record<number, number>;

/**
 * The part of graphology's Graph that graphology-communities-louvain reads (undirected, not multi:
 * its type checks, order, size, nodes, degrees and edges with their attributes), over `g`; nodes
 * are keyed by index. The version is pinned in package-lock; weighted-graph.test holds the result
 * to the one on a graphology graph.
 */
function louvainView(g: WeightedGraph): unknown {
  const refuse = () => {
    throw new Error("a clustering graph is read-only");
  };
  return {
    type: "undirected",
    multi: false,
    order: g.order,
    size: g.size,
    selfLoopCount: 0,
    addUndirectedEdgeWithKey: refuse,
    dropNode: refuse,
    forEachNode(fn: (node: number, attr: object) => void) {
      for (let i = 0; i < g.order; i++) fn(i, {});
    },
    undirectedDegreeWithoutSelfLoops: (i: number) => g.degree(i),
    forEachEdge(fn: (edge: number, attr: { weight: number }, source: number, target: number) => void) {
      for (let e = 0; e < g.size; e++) fn(e, { weight: g.weight[e] }, g.source[e], g.target[e]);
    },
  };
}
