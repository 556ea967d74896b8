import { createHash } from "node:crypto";
import fs from "node:fs";
import zlib from "node:zlib";
import { contentWords, stem } from "../text.js";

const MAGIC = "codemem-word-vectors-1";

/** Short digest of a shipped file's bytes: the version an embedder's id names. */
export function digest(raw: Buffer): string {
  return createHash("sha1").update(raw).digest("hex").slice(0, 8);
}

/** The start of a gzipped file inflated (its first 4 KB of compressed bytes): enough for its header line, without inflating all of it. */
export function headOf(raw: Buffer): Buffer {
  return zlib.gunzipSync(raw.subarray(0, 4096), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
}

/**
 * Trained word vectors (scripts/train-embedder.mjs): a text is the SIF-weighted sum of the
 * vectors of its word stems, normalised. Stored gzipped: a JSON header line, the words one per
 * line, then per word its SIF weight and row scale (float32) and its int8 row.
 */
export class WordVectors {
  private constructor(
    /** Short digest of the file: vectors from another training are another embedder. */
    readonly version: string,
    readonly dim: number,
    private readonly index: Map<string, number>,
    private readonly weight: Float32Array,
    /** Each word's int8 row and its scale, as stored: a row is scaled when first used (see row). */
    private readonly q: Int8Array,
    private readonly scale: Float32Array,
  ) {}

  /** Dequantized rows by word index (see row). */
  private readonly rows = new Map<number, Float32Array>();

  static load(file: string): WordVectors {
    const { version, buf, headerEnd, header } = WordVectors.read(file);
    const { dim, count } = header;
    let o = headerEnd + 1;
    const words = buf.subarray(o, o + header.wordsBytes).toString("utf8").split("\n");
    o += header.wordsBytes;
    const floats = new Float32Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + 8 * count));
    o += 8 * count;
    const q = new Int8Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + count * dim));
    return new WordVectors(version, dim, new Map(words.map((w, i) => [w, i])), floats.subarray(0, count), q, floats.subarray(count));
  }

  /** The file's version and width, its words and rows left unread into tables (what an embedder's id names). */
  static describe(file: string): { version: string; dim: number } {
    const raw = fs.readFileSync(file);
    return { version: digest(raw), dim: WordVectors.header(headOf(raw), file).dim };
  }

  private static read(file: string) {
    const raw = fs.readFileSync(file);
    const buf = zlib.gunzipSync(raw);
    return { version: digest(raw), buf, headerEnd: buf.indexOf(10), header: WordVectors.header(buf, file) };
  }

  private static header(buf: Buffer, file: string): { magic: string; dim: number; count: number; wordsBytes: number } {
    const header = JSON.parse(buf.subarray(0, buf.indexOf(10)).toString("utf8")) as { magic: string; dim: number; count: number; wordsBytes: number };
    if (header.magic !== MAGIC) throw new Error(`${file} is not a codemem word-vector file`);
    return header;
  }

  vector(text: string, weight?: (stem: string) => number): Float32Array {
    return this.vectorOf(contentWords(text), weight);
  }

  /**
   * Word `i`'s row, dequantized when first used: float32, as a dequantized table held it, so vectors
   * stay bit for bit what they were. Not all 23K rows at load: 25-40 ms of a daemon's first answer,
   * and 12 MB against 3 (a build's parse workers read most of them).
   */
  private row(i: number): Float32Array {
    let r = this.rows.get(i);
    if (!r) {
      r = new Float32Array(this.dim);
      const b = i * this.dim;
      for (let d = 0; d < this.dim; d++) r[d] = this.q[b + d] * this.scale[i];
      this.rows.set(i, r);
    }
    return r;
  }

  /** The vector of a text's content words (`contentWords`). */
  vectorOf(words: string[], weight?: (stem: string) => number): Float32Array {
    const v = new Float32Array(this.dim);
    for (const raw of words) {
      const s = stem(raw);
      const i = this.index.get(s);
      if (i === undefined) continue;
      const w = this.weight[i] * (weight ? weight(s) : 1);
      const row = this.row(i);
      for (let d = 0; d < this.dim; d++) v[d] += w * row[d];
    }
    return normalize(v);
  }
}

/** Writes trained vectors in the format `WordVectors.load` reads (int8 rows with a scale per word). */
export function writeWordVectors(file: string, words: string[], weight: Float32Array, table: Float32Array, dim: number): void {
  const count = words.length;
  const wordsBuf = Buffer.from(words.join("\n"), "utf8");
  const floats = new Float32Array(2 * count);
  const q = new Int8Array(count * dim);
  for (let i = 0; i < count; i++) {
    let max = 0;
    for (let d = 0; d < dim; d++) max = Math.max(max, Math.abs(table[i * dim + d]));
    const scale = max / 127 || 1;
    floats[i] = weight[i];
    floats[count + i] = scale;
    for (let d = 0; d < dim; d++) q[i * dim + d] = Math.round(table[i * dim + d] / scale);
  }
  const header = Buffer.from(JSON.stringify({ magic: MAGIC, dim, count, wordsBytes: wordsBuf.length }) + "\n", "utf8");
  const body = Buffer.concat([header, wordsBuf, Buffer.from(floats.buffer), Buffer.from(q.buffer)]);
  fs.writeFileSync(file, zlib.gzipSync(body, { level: 9 }));
}

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
