export interface Embedder {
  /** Stable identity recorded in the index, e.g. "builtin-code-1f0c2a9e-5b3d7c01:384" (word vectors, concept groups), "trained-code-<model digest>-<word-vector digest>:512" or "hf:<model-name>:<dim>". */
  readonly id: string;
  readonly dim: number;
  /** L2-normalised vectors, one per text, same order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * A question's vector with each word (a stem) weighted by how telling it is in the project being
   * searched; embedders that cannot weight words leave this out and `embed` is used.
   */
  embedQuery?(text: string, weight: (stem: string) => number): Float32Array;
  close?(): Promise<void>;
}
