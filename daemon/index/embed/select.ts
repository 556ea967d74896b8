import type { ResolvedConfig } from "../../../shared/config.js";
import { BuiltinEmbedder } from "./builtin.js";
import type { Embedder } from "./embedder.js";

/** The embedder the configuration asks for; the neural runtime is loaded only when chosen. */
export async function createEmbedder(cfg: ResolvedConfig): Promise<Embedder> {
  if (cfg.embedder.kind === "builtin") return new BuiltinEmbedder();
  const { createNeuralEmbedder } = await import("./neural.js");
  return createNeuralEmbedder({
    model: cfg.embedder.model,
    modelDir: cfg.embedder.modelDir,
    cacheDir: cfg.embedder.cacheDir,
    allowDownload: cfg.embedder.allowDownload,
  });
}
