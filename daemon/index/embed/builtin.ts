import { contentWords, stem } from "../text.js";
import { conceptsOf } from "./concepts.js";
import type { Embedder } from "./embedder.js";

const DIM = 384;
const WORD_WEIGHT = 1.0;
const CONCEPT_WEIGHT = 0.6;
const TRIGRAM_WEIGHT = 0.35; // spread over a word's trigrams: fuzzy matches (parser ~ parse) without drowning words

/**
 * The default embedder: deterministic, code-aware, offline. A text becomes a bag of word stems,
 * concept ids (synonym groups) and character trigrams, each signed-hashed into DIM buckets with
 * sub-linear term frequency, then L2-normalised.
 */
export class BuiltinEmbedder implements Embedder {
  readonly id = `builtin-hash-v1:${DIM}`;
  readonly dim = DIM;

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedOne(text: string): Float32Array {
    const counts = new Map<string, number>();
    const add = (f: string, w: number) => counts.set(f, (counts.get(f) ?? 0) + w);
    for (const raw of contentWords(text)) {
      const w = stem(raw);
      add(`w:${w}`, WORD_WEIGHT);
      const cs = conceptsOf(w) ?? conceptsOf(raw);
      if (cs) for (const c of cs) add(`c:${c}`, CONCEPT_WEIGHT);
      if (w.length >= 4) {
        const padded = `^${w}$`;
        const n = padded.length - 2;
        for (let i = 0; i < n; i++) add(`g:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT / Math.sqrt(n));
      }
    }
    const v = new Float32Array(DIM);
    for (const [f, c] of counts) {
      const h = fnv1a(f);
      const tf = c <= 1 ? c : 1 + Math.log(c); // sub-linear: a word repeated ten times is not ten times the topic
      v[h % DIM] += (h & 0x80000000 ? -1 : 1) * tf;
    }
    let norm = 0;
    for (let i = 0; i < DIM; i++) norm += v[i] * v[i];
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < DIM; i++) v[i] /= norm;
    return v;
  }
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
