import { contentWords, stem } from "../text.js";
import { conceptsOf } from "./concepts.js";
import { normalize } from "./word-vectors.js";

const WORD_WEIGHT = 1.0;
const CONCEPT_WEIGHT = 0.6;
const TRIGRAM_WEIGHT = 0.35; // spread over a word's trigrams: fuzzy matches (parser ~ parse) without drowning words

/**
 * Hashed lexical features of a text: word stems, concept ids (synonym groups) and character
 * trigrams, signed-hashed into `dim` buckets with sub-linear term frequency, L2-normalised.
 */
export class HashFeatures {
  constructor(readonly dim: number) {}

  /** `weight` scales every feature of a word (query-side term weighting); 1 when absent. */
  vector(text: string, weight?: (stem: string) => number): Float32Array {
    const counts = new Map<string, number>();
    const add = (f: string, w: number) => counts.set(f, (counts.get(f) ?? 0) + w);
    for (const raw of contentWords(text)) {
      const w = stem(raw);
      const k = weight ? weight(w) : 1;
      add(`w:${w}`, WORD_WEIGHT * k);
      const cs = conceptsOf(w) ?? conceptsOf(raw);
      if (cs) for (const c of cs) add(`c:${c}`, CONCEPT_WEIGHT * k);
      if (w.length >= 4) {
        const padded = `^${w}$`;
        const n = padded.length - 2;
        for (let i = 0; i < n; i++) add(`g:${padded.slice(i, i + 3)}`, (TRIGRAM_WEIGHT * k) / Math.sqrt(n));
      }
    }
    const v = new Float32Array(this.dim);
    for (const [f, c] of counts) {
      const h = fnv1a(f);
      const tf = c <= 1 ? c : 1 + Math.log(c); // sub-linear: a word repeated ten times is not ten times the topic
      v[h % this.dim] += (h & 0x80000000 ? -1 : 1) * tf;
    }
    return normalize(v);
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
