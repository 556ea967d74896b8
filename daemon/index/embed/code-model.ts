import fs from "node:fs";
import zlib from "node:zlib";
import { CodememError } from "../../../shared/errors.js";
import { contentWords, stem } from "../text.js";
import { digest, headOf, normalize } from "./word-vectors.js";

const MAGIC = "codemem-code-model-1";

/** The two sides of the bi-encoder: a question, or the text of a node. */
export type Side = "query" | "code";

/** One side's residual perceptron: out = x + w2 · relu(w1 · x + b1) + b2. */
type Mlp = { w1: Float32Array; b1: Float32Array; w2: Float32Array; b2: Float32Array };

/**
 * codemem's own code-search model (scripts/train-model.py): a bi-encoder over identifier pieces.
 * A text's word stems and its pairs of adjacent stems are looked up in one int8 table and summed
 * with a learned weight per piece (times the question's term weights), normalised, passed through
 * the residual perceptron of its side and normalised again. Stored gzipped: a JSON header line,
 * the pieces one per line, float32 piece weights and row scales, int8 rows, then per side
 * w1 (hidden × dim), b1, w2 (dim × hidden), b2 in float32.
 */
export class CodeModel {
  private constructor(
    /** Short digest of the file: another training is another model. */
    readonly version: string,
    readonly dim: number,
    private readonly hidden: number,
    private readonly index: Map<string, number>,
    private readonly gate: Float32Array,
    private readonly scale: Float32Array,
    private readonly rows: Int8Array,
    private readonly mlp: Record<Side, Mlp>,
  ) {}

  static load(file: string): CodeModel {
    const { version, buf, headerEnd, header } = CodeModel.read(file);
    const { dim, hidden, count } = header;
    const expected = headerEnd + 1 + header.wordsBytes + 8 * count + count * dim + 4 * 2 * (2 * dim * hidden + hidden + dim);
    if (header.magic !== MAGIC || buf.length !== expected) {
      throw new CodememError("EMBEDDER_LOAD_FAILED", `${file} is not a codemem code-search model (${MAGIC}).`);
    }
    let o = headerEnd + 1;
    const pieces = buf.subarray(o, o + header.wordsBytes).toString("utf8").split("\n");
    o += header.wordsBytes;
    const floats = (n: number) => {
      const a = new Float32Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + 4 * n));
      o += 4 * n;
      return a;
    };
    const gate = floats(count);
    const scale = floats(count);
    const rows = new Int8Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + count * dim));
    o += count * dim;
    const side = (): Mlp => ({ w1: floats(hidden * dim), b1: floats(hidden), w2: floats(dim * hidden), b2: floats(dim) });
    const query = side();
    const code = side();
    return new CodeModel(version, dim, hidden, new Map(pieces.map((p, i) => [p, i])), gate, scale, rows, { query, code });
  }

  /** The file's version and width, its tables left unread (what an embedder's id names). */
  static describe(file: string): { version: string; dim: number } {
    const { version, header } = CodeModel.read(file, true);
    return { version, dim: header.dim };
  }

  /** The file's bytes inflated (only their start with `head`: its header line). */
  private static read(file: string, head = false) {
    let raw: Buffer, buf: Buffer;
    try {
      raw = fs.readFileSync(file);
      buf = head ? headOf(raw) : zlib.gunzipSync(raw);
    } catch (err) {
      throw new CodememError("EMBEDDER_LOAD_FAILED", `The code-search model ${file} cannot be read: ${(err as Error).message}`);
    }
    return { version: digest(raw), buf, headerEnd: buf.indexOf(10), header: CodeModel.header(buf) };
  }

  private static header(buf: Buffer): { magic?: string; dim: number; hidden: number; count: number; wordsBytes: number } {
    try {
      return JSON.parse(buf.subarray(0, buf.indexOf(10)).toString("utf8"));
    } catch {
      return { dim: 0, hidden: 0, count: 0, wordsBytes: 0 };
    }
  }

  /** The unit vector of a text on one side; `weight` (questions) scales each stem's pieces. */
  vector(text: string, side: Side, weight?: (stem: string) => number): Float32Array {
    const stems = contentWords(text).map(stem);
    const outer = stems.map((s) => (weight ? weight(s) : 1));
    const p = new Float32Array(this.dim);
    const add = (piece: string, w: number) => {
      const i = this.index.get(piece);
      if (i === undefined) return;
      const k = w * this.gate[i] * this.scale[i];
      const b = i * this.dim;
      for (let d = 0; d < this.dim; d++) p[d] += k * this.rows[b + d];
    };
    // The code side reads at most the pieces the model was trained on (160 words).
    const n = side === "code" ? Math.min(stems.length, 160) : stems.length;
    for (let i = 0; i < n; i++) add(stems[i], outer[i]);
    for (let i = 0; i + 1 < n; i++) if (stems[i] !== stems[i + 1]) add(`${stems[i]} ${stems[i + 1]}`, 0.5 * (outer[i] + outer[i + 1]));
    if (!p.some((x) => x !== 0)) return p;
    normalize(p);
    const { w1, b1, w2, b2 } = this.mlp[side];
    const h = new Float32Array(this.hidden);
    for (let j = 0; j < this.hidden; j++) {
      let s = b1[j];
      const r = j * this.dim;
      for (let d = 0; d < this.dim; d++) s += w1[r + d] * p[d];
      h[j] = s > 0 ? s : 0;
    }
    const out = new Float32Array(this.dim);
    for (let d = 0; d < this.dim; d++) {
      let s = p[d] + b2[d];
      const r = d * this.hidden;
      for (let j = 0; j < this.hidden; j++) s += w2[r + j] * h[j];
      out[d] = s;
    }
    return normalize(out);
  }
}
