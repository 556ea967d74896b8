import type { ResolvedConfig } from "../../../shared/config.js";
import { BuiltinEmbedder } from "./builtin.js";
import type { Embedder } from "./embedder.js";
import { TrainedEmbedder } from "./trained.js";

/** The embedder the configuration asks for; the neural runtime is loaded only when chosen. */
export async function createEmbedder(cfg: ResolvedConfig): Promise<Embedder> {
  if (cfg.embedder.kind === "builtin") return new BuiltinEmbedder();
  if (cfg.embedder.kind === "trained") return new TrainedEmbedder();
  const { createNeuralEmbedder } = await import("./neural.js");
  return createNeuralEmbedder({
    model: cfg.embedder.model,
    modelDir: cfg.embedder.modelDir,
    cacheDir: cfg.embedder.cacheDir,
    allowDownload: cfg.embedder.allowDownload,
  });
}

/** Both built-in: the index was made by an earlier codemem's built-in embedder, which a plain build re-embeds. */
export function isBuiltinUpgrade(builtWith: string, current: string): boolean {
  return builtWith !== current && builtWith.startsWith("builtin-") && current.startsWith("builtin-");
}
