import { CodememError } from "../../../shared/errors.js";
import { BuiltinEmbedder, builtinEmbedderId, shippedFile } from "./builtin.js";
import { CodeModel } from "./code-model.js";
import type { Embedder } from "./embedder.js";

/** Share of the cosine carried by the code-search model; the built-in vector carries the rest. */
export const MODEL_SHARE = 0.25;

export const MODEL_FILE = shippedFile("code-model.bin");

function modelFile(file: string | undefined): string {
  if (!file) {
    throw new CodememError("EMBEDDER_LOAD_FAILED", "The trained embedder's model (daemon/index/embed/code-model.bin) is missing from this installation; reinstall codemem or run `npm run train:model`.");
  }
  return file;
}

/** The id names the model by its file's digest, then the built-in embedder's words and concepts, then the joined width. */
function trainedId(modelVersion: string, modelDim: number, builtin: string): string {
  const [, words, builtinDim] = /^builtin-code-(.*):(\d+)$/s.exec(builtin)!;
  return `trained-code-${modelVersion}-${words}:${Number(builtinDim) + modelDim}`;
}

/** The trained embedder's id read from its files' digests and widths alone (a parse worker that makes no vectors: 1.3 s and 10 MB of tables per worker). */
export function trainedEmbedderId(file = MODEL_FILE): string {
  const { version, dim } = CodeModel.describe(modelFile(file));
  return trainedId(version, dim, builtinEmbedderId());
}

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
    this.model = CodeModel.load(modelFile(file));
    this.dim = this.builtin.dim + this.model.dim;
    this.id = trainedId(this.model.version, this.model.dim, this.builtin.id);
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
