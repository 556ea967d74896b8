import { CodememError } from "../../../shared/errors.js";
import { BuiltinEmbedder, shippedFile } from "./builtin.js";
import { CodeModel } from "./code-model.js";
import type { Embedder } from "./embedder.js";

/** Share of the cosine carried by the code-search model; the built-in vector carries the rest. */
export const MODEL_SHARE = 0.25;

export const MODEL_FILE = shippedFile("code-model.bin");

/**
 * The built-in vector joined with codemem's own code-search model (scripts/train-model.py), so that
 * a cosine is (1 − MODEL_SHARE) × the built-in one + MODEL_SHARE × the model's. Offline and
 * deterministic like the built-in embedder; its id names the model by a digest of its weights.
 */
export class TrainedEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  private readonly builtin = new BuiltinEmbedder();
  private readonly model: CodeModel;

  constructor(file = MODEL_FILE) {
    if (!file) {
      throw new CodememError("EMBEDDER_LOAD_FAILED", "The trained embedder's model (daemon/index/embed/code-model.bin) is missing from this installation; reinstall codemem or run `npm run train:model`.");
    }
    this.model = CodeModel.load(file);
    this.dim = this.builtin.dim + this.model.dim;
    this.id = `trained-code-${this.model.version}-${this.builtin.id.replace(/^builtin-code-/, "").replace(/:\d+$/, "")}:${this.dim}`;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedQuery(text: string, weight: (stem: string) => number): Float32Array {
    return this.join(this.builtin.embedOne(text, weight), this.model.vector(text, "query", weight));
  }

  embedOne(text: string): Float32Array {
    return this.join(this.builtin.embedOne(text), this.model.vector(text, "code"));
  }

  private join(b: Float32Array, m: Float32Array): Float32Array {
    // A text the model knows no piece of keeps its built-in vector whole.
    const known = m.some((x) => x !== 0);
    const wb = known ? Math.sqrt(1 - MODEL_SHARE) : 1;
    const wm = known ? Math.sqrt(MODEL_SHARE) : 0;
    const v = new Float32Array(this.dim);
    for (let i = 0; i < b.length; i++) v[i] = wb * b[i];
    for (let i = 0; i < m.length; i++) v[b.length + i] = wm * m[i];
    return v;
  }
}
