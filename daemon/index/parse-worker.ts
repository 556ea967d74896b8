import { parentPort } from "node:worker_threads";
import { fileWordsOf, prepareDocs, type PreparedDoc } from "./documents.js";
import { BuiltinEmbedder } from "./embed/builtin.js";
import { TrainedEmbedder } from "./embed/trained.js";
import { Extractor } from "./extract.js";
import { languageById } from "./languages/registry.js";
import type { LanguageId } from "./types.js";

const extractor = new Extractor();
let builtin: BuiltinEmbedder | undefined;
let trained: TrainedEmbedder | undefined;

/** Documents are prepared only with the embedder the build uses: the built-in or trained one, of this very version. */
function embedderFor(id: string | undefined): BuiltinEmbedder | TrainedEmbedder | undefined {
  let e: BuiltinEmbedder | TrainedEmbedder | undefined;
  if (id?.startsWith("builtin-")) e = builtin ??= new BuiltinEmbedder();
  else if (id?.startsWith("trained-")) e = trained ??= new TrainedEmbedder();
  return e?.id === id ? e : undefined;
}

parentPort!.on("message", async (msg: { id: number; path: string; language: LanguageId; source: string; embedder?: string }) => {
  try {
    const extract = await extractor.extract(msg.path, msg.source, languageById(msg.language));
    const embedder = embedderFor(msg.embedder);
    if (!embedder) return parentPort!.postMessage({ id: msg.id, extract });
    const docs: [string, PreparedDoc][] = [...prepareDocs(extract, (t) => embedder.embedOne(t))];
    parentPort!.postMessage({ id: msg.id, extract, docs, fileWords: fileWordsOf(msg.source) }, docs.map(([, d]) => d.vector.buffer as ArrayBuffer));
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: (err as Error).message });
  }
});
