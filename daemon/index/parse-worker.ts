import { parentPort } from "node:worker_threads";
import { fileWordsOf, prepareDocs, type PreparedDoc } from "./documents.js";
import { BuiltinEmbedder } from "./embed/builtin.js";
import { TrainedEmbedder } from "./embed/trained.js";
import { Extractor, tokenCounter } from "./extract.js";
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

/** A file to parse; with `light`, its tokens and vectors are left for the build's fill (after it is answerable). */
interface ParseMsg {
  id: number;
  path: string;
  language: LanguageId;
  source: string;
  embedder?: string;
  light?: boolean;
}

/** A build's fill: a file's tokens counted (when its source is given) and its nodes' texts embedded (with the worker's embedder). */
interface FillMsg {
  id: number;
  fill: true;
  source?: string;
  texts: string[];
  embedder?: string;
}

parentPort!.on("message", async (msg: ParseMsg | FillMsg) => {
  try {
    if ("fill" in msg) {
      const embedder = embedderFor(msg.embedder);
      const vectors = embedder ? msg.texts.map((t) => embedder.embedOne(t)) : undefined;
      const tokens = msg.source === undefined ? undefined : (await tokenCounter()).countTokens(msg.source);
      return parentPort!.postMessage({ id: msg.id, filled: { tokens, vectors } }, (vectors ?? []).map((v) => v.buffer as ArrayBuffer));
    }
    const extract = await extractor.extract(msg.path, msg.source, languageById(msg.language), { countTokens: !msg.light });
    const embedder = embedderFor(msg.embedder);
    if (!embedder) return parentPort!.postMessage({ id: msg.id, extract });
    const docs: [string, PreparedDoc][] = [...prepareDocs(extract, msg.light ? undefined : (t) => embedder.embedOne(t))];
    parentPort!.postMessage({ id: msg.id, extract, docs, fileWords: fileWordsOf(msg.source) }, docs.flatMap(([, d]) => (d.vector ? [d.vector.buffer as ArrayBuffer] : [])));
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: (err as Error).message });
  }
});
