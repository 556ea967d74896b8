/**
 * Vectors as the local index keeps them: int8 with one scale per vector, and the dense in-memory
 * matrix a reader searches (held by the reader's vector thread: vector-thread.ts).
 */
import type Database from "better-sqlite3";
import { dotKernel } from "./simd-dot.js";

/** A unit vector as stored: int8 components, `value = q × scale`. */
export interface Quantized {
  q: Int8Array;
  scale: number;
}

/** Symmetric int8 quantization with one scale per vector (its largest component maps to ±127). */
export function quantize(v: Float32Array): Quantized {
  let max = 0;
  for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]));
  const scale = max > 0 ? max / 127 : 1;
  const q = new Int8Array(v.length);
  for (let i = 0; i < v.length; i++) q[i] = Math.round(v[i] / scale);
  return { q, scale };
}

/** The float vector an int8 one stands for. */
export function dequantize({ q, scale }: Quantized): Float32Array {
  const v = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) v[i] = q[i] * scale;
  return v;
}

/**
 * Every vector of the index in one dense int8 matrix, patched in place: a re-indexed file's slots
 * are freed and reused, so a save copies nothing (a copy of the whole matrix cost ~0.5 s at 60K
 * nodes). Stored by row (one `stride`-byte row per slot, zero-padded to a multiple of 16) in a
 * WebAssembly memory, scored by the SIMD kernel of simd-dot.ts against the query quantized to int16.
 * Memory layout: the query (`stride` int16s), the rows (`capacity` × `stride` bytes), then one i32
 * score per slot (scratch, so it moves freely when the rows grow).
 */
export class VectorMatrix {
  private readonly memory = new WebAssembly.Memory({ initial: 0 });
  private readonly dots = dotKernel(this.memory);
  private readonly stride: number;
  /** Views into `memory`, re-made whenever it grows (growing detaches the old ones). */
  private query!: Int16Array;
  private rows!: Int8Array;
  private scales: Float32Array;
  /** The node in each slot; -1 for a free slot. */
  private rowids: Int32Array;
  private readonly slotsOf = new Map<string, number[]>();
  private free: number[] = [];
  private capacity = 0;

  constructor(private readonly dim: number, capacity: number) {
    this.stride = Math.ceil(dim / 16) * 16;
    this.scales = new Float32Array(0);
    this.rowids = new Int32Array(0);
    this.grow(capacity);
  }

  /** Every vector of `db`, read in slices of nodes by rowid with `pause` awaited between them. */
  static async load(db: Database.Database, dim: number, pause: () => Promise<void>): Promise<VectorMatrix> {
    const count = (db.prepare("SELECT count(*) AS c FROM nodes").get() as { c: number }).c;
    const m = new VectorMatrix(dim, Math.ceil(count * 1.05) + 64);
    const st = db.prepare("SELECT n.rowid AS rowid, v.embedding AS embedding, n.vec_scale AS scale, n.file_path AS file FROM nodes n JOIN vec_nodes v ON v.rowid = n.rowid WHERE n.rowid > ? ORDER BY n.rowid LIMIT 4000");
    for (let after = 0; ; ) {
      const rows = st.all(after) as { rowid: number; embedding: Buffer; scale: number; file: string }[];
      if (rows.length === 0) return m;
      for (const r of rows) m.put(r.rowid, r.file, { q: new Int8Array(r.embedding.buffer, r.embedding.byteOffset, dim), scale: r.scale });
      after = rows[rows.length - 1].rowid;
      await pause();
    }
  }

  private put(rowid: number, file: string, v: Quantized): void {
    if (this.free.length === 0) this.grow(Math.ceil(this.capacity * 1.5) + 64);
    const slot = this.free.pop()!;
    this.rows.set(v.q, slot * this.stride);
    this.scales[slot] = v.scale;
    this.rowids[slot] = rowid;
    const l = this.slotsOf.get(file);
    if (l) l.push(slot);
    else this.slotsOf.set(file, [slot]);
  }

  private grow(capacity: number): void {
    const old = this.capacity;
    const qBytes = this.stride * 2;
    const need = qBytes + capacity * (this.stride + 4);
    const pages = Math.ceil(need / 65536) - this.memory.buffer.byteLength / 65536;
    if (pages > 0) this.memory.grow(pages);
    this.query = new Int16Array(this.memory.buffer, 0, this.stride);
    this.rows = new Int8Array(this.memory.buffer, qBytes, capacity * this.stride);
    // The new rows held the old score scratch: zeroed, so no row's padding keeps stale bytes.
    this.rows.fill(0, old * this.stride);
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    const rowids = new Int32Array(capacity).fill(-1);
    rowids.set(this.rowids);
    for (let i = capacity - 1; i >= old; i--) this.free.push(i);
    Object.assign(this, { scales, rowids, capacity });
  }

  /** Frees the slots of `files` and puts the given rows (their current nodes) in. */
  patch(files: string[], rows: { rowid: number; file: string }[], vectors: Map<number, Quantized>): void {
    for (const f of files) {
      for (const slot of this.slotsOf.get(f) ?? []) {
        this.rowids[slot] = -1;
        this.free.push(slot);
      }
      this.slotsOf.delete(f);
    }
    for (const r of rows) {
      const v = vectors.get(r.rowid);
      if (v) this.put(r.rowid, r.file, v);
    }
  }

  /** Exact cosine search over the quantized vectors (unit length before quantization), best `limit` first. */
  nearest(q: Float32Array, limit: number): { rowid: number; sim: number }[] {
    const n = this.capacity;
    // The query as int16 (its largest component maps to ±32767): dot × row scale × `qScale` is the cosine.
    let max = 0;
    for (let d = 0; d < this.dim; d++) max = Math.max(max, Math.abs(q[d]));
    const qScale = max > 0 ? max / 32767 : 1;
    for (let d = 0; d < this.dim; d++) this.query[d] = Math.round(q[d] / qScale);
    const out = this.rows.byteOffset + this.rows.byteLength;
    this.dots(this.query.byteOffset, this.rows.byteOffset, n, this.stride, out);
    const dots = new Int32Array(this.memory.buffer, out, n);
    // The cosines overwrite the integer dots in place, each read before it is written.
    const sims = new Float32Array(this.memory.buffer, out, n);
    for (let i = 0; i < n; i++) if (this.rowids[i] >= 0) sims[i] = dots[i] * this.scales[i] * qScale;
    const idx = bestIndices(sims, n, limit, (i) => this.rowids[i] >= 0);
    return idx.map((i) => ({ rowid: this.rowids[i], sim: sims[i] }));
  }
}

/**
 * The `limit` best of `scores[0..n)` where `used(i)`, best first: a partial selection that keeps a
 * sorted list of the best so far (a full sort of 300K scores costs more than the scoring).
 */
export function bestIndices(scores: Float32Array, n: number, limit: number, used: (i: number) => boolean): number[] {
  const idx: number[] = [];
  let floor = -Infinity;
  for (let i = 0; i < n; i++) {
    if (!used(i)) continue;
    const s = scores[i];
    if (idx.length < limit) {
      idx.push(i);
      if (idx.length === limit) {
        idx.sort((a, b) => scores[b] - scores[a]);
        floor = scores[idx[idx.length - 1]];
      }
    } else if (s > floor) {
      let j = idx.length - 1;
      while (j > 0 && scores[idx[j - 1]] < s) j--;
      idx.splice(j, 0, i);
      idx.pop();
      floor = scores[idx[idx.length - 1]];
    }
  }
  if (idx.length < limit) idx.sort((a, b) => scores[b] - scores[a]);
  return idx;
}
