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
    return this.vectorOf(contentWords(text), weight);
  }

  /** The vector of a text's content words (`contentWords`). */
  vectorOf(words: string[], weight?: (stem: string) => number): Float32Array {
    // The caches are cleared between vectors only: a feature's id stays its own within one.
    if (FEATURES.size >= FEATURES_CACHE_SIZE) {
      FEATURES.clear();
      FEATURE_IDS.clear();
    }
    if (++generation === 0x7fffffff) {
      stampOf.fill(0);
      generation = 1;
    }
    // Features by first appearance: their hash and summed weight (a feature's place in them is
    // atOf[id] while stampOf[id] is this vector's generation).
    const hashes: number[] = [];
    const sums: number[] = [];
    for (const raw of words) {
      const f = featuresOf(raw);
      const k = weight ? weight(f.stem) : 1;
      for (let i = 0; i < f.ids.length; i++) {
        const w = (f.factors[i] * k) / f.divisors[i];
        const id = f.ids[i];
        if (stampOf[id] === generation) sums[atOf[id]] += w;
        else {
          stampOf[id] = generation;
          atOf[id] = hashes.length;
          hashes.push(f.hashes[i]);
          sums.push(w);
        }
      }
    }
    const v = new Float32Array(this.dim);
    for (let i = 0; i < hashes.length; i++) {
      const h = hashes[i];
      const c = sums[i];
      const tf = c <= 1 ? c : 1 + Math.log(c); // sub-linear: a word repeated ten times is not ten times the topic
      v[h % this.dim] += (h & 0x80000000 ? -1 : 1) * tf;
    }
    return normalize(v);
  }
}

/** A word's features (by id, see FEATURE_IDS): a feature's weight is `factor × k / divisor` for the word's weight k. */
interface WordFeatures {
  stem: string;
  ids: number[];
  hashes: number[];
  factors: number[];
  divisors: number[];
}

/** Features by word: the same words recur in every definition of a tree. Cleared when full. */
const FEATURES = new Map<string, WordFeatures>();
const FEATURES_CACHE_SIZE = 50_000;
/**
 * Feature keys (`w:parse`, `g:^pa`) numbered while their words are cached: a vector sums its
 * features in arrays indexed by number instead of a map of its keys (the Go tree's documents took
 * 0.9 s of each parse worker in that map).
 */
const FEATURE_IDS = new Map<string, number>();
let stampOf = new Int32Array(1 << 16);
let atOf = new Int32Array(1 << 16);
let generation = 0;

function featureId(key: string): number {
  let id = FEATURE_IDS.get(key);
  if (id === undefined) {
    id = FEATURE_IDS.size;
    FEATURE_IDS.set(key, id);
    if (id >= stampOf.length) {
      // Grown within a vector: the places of the features it has summed so far are kept.
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      stampOf = grow(stampOf);
      atOf = grow(atOf);
    }
  }
  return id;
}

function featuresOf(raw: string): WordFeatures {
  const cached = FEATURES.get(raw);
  if (cached) return cached;
  const w = stem(raw);
  const made: WordFeatures = { stem: w, ids: [], hashes: [], factors: [], divisors: [] };
  const add = (key: string, factor: number, divisor: number) => {
    made.ids.push(featureId(key));
    made.hashes.push(fnv1a(key));
    made.factors.push(factor);
    made.divisors.push(divisor);
  };
  add(`w:${w}`, WORD_WEIGHT, 1);
  const cs = conceptsOf(w) ?? conceptsOf(raw);
  if (cs) for (const c of cs) add(`c:${c}`, CONCEPT_WEIGHT, 1);
  if (w.length >= 4) {
    const padded = `^${w}$`;
    const n = padded.length - 2;
    for (let i = 0; i < n; i++) add(`g:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT, Math.sqrt(n));
  }
  FEATURES.set(raw, made);
  return made;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
