/**
 * Deflates a large build's node texts and file extracts on a thread of its own while the build's
 * thread inserts the other rows: on 2 cores a full build of Go's src spent 3.3 s of its 14 s write
 * deflating 60K texts one after another, with the other core idle (and 0.8 s more on its 4.6K
 * extracts). One request per thread: it exits when it has answered.
 */
import { isMainThread, parentPort, workerData } from "node:worker_threads";
import { deflateRawSync, type ZlibOptions } from "node:zlib";
import type { FileExtract } from "../index/types.js";
import { threadReply } from "../thread-reply.js";
import type { NodeTextOf } from "./types.js";

/**
 * Node texts are deflated fast (level 1: 1.7 vs 2.6 s for the Go tree's 67 MB, 27.0 vs 25.3 MB
 * stored); a definition's text is small, so a 1 KB window and little memory also make zlib's
 * per-call setup cheaper at the same ratio (a module's, with its file's words, keeps the default window).
 */
const FAST_DEFLATE: ZlibOptions = { level: 1 };
const SMALL_DEFLATE: ZlibOptions = { level: 1, windowBits: 10, memLevel: 4 };

/** Extracts keep zlib's default level: 5 MB for Go's src against 6 at level 1, read back whenever a build starts cold. */
const OPTIONS: Record<DeflateJob["kind"], ZlibOptions> = { definition: SMALL_DEFLATE, module: FAST_DEFLATE, extract: {} };

/** `node_text.text`: code, then the values the node's FTS rows were indexed with (see schema.ts). */
export type NodeText = [code: string, name: string, qualified: string, signature: string, doc: string, path: string, body: string, fileWords: string | null];

/** A node's text as stored (node_text, deflated): its code, lexical fields and, for a module, its file's words. */
export function textJob({ node, lexical, fileWords }: NodeTextOf): DeflateJob {
  const text: NodeText = [node.code, lexical.name, lexical.qualified, lexical.signature, lexical.doc, lexical.path, lexical.body, fileWords ?? null];
  return { json: JSON.stringify(text), kind: fileWords === undefined ? "definition" : "module" };
}

/** A file's extract as stored (files.extract, deflated). */
export function extractJob(extract: FileExtract): DeflateJob {
  return { json: JSON.stringify(extract), kind: "extract" };
}

/** One text to deflate: its JSON, and what it is (a definition's or a module's node text, a file's extract). */
export interface DeflateJob {
  json: string;
  kind: "definition" | "module" | "extract";
}

/**
 * The text's deflated bytes, in a buffer of their own size: zlib's output of a few hundred bytes is
 * a view of a 16 KB chunk, and the 64K texts of Go's src held as such took 1 GB of the deflate
 * thread (a full build's peak RSS 2.3-2.5 GB, 1.4 GB with the texts deflated in place).
 */
export function deflateText(t: DeflateJob): Buffer {
  return deflated(t.json, t.kind);
}

function deflated(text: string | Uint8Array, kind: DeflateJob["kind"]): Buffer {
  const out = deflateRawSync(text, OPTIONS[kind]);
  return out.length * 2 < out.buffer.byteLength ? Buffer.from(out) : out;
}

const KINDS: DeflateJob["kind"][] = ["definition", "module", "extract"];

/** The texts packed for the thread: their UTF-8 bytes end to end (moved, not copied), each one's end and kind. */
interface PackedTexts extends Packed {
  kinds: Uint8Array;
}

interface Reply {
  bytes?: Uint8Array;
  ends?: Uint32Array;
  error?: string;
}

/**
 * The texts' deflated bytes, in order, made on a thread of its own. They go to it as one buffer
 * moved across: copying Go's src's 65K texts as strings held this thread for ~2 s of its write.
 */
export function deflateApart(texts: DeflateJob[]): Promise<Buffer[]> {
  const packed: PackedTexts = { ...pack(texts.map((t) => t.json)), kinds: Uint8Array.from(texts, (t) => KINDS.indexOf(t.kind)) };
  const { bytes, ends, kinds } = packed;
  return threadReply<Reply>(new URL("./deflate-thread.js", import.meta.url), { deflateTexts: packed }, "the deflate thread", [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer, kinds.buffer as ArrayBuffer]).then((r) => {
    if (r.error !== undefined) throw new Error(`deflating node texts failed: ${r.error}`);
    return split(r.bytes!, r.ends!);
  });
}

/** Byte strings end to end in one buffer of their own (moved across threads, not copied), and where each ends. */
export interface Packed {
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** Strings go in as their UTF-8 bytes, written straight into the buffer (no copy of each first). */
export function pack(parts: (Uint8Array | string)[]): Packed {
  const ends = new Uint32Array(parts.length);
  let total = 0;
  parts.forEach((p, i) => (ends[i] = total += typeof p === "string" ? Buffer.byteLength(p) : p.length));
  const bytes = Buffer.allocUnsafeSlow(total);
  parts.forEach((p, i) => {
    const start = i === 0 ? 0 : ends[i - 1];
    if (typeof p === "string") bytes.write(p, start, "utf8");
    else bytes.set(p, start);
  });
  return { bytes, ends };
}

/** Packed byte strings, each a Buffer viewing its part (none copied). */
export function split(bytes: Uint8Array, ends: Uint32Array): Buffer[] {
  const out: Buffer[] = [];
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0, start = 0; i < ends.length; start = ends[i++]) out.push(buf.subarray(start, ends[i]));
  return out;
}

if (!isMainThread && (workerData as { deflateTexts?: PackedTexts } | undefined)?.deflateTexts) {
  const { bytes: input, ends: inEnds, kinds } = (workerData as { deflateTexts: PackedTexts }).deflateTexts;
  try {
    const { bytes, ends } = pack([...inEnds].map((end, i) => deflated(input.subarray(i === 0 ? 0 : inEnds[i - 1], end), KINDS[kinds[i]])));
    parentPort!.postMessage({ bytes, ends } satisfies Reply, [bytes.buffer as ArrayBuffer, ends.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message } satisfies Reply);
  }
}
