// Exact vector search: p50 of VectorMatrix.nearest() (WebAssembly SIMD kernel) against the old JS
// column-major loop, on 60K and 300K random quantized vectors (dim 384). Queries: the built-in
// embedder's own (about 40% non-zero dimensions) and dense random ones.
// Usage: npm run bench:vector   (or: node scripts/bench-vector.mjs after a build)
import { BuiltinEmbedder } from "../dist/daemon/index/embed/builtin.js";
import { bestIndices, quantize, VectorMatrix } from "../dist/daemon/store/vector-matrix.js";
import { seededRandom, unitVector as randomUnitVector } from "../dist/shared/random.js";

const DIM = 384;
const LIMIT = 60;
const RUNS = 25;
const rand = seededRandom(42);

const unitVector = (density = 1) => randomUnitVector(rand, DIM, density);

// BASELINE, kept only here: the column-major scoring loop VectorMatrix.nearest used before the
// SIMD kernel (every slot's score accumulated over the query's non-zero dimensions, four at a time).
function baselineNearest(cols, scales, n, q, limit) {
  const sims = new Float32Array(n);
  const dims = [];
  for (let d = 0; d < DIM; d++) if (q[d] !== 0) dims.push(d);
  let k = 0;
  for (; k + 4 <= dims.length; k += 4) {
    const [d0, d1, d2, d3] = [dims[k], dims[k + 1], dims[k + 2], dims[k + 3]];
    const c0 = q[d0], c1 = q[d1], c2 = q[d2], c3 = q[d3];
    const b0 = d0 * n, b1 = d1 * n, b2 = d2 * n, b3 = d3 * n;
    for (let i = 0; i < n; i++) sims[i] += c0 * cols[b0 + i] + c1 * cols[b1 + i] + c2 * cols[b2 + i] + c3 * cols[b3 + i];
  }
  for (; k < dims.length; k++) {
    const c = q[dims[k]];
    const base = dims[k] * n;
    for (let i = 0; i < n; i++) sims[i] += c * cols[base + i];
  }
  for (let i = 0; i < n; i++) sims[i] *= scales[i];
  const idx = bestIndices(sims, n, limit, () => true);
  return idx.map((i) => ({ rowid: i + 1, sim: sims[i] }));
}

function p50(fn, queries) {
  const times = [];
  for (let r = 0; r < RUNS; r++) {
    const q = queries[r % queries.length];
    const t = performance.now();
    fn(q);
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

const embedder = new BuiltinEmbedder();
const sparse = ["how does the scheduler park a goroutine", "parse duration string", "where is the http request body read and closed", "sort slice stable", "close idle connections"].map((t) => embedder.embedQuery(t, () => 1));
const nonZero = sparse.reduce((s, q) => s + q.filter((x) => x !== 0).length, 0) / sparse.length;
const dense = Array.from({ length: 5 }, () => unitVector());

console.log(`dim ${DIM}, top ${LIMIT}, p50 of ${RUNS} queries; sparse = built-in embedder queries (${nonZero.toFixed(0)} of ${DIM} dims non-zero)`);
for (const n of [60_000, 300_000]) {
  const matrix = new VectorMatrix(DIM, n);
  const cols = new Int8Array(DIM * n);
  const scales = new Float32Array(n);
  const rows = [];
  const vectors = new Map();
  for (let i = 0; i < n; i++) {
    const v = quantize(unitVector(0.6));
    for (let d = 0; d < DIM; d++) cols[d * n + i] = v.q[d];
    scales[i] = v.scale;
    rows.push({ rowid: i + 1, file: `f${i >> 5}.go` });
    vectors.set(i + 1, v);
  }
  matrix.patch([], rows, vectors);
  // Same answers from both (warms both up too).
  for (const q of [...sparse, ...dense]) {
    const a = matrix.nearest(q, LIMIT).map((r) => r.rowid);
    const b = baselineNearest(cols, scales, n, q, LIMIT).map((r) => r.rowid);
    const same = a.filter((x) => b.includes(x)).length;
    if (same < LIMIT - 2) throw new Error(`top-${LIMIT} differs: ${same} shared`);
  }
  for (const [kind, queries] of [["sparse", sparse], ["dense", dense]]) {
    const simd = p50((q) => matrix.nearest(q, LIMIT), queries);
    const old = p50((q) => baselineNearest(cols, scales, n, q, LIMIT), queries);
    console.log(`${String(n).padStart(7)} nodes, ${kind.padEnd(6)}: simd ${simd.toFixed(2)} ms, old JS loop ${old.toFixed(2)} ms, ×${(old / simd).toFixed(1)}`);
  }
}
