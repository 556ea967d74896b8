import type { CatalogNode } from "../store/types.js";

/**
 * What the retriever learned about one candidate while ranking a question: the evidence each list
 * and rule gave it, every part relative to the question (scores normalised to [0, 1], bonuses as
 * shares of the best score). The hand ranking and the learned ranker read the same record.
 */
export interface Signals {
  node: CatalogNode;
  /** Node BM25, normalised within the question. */
  lexical: number;
  /** Cosine to the question, normalised against the last vector candidate. */
  vector: number;
  /** Whole-file BM25 of the node's file, normalised. */
  file: number;
  /** Strongest mention of the node by identifier (0..1). */
  name: number;
  /** Strongest mention of the node's file by path or traceback frame (0..1). */
  path: number;
  /** Graph bonus from the strongest neighbouring seed, as a share of the best fused score. */
  graph: number;
  /** An undocumented override lifted to its documented base's score. */
  override: boolean;
  /** In a test file. */
  test: boolean;
  /** The question asks for tests. */
  seeksTests: boolean;
  /** Test code named by identifier (exempt from the test discount). */
  named: boolean;
  /** Only the whole-file list found it (the file's module node). */
  fileOnly: boolean;
  /** The hand ranking's final score, as a share of its best. */
  hand: number;
  /**
   * The sessions' synapse recall and focus, as shares of the best score: not a feature (no training
   * question has sessions), added to the model's score as the hand rules add them.
   */
  boost: number;
}

/**
 * The features of a candidate, by name, in a fixed order. Training (scripts/train-ranker.mjs) and
 * serving (ranker.ts) both call `featureVector`, so they cannot drift; a model names the features it
 * was trained on, and a feature added here is read by a model only after a retrain.
 */
export const FEATURES = [
  "lexical",
  "vector",
  "file",
  "lexical_x_vector",
  "name",
  "path",
  "graph",
  "override",
  "test_unasked",
  "test_asked",
  "module",
  "type_like",
  "documented",
  "size",
  "file_only",
  "hand",
] as const;
export type FeatureName = (typeof FEATURES)[number];

/** Node types that declare a type (their members are separate nodes). */
const TYPE_LIKE = new Set(["class", "interface", "struct", "trait", "enum", "protocol", "type", "record", "object", "module_type", "impl"]);

/** The candidate's feature values, in FEATURES order. */
export function featureVector(s: Signals): number[] {
  const n = s.node;
  const lines = Math.max(1, n.line_end - n.line_start + 1);
  const v: Record<FeatureName, number> = {
    lexical: s.lexical,
    vector: s.vector,
    file: s.file,
    // A linear model cannot see that both lists agree; their product can.
    lexical_x_vector: s.lexical * s.vector,
    name: s.name,
    path: s.path,
    graph: s.graph,
    override: s.override ? 1 : 0,
    test_unasked: s.test && !s.seeksTests && !s.named ? 1 : 0,
    test_asked: s.test && s.seeksTests ? 1 : 0,
    module: n.type === "module" ? 1 : 0,
    type_like: TYPE_LIKE.has(n.type) ? 1 : 0,
    documented: n.docstring.trim() ? 1 : 0,
    // ln(lines) / ln(1000): 1 line → 0, 1000 lines → 1.
    size: Math.min(1.5, Math.log(lines) / Math.log(1000)),
    file_only: s.fileOnly ? 1 : 0,
    hand: s.hand,
  };
  return FEATURES.map((f) => v[f]);
}
