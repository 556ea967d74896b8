/** mulberry32: a small seeded PRNG, for results that must repeat (communities, fixtures, benchmarks). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random unit vector of `dim` components, `density` of them non-zero (benchmarks and tests of vector search). */
export function unitVector(rand: () => number, dim: number, density = 1): Float32Array {
  const v = new Float32Array(dim);
  let norm = 0;
  for (let d = 0; d < dim; d++) {
    if (rand() >= density) continue;
    v[d] = rand() * 2 - 1;
    norm += v[d] * v[d];
  }
  for (let d = 0; d < dim; d++) v[d] /= Math.sqrt(norm);
  return v;
}
