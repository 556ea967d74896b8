import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CodememError } from "../../shared/errors.js";
import { FEATURES, type FeatureName } from "./features.js";

/** How answers are ranked: the hand rules of retriever.ts, or the learned model shipped beside this file. */
export type RankerKind = "hand" | "learned";

/** The identity an answer reports when the hand rules ranked it. */
export const HAND_RANKER_ID = "hand-rules";

/** The model file's format tag: a reader of another format refuses the file. */
export const RANKER_FORMAT = "codemem-ranker/1";

const here = path.dirname(fileURLToPath(import.meta.url));
/** tsc does not copy JSON: from dist/ the model is read in the source tree. */
export const SHIPPED_MODEL = [path.join(here, "ranker-model.json"), path.resolve(here, "../../../daemon/retrieve/ranker-model.json")].find((f) => fs.existsSync(f)) ?? path.join(here, "ranker-model.json");

/** A linear model over standardised features (scripts/train-ranker.mjs writes it). */
export interface RankerModel {
  format: string;
  family: string;
  features: string[];
  mean: number[];
  scale: number[];
  weights: number[];
  bias: number;
  trained?: Record<string, unknown>;
}

/**
 * A loaded model: scores a candidate's feature vector (features.ts order) in (0, 1). `id` is the
 * family and the first 12 hex digits of the file's SHA-256, so an answer can be traced to its model.
 */
export class LearnedRanker {
  private constructor(
    readonly id: string,
    private readonly w: Float64Array,
    private readonly mean: Float64Array,
    private readonly scale: Float64Array,
    private readonly bias: number,
  ) {}

  /** Reads and checks a model file; a missing or malformed one is RANKER_MODEL_INVALID. */
  static load(file: string = SHIPPED_MODEL): LearnedRanker {
    let text: string;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (err) {
      throw invalid(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    let m: RankerModel;
    try {
      m = JSON.parse(text) as RankerModel;
    } catch {
      throw invalid(file, "is not JSON");
    }
    check(file, m);
    // Features the model was not trained on weigh 0; a retrain gives them a weight.
    const w = new Float64Array(FEATURES.length);
    const mean = new Float64Array(FEATURES.length);
    const scale = new Float64Array(FEATURES.length).fill(1);
    m.features.forEach((f, i) => {
      const j = FEATURES.indexOf(f as FeatureName);
      w[j] = m.weights[i];
      mean[j] = m.mean[i];
      scale[j] = m.scale[i];
    });
    const id = `${m.family}-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;
    return new LearnedRanker(id, w, mean, scale, m.bias);
  }

  /** The model's probability that the candidate is in a gold file. */
  score(x: number[]): number {
    let z = this.bias;
    for (let i = 0; i < x.length; i++) z += (this.w[i] * (x[i] - this.mean[i])) / this.scale[i];
    return 1 / (1 + Math.exp(-z));
  }
}

function check(file: string, m: RankerModel): void {
  if (typeof m !== "object" || m === null || m.format !== RANKER_FORMAT) throw invalid(file, `is not a ${RANKER_FORMAT} model`);
  const n = Array.isArray(m.features) ? m.features.length : -1;
  const numbers = (a: unknown) => Array.isArray(a) && a.length === n && a.every((x) => typeof x === "number" && Number.isFinite(x));
  if (n < 1 || !numbers(m.weights) || !numbers(m.mean) || !numbers(m.scale) || !Number.isFinite(m.bias) || typeof m.family !== "string") {
    throw invalid(file, "lacks features, weights, mean, scale or bias of equal lengths");
  }
  if (m.scale.some((s) => s <= 0)) throw invalid(file, "has a scale ≤ 0");
  const unknown = m.features.filter((f) => !(FEATURES as readonly string[]).includes(f));
  if (unknown.length) throw invalid(file, `names features this codemem does not compute (${unknown.join(", ")})`);
}

function invalid(file: string, what: string): CodememError {
  return new CodememError("RANKER_MODEL_INVALID", `The learned ranker's model ${file} ${what}; reinstall codemem, retrain it with \`npm run train:ranker\`, or set [query] ranker = "hand" in codemem.toml.`, { file });
}
