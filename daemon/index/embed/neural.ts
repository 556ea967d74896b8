/**
 * Neural embedder: a sentence-transformer style model (BERT-like ONNX export, e.g.
 * `Xenova/all-MiniLM-L6-v2`) run through `@huggingface/transformers` on
 * onnxruntime-node, mean-pooled over the attention mask and L2-normalised.
 *
 * Model resolution (first folder that holds a complete model wins):
 *   - `model` is an absolute (or ./relative) path  -> that folder only;
 *   - otherwise a hub-style name                   -> `<modelDir>/<model>`, then `<cacheDir>/<model>`
 *     (cacheDir defaults to the library's cache, which is also where downloads land).
 * Nothing is fetched unless `allowDownload` is true; with it false the library is
 * configured with `env.allowRemoteModels = false` and `local_files_only`, and the model
 * is always loaded by absolute folder path, so no code path can reach the network.
 */
import { access } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { CodememError } from "../../../shared/errors.js";
import type { Embedder } from "./embedder.js";

export interface NeuralEmbedderOptions {
  /** Hub-style name ("Xenova/all-MiniLM-L6-v2") or a path to a model folder. */
  model: string;
  /** Folder laid out like the hub: `<modelDir>/<model>/config.json`, `tokenizer.json`, `onnx/model.onnx`. */
  modelDir?: string;
  /** Transformers.js file cache (downloads land in `<cacheDir>/<model>/…`). Default: the library's. */
  cacheDir?: string;
  allowDownload: boolean;
  /** Texts per forward pass. Default 32. */
  batchSize?: number;
  /** Truncation length in tokens (including [CLS]/[SEP]). Default 256. */
  maxTokens?: number;
}

/** Files a folder must contain to be loadable as a fp32 feature-extraction model. */
const REQUIRED_FILES = ["config.json", "tokenizer.json", "onnx/model.onnx"] as const;

/** Characters kept per token of budget before tokenising (bounds tokeniser work on huge inputs). */
const CHARS_PER_TOKEN_BUDGET = 32;

export class EmbedderModelMissingError extends CodememError {
  constructor(message: string, details?: Record<string, unknown>) {
    super("EMBEDDER_MODEL_MISSING", message, details);
    this.name = "EmbedderModelMissingError";
  }
}

export class EmbedderLoadError extends CodememError {
  constructor(message: string, details?: Record<string, unknown>, cause?: unknown) {
    super("EMBEDDER_LOAD_FAILED", message, details);
    this.name = "EmbedderLoadError";
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

// Minimal structural types for the parts of transformers.js we use (its own generics are heavy).
interface TensorLike {
  readonly dims: number[];
  readonly data: ArrayLike<number | bigint>;
  dispose?(): void;
}
interface TokenizerLike {
  (texts: string[], opts: { padding: boolean; truncation: boolean; max_length: number }): Record<string, TensorLike>;
}
interface FeatureExtractorLike {
  tokenizer: TokenizerLike;
  model: (inputs: Record<string, TensorLike>) => Promise<Record<string, TensorLike | undefined>>;
  dispose(): Promise<void>;
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}

async function missingFiles(folder: string): Promise<string[]> {
  const missing: string[] = [];
  for (const f of REQUIRED_FILES) if (!(await exists(join(folder, f)))) missing.push(f);
  return missing;
}

function looksLikePath(model: string): boolean {
  return isAbsolute(model) || model.startsWith("./") || model.startsWith("../") || model.startsWith(".\\");
}

function describeCause(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

export async function createNeuralEmbedder(opts: NeuralEmbedderOptions): Promise<Embedder> {
  const model = opts.model?.trim();
  if (!model) throw new EmbedderLoadError("Neural embedder: no model name given ([embedder] model in codemem.toml).");
  const batchSize = Math.max(1, Math.floor(opts.batchSize ?? 32));
  const maxTokens = Math.max(2, Math.floor(opts.maxTokens ?? 256));

  let tf: typeof import("@huggingface/transformers");
  try {
    tf = await import("@huggingface/transformers");
  } catch (err) {
    throw new EmbedderLoadError(
      `Neural embedder for model "${model}": cannot load @huggingface/transformers (${describeCause(err)}). ` +
        `Reinstall dependencies (npm install) or switch to [embedder] kind = "builtin".`,
      { model },
      err,
    );
  }
  const { env } = tf;

  // Network policy: remote loading only when explicitly allowed; local files always.
  env.allowRemoteModels = opts.allowDownload;
  env.allowLocalModels = true;
  if (opts.modelDir) env.localModelPath = resolve(opts.modelDir);
  const cacheDir = opts.cacheDir ? resolve(opts.cacheDir) : (env.cacheDir ?? undefined);

  // ---- resolve the model folder -------------------------------------------------------------
  const searched: string[] = [];
  const incomplete: Array<{ folder: string; missing: string[] }> = [];
  let folder: string | undefined;
  const candidates: string[] = [];
  if (looksLikePath(model)) {
    candidates.push(resolve(model));
  } else {
    if (model.includes("..") || model.startsWith("/")) {
      throw new EmbedderLoadError(`Neural embedder: invalid model name "${model}".`, { model });
    }
    if (opts.modelDir) candidates.push(join(resolve(opts.modelDir), ...model.split("/")));
    if (cacheDir) candidates.push(join(cacheDir, ...model.split("/")));
  }
  for (const c of candidates) {
    searched.push(c);
    if (!(await exists(c))) continue;
    const missing = await missingFiles(c);
    if (missing.length === 0) {
      folder = c;
      break;
    }
    incomplete.push({ folder: c, missing });
  }

  const canDownload = opts.allowDownload && !looksLikePath(model);
  if (!folder && !canDownload) {
    const where = searched.length > 0 ? searched.map((s) => `"${s}"`).join(", ") : "(no folder configured)";
    const partial = incomplete.length
      ? ` Incomplete: ${incomplete.map((i) => `${i.folder} lacks ${i.missing.join(", ")}`).join("; ")}.`
      : "";
    const files = "config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx";
    const message = looksLikePath(model)
      ? `Embedding model folder "${resolve(model)}" not found or incomplete.${partial} ` +
        `Put the model folder (${files}) there, or set [embedder] model in codemem.toml to a hub name.`
      : `Embedding model "${model}" not found locally (searched ${where}) and download is not allowed.${partial} ` +
        `Put the model folder (${files}) at "${candidates[0] ?? join("<model_dir>", model)}"` +
        (opts.modelDir ? "" : " (or point [embedder] model_dir in codemem.toml at a folder holding it)") +
        `, or allow download with [embedder] allow_download = true in codemem.toml.`;
    throw new EmbedderModelMissingError(
      message,
      { model, searched, incomplete },
    );
  }

  // ---- load ----------------------------------------------------------------------------------
  let extractor: FeatureExtractorLike;
  try {
    const loaded = await tf.pipeline("feature-extraction", folder ?? model, {
      local_files_only: folder !== undefined || !opts.allowDownload,
      ...(cacheDir ? { cache_dir: cacheDir } : {}),
      device: "cpu",
      dtype: "fp32",
    });
    extractor = loaded as unknown as FeatureExtractorLike;
  } catch (err) {
    throw new EmbedderLoadError(
      `Neural embedder: failed to load model "${model}"${folder ? ` from "${folder}"` : ""}: ${describeCause(err)}`,
      { model, folder },
      err,
    );
  }

  // ---- inference -----------------------------------------------------------------------------
  const charBudget = maxTokens * CHARS_PER_TOKEN_BUDGET;

  async function embedBatch(texts: string[]): Promise<Float32Array[]> {
    const clipped = texts.map((t) => (t.length > charBudget ? t.slice(0, charBudget) : t));
    const inputs = extractor.tokenizer(clipped, { padding: true, truncation: true, max_length: maxTokens });
    const outputs = await extractor.model(inputs);
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings ?? outputs.logits;
    const mask = inputs.attention_mask;
    if (!hidden || !mask) throw new Error("model produced no last_hidden_state (or tokenizer no attention_mask)");
    const [b, s, h] = hidden.dims;
    if (hidden.dims.length !== 3 || b !== texts.length) {
      throw new Error(`unexpected hidden-state shape [${hidden.dims.join(", ")}] for ${texts.length} texts`);
    }
    const data = hidden.data as ArrayLike<number>;
    const m = mask.data;
    const result: Float32Array[] = [];
    const acc = new Float64Array(h);
    for (let i = 0; i < b; i++) {
      acc.fill(0);
      let count = 0;
      for (let j = 0; j < s; j++) {
        if (Number(m[i * s + j]) === 0) continue;
        count++;
        const base = (i * s + j) * h;
        for (let k = 0; k < h; k++) acc[k] += data[base + k];
      }
      const out = new Float32Array(h);
      let norm = 0;
      for (let k = 0; k < h; k++) {
        const v = count > 0 ? acc[k] / count : 0;
        acc[k] = v;
        norm += v * v;
      }
      norm = Math.sqrt(norm);
      if (norm > 0) for (let k = 0; k < h; k++) out[k] = acc[k] / norm;
      result.push(out);
    }
    hidden.dispose?.();
    return result;
  }

  // One forward pass at a time: the ORT session already uses all cores.
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  function enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  }

  async function embed(texts: string[]): Promise<Float32Array[]> {
    if (closed) throw new EmbedderLoadError(`Neural embedder for "${model}" is closed.`, { model });
    if (texts.length === 0) return [];
    return enqueue(async () => {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        out.push(...(await embedBatch(texts.slice(i, i + batchSize))));
      }
      return out;
    });
  }

  let dim: number;
  try {
    const [probe] = await embed(["warm-up"]);
    dim = probe.length;
    if (!dim) throw new Error("model produced an empty embedding");
  } catch (err) {
    await extractor.dispose().catch(() => undefined);
    throw new EmbedderLoadError(`Neural embedder: model "${model}" failed its warm-up run: ${describeCause(err)}`, { model }, err);
  }

  return {
    id: `hf:${model}:${dim}`,
    dim,
    embed,
    async close() {
      if (closed) return;
      closed = true;
      await queue;
      await extractor.dispose();
    },
  };
}
