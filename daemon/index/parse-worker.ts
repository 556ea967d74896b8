import { parentPort } from "node:worker_threads";
import { deflateText, extractJob, pack, textJob, type Packed } from "../store/deflate-thread.js";
import { docKey, fileWordsOf, prepareDocs, type PreparedDoc } from "./documents.js";
import { BuiltinEmbedder, builtinEmbedderId } from "./embed/builtin.js";
import { TrainedEmbedder, trainedEmbedderId } from "./embed/trained.js";
import { Extractor, tokenCounter } from "./extract.js";
import { languageById } from "./languages/registry.js";
import { leanExtract } from "./resolve.js";
import type { FileExtract, LanguageId } from "./types.js";

const extractor = new Extractor();
let builtin: BuiltinEmbedder | undefined;
let trained: TrainedEmbedder | undefined;
const ids: { builtin?: string; trained?: string } = {};

/** Documents are prepared only with the embedder the build uses: the built-in or trained one, of this very version. */
function embedderFor(id: string | undefined): BuiltinEmbedder | TrainedEmbedder | undefined {
  if (!isOurs(id)) return undefined;
  return id!.startsWith("builtin-") ? (builtin ??= new BuiltinEmbedder()) : (trained ??= new TrainedEmbedder());
}

/** Whether `id` is the built-in or trained embedder of this very version, read from their files' digests: a light build's documents need no vectors loaded. */
function isOurs(id: string | undefined): boolean {
  if (id?.startsWith("builtin-")) return id === (ids.builtin ??= builtinEmbedderId());
  if (id?.startsWith("trained-")) return id === (ids.trained ??= trainedEmbedderId());
  return false;
}

/** A file to parse; with `light`, its tokens and vectors are left for the build's fill (after it is answerable). */
interface ParseMsg {
  id: number;
  path: string;
  language: LanguageId;
  source: string;
  embedder?: string;
  light?: boolean;
  /** Make the definitions' texts and the extract in a local index's stored form (a whole-tree build's) here, not in the write. */
  stored?: boolean;
}

/** A build's fill: a file's tokens counted (when its source is given) and its nodes' texts embedded (with the worker's embedder). */
interface FillMsg {
  id: number;
  fill: true;
  source?: string;
  texts: string[];
  embedder?: string;
}

/**
 * The stored form of each prepared definition's text, in `docs`' order, then the extract's, in one
 * buffer: deflating Go's src's 60K texts in the build's write took a thread 6.6 s beside the inserts
 * and clustering on 2 cores; here the two workers share it while they parse.
 */
function storeForm(extract: FileExtract, docs: [string, PreparedDoc][]): Packed {
  const defOf = new Map(extract.defs.map((d) => [docKey({ file_path: extract.path, line_start: d.lineStart, type: d.kind, qualified_name: d.qualifiedName }), d]));
  return pack([...docs.map(([k, doc]) => deflateText(textJob({ node: defOf.get(k)!, lexical: doc.lexical }))), deflateText(extractJob(leanExtract(extract)))]);
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
    if (!isOurs(msg.embedder)) return parentPort!.postMessage({ id: msg.id, extract });
    const embedder = msg.light ? undefined : embedderFor(msg.embedder)!;
    const docs: [string, PreparedDoc][] = [...prepareDocs(extract, embedder && ((t) => embedder.embedOne(t)))];
    const stored = msg.stored ? storeForm(extract, docs) : undefined;
    const moved = [...docs.flatMap(([, d]) => (d.vector ? [d.vector.buffer as ArrayBuffer] : [])), ...(stored ? [stored.bytes.buffer as ArrayBuffer, stored.ends.buffer as ArrayBuffer] : [])];
    parentPort!.postMessage({ id: msg.id, extract, docs, fileWords: fileWordsOf(msg.source), stored }, moved);
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: (err as Error).message });
  }
});
