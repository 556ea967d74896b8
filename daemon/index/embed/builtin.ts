import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CodememError } from "../../../shared/errors.js";
import { contentWords } from "../text.js";
import type { Embedder } from "./embedder.js";
import { CONCEPTS_VERSION } from "./concepts.js";
import { HashFeatures } from "./hash-features.js";
import { WordVectors } from "./word-vectors.js";

const HASH_DIM = 256;
/** Share of the cosine carried by the trained word vectors; the hashed features carry the rest. */
const LEARNED_SHARE = 0.6;

const here = path.dirname(fileURLToPath(import.meta.url));

/** A data file shipped beside the embedders; tsc does not copy them, so from dist/ it is read in the source tree. */
export function shippedFile(name: string): string | undefined {
  return [path.join(here, name), path.resolve(here, "../../../../daemon/index/embed", name)].find((f) => fs.existsSync(f));
}

const VECTORS_FILE = shippedFile("code-words.bin");

function vectorsFile(): string {
  if (!VECTORS_FILE) {
    throw new CodememError("EMBEDDER_LOAD_FAILED", "The built-in embedder's word vectors (daemon/index/embed/code-words.bin) are missing from this installation; reinstall codemem.");
  }
  return VECTORS_FILE;
}

/**
 * The id names everything the vectors depend on: an index built under other word vectors or
 * concept groups is re-embedded by the next build (isBuiltinUpgrade).
 */
function builtinId(version: string, wordDim: number): string {
  return `builtin-code-${version}-${CONCEPTS_VERSION}:${HASH_DIM + wordDim}`;
}

/** The built-in embedder's id read from its file's digest and width alone: a parse worker that makes no vectors checks a build's embedder without loading them (137 ms and a word table per worker). */
export function builtinEmbedderId(): string {
  const { version, dim } = WordVectors.describe(vectorsFile());
  return builtinId(version, dim);
}

/**
 * The default embedder: deterministic and offline. A text's vector joins two parts, so that its
 * cosine is a weighted sum of two similarities: hashed lexical features (word stems, synonym
 * groups, character trigrams) and word vectors trained on documented code from other projects
 * (scripts/train-embedder.mjs), which bring "discard" near `skip` and "serialize" near `marshal`.
 */
export class BuiltinEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  private readonly hash = new HashFeatures(HASH_DIM);
  private readonly words: WordVectors;

  constructor() {
    this.words = WordVectors.load(vectorsFile());
    this.dim = HASH_DIM + this.words.dim;
    this.id = builtinId(this.words.version, this.words.dim);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedQuery(text: string, weight: (stem: string) => number): Float32Array {
    return this.embedOne(text, weight);
  }

  embedOne(text: string, weight?: (stem: string) => number): Float32Array {
    const words = contentWords(text);
    const h = this.hash.vectorOf(words, weight);
    const w = this.words.vectorOf(words, weight);
    // A text without a known word keeps its lexical part whole.
    const known = w.some((x) => x !== 0);
    const a = known ? Math.sqrt(1 - LEARNED_SHARE) : 1;
    const b = known ? Math.sqrt(LEARNED_SHARE) : 0;
    const v = new Float32Array(this.dim);
    for (let i = 0; i < HASH_DIM; i++) v[i] = a * h[i];
    for (let i = 0; i < this.words.dim; i++) v[HASH_DIM + i] = b * w[i];
    return v;
  }
}
