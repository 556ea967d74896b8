import { describe, expect, it } from "vitest";
import { quantize, VectorMatrix, type Quantized } from "../../dist/daemon/store/vector-matrix.js";
import { dotKernel, scalarKernel } from "../../dist/daemon/store/simd-dot.js";
import { seededRandom, unitVector as randomUnitVector } from "../../dist/shared/random.js";

const DIM = 384;
const K = 20;

const unitVector = (rand: () => number, density = 1) => randomUnitVector(rand, DIM, density);

/** The vectors a matrix holds, kept beside it: rowid → its file and quantized vector. */
class Model {
  readonly rows = new Map<number, { file: string; v: Quantized }>();
  readonly matrix: VectorMatrix;
  private next = 1;

  constructor(capacity: number) {
    this.matrix = new VectorMatrix(DIM, capacity);
  }

  /** Replaces the nodes of `files` with `count` new random ones spread over `newFiles`. */
  patch(rand: () => number, files: string[], count: number, newFiles: string[]): void {
    for (const [rowid, r] of this.rows) if (files.includes(r.file)) this.rows.delete(rowid);
    const put: { rowid: number; file: string }[] = [];
    const vectors = new Map<number, Quantized>();
    for (let i = 0; i < count; i++) {
      const rowid = this.next++;
      const file = newFiles[i % newFiles.length];
      const v = quantize(unitVector(rand));
      this.rows.set(rowid, { file, v });
      put.push({ rowid, file });
      vectors.set(rowid, v);
    }
    this.matrix.patch(files, put, vectors);
  }

  /** Exact float cosines over the dequantized vectors, best first. */
  exact(q: Float32Array): { rowid: number; sim: number }[] {
    const out: { rowid: number; sim: number }[] = [];
    for (const [rowid, { v }] of this.rows) {
      let s = 0;
      for (let d = 0; d < DIM; d++) s += q[d] * v.q[d] * v.scale;
      out.push({ rowid, sim: s });
    }
    return out.sort((a, b) => b.sim - a.sim);
  }

  /** nearest() agrees with the exact ranking: same scores, and any id missing from it ties within 1e-3. */
  check(rand: () => number, queries: number): void {
    for (let i = 0; i < queries; i++) {
      const q = unitVector(rand, i % 2 ? 0.4 : 1);
      const got = this.matrix.nearest(q, K);
      const exact = this.exact(q);
      const sim = new Map(exact.map((e) => [e.rowid, e.sim]));
      expect(got).toHaveLength(Math.min(K, this.rows.size));
      const kth = exact[got.length - 1].sim;
      for (const g of got) {
        expect(sim.has(g.rowid)).toBe(true); // a live node, never a freed slot
        expect(Math.abs(g.sim - sim.get(g.rowid)!)).toBeLessThan(1e-3);
        expect(g.sim).toBeGreaterThan(kth - 1e-3);
      }
      for (let j = 1; j < got.length; j++) expect(got[j].sim).toBeLessThanOrEqual(got[j - 1].sim);
    }
  }
}

const files = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}.go`);

describe("the dot kernel", () => {
  it("gives the scalar kernel's i32 dots, extremes included", () => {
    const rand = seededRandom(5);
    const stride = 48;
    const n = 200;
    const memory = new WebAssembly.Memory({ initial: 1 });
    const q = new Int16Array(memory.buffer, 0, stride);
    const rows = new Int8Array(memory.buffer, 2 * stride, n * stride);
    for (let d = 0; d < stride; d++) q[d] = d % 7 === 0 ? (d % 2 ? -32767 : 32767) : Math.round((rand() * 2 - 1) * 32767);
    for (let i = 0; i < rows.length; i++) rows[i] = i % 5 === 0 ? (i % 2 ? -127 : 127) : Math.round((rand() * 2 - 1) * 127);
    // The first row at the extremes in every lane: the largest dot a stride of 48 can give.
    for (let d = 0; d < stride; d++) rows[d] = q[d] > 0 ? 127 : -127;
    const out = 2 * stride + n * stride;
    dotKernel(memory)(0, 2 * stride, n, stride, out);
    const simd = [...new Int32Array(memory.buffer, out, n)];
    scalarKernel(memory)(0, 2 * stride, n, stride, out);
    const scalar = [...new Int32Array(memory.buffer, out, n)];
    expect(simd).toEqual(scalar);
    expect(new Set(scalar).size).toBeGreaterThan(n - 5);
  });
});

describe("VectorMatrix with the SIMD kernel", () => {
  it("returns the exact top-k of the dequantized vectors", () => {
    const rand = seededRandom(7);
    const m = new Model(4000);
    m.patch(rand, [], 3000, files("a", 100));
    m.check(rand, 20);
  });

  it("stays exact after patches free and reuse slots, and never returns a freed one", () => {
    const rand = seededRandom(11);
    const m = new Model(3100);
    m.patch(rand, [], 3000, files("a", 100));
    // Half the files re-indexed with fewer nodes: freed slots stay free, the rest are reused.
    m.patch(rand, files("a", 50), 1000, files("b", 40));
    m.check(rand, 10);
    m.patch(rand, files("b", 40), 0, []);
    expect(m.rows.size).toBe(1500);
    m.check(rand, 10);
  });

  it("stays exact after growing beyond its initial capacity", () => {
    const rand = seededRandom(13);
    const m = new Model(100);
    m.patch(rand, [], 90, files("a", 10));
    m.check(rand, 5);
    // Several grows, each moving the score scratch past the new rows.
    m.patch(rand, files("a", 5), 5000, files("b", 200));
    m.check(rand, 10);
  });

  it("scores a zero query 0 for every node", () => {
    const m = new Model(50);
    m.patch(seededRandom(3), [], 30, ["a.go"]);
    const got = m.matrix.nearest(new Float32Array(DIM), 5);
    expect(got.map((g) => g.sim)).toEqual([0, 0, 0, 0, 0]);
  });
});
