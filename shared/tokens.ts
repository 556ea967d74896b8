import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { GptEncoding } from "gpt-tokenizer/GptEncoding";
import { sizeStamp, userDir } from "./paths.js";
import { TOKENIZER } from "./tokenizer-name.js";

export { TOKENIZER };

type Ranks = (string | number[])[];

/** The tokenizer's rank table, a 2.2 MB module; its copy in the user's cache (see loadCounter). */
const RANKS_MODULE = "gpt-tokenizer/bpeRanks/o200k_base";
const RANKS_CACHE_FORMAT = 2;

/**
 * o200k's token counter, from its rank table. Compiling and running the table's module costs
 * ~0.18 s of every process that counts (a daemon's start, a hook), parsing the same table as JSON
 * ~0.07 s: the first process writes it as JSON to the user's cache, later ones read it there. The
 * copy names the module file it was made from (path, size, mtime) and carries the SHA-256 of its
 * table, so a copy of another version of the tokenizer, or a torn or damaged one, is never used:
 * it is made again. Either way the encoding is `gpt-tokenizer/encoding/o200k_base`'s own construction.
 */
async function loadCounter(): Promise<(text: string) => number> {
  const encoder = (ranks: Ranks) => GptEncoding.getEncodingApi(TOKENIZER, () => ranks).countTokens;
  const fromModule = async () => ((await import(RANKS_MODULE)) as { default: Ranks }).default;
  let cache: string | undefined;
  let key: RanksKey;
  try {
    const source = fileURLToPath(import.meta.resolve(RANKS_MODULE));
    const st = fs.statSync(source);
    const dir = userDir("cache");
    cache = dir ? path.join(dir, `${TOKENIZER}-ranks.json`) : undefined;
    key = { format: RANKS_CACHE_FORMAT, source, stamp: sizeStamp(st.size, st.mtimeMs) };
  } catch {
    return encoder(await fromModule());
  }
  const cached = cache ? readRanksCache(cache, key) : undefined;
  if (cached) {
    try {
      return encoder(cached);
    } catch {
      // refused by the tokenizer (it checks the vocabulary's size): made again below
    }
  }
  const ranks = await fromModule();
  if (cache) writeRanksCache(cache, key, ranks);
  return encoder(ranks);
}

interface RanksKey {
  format: number;
  source: string;
  stamp: string;
}

/** The cached table if it was made from this module file and is intact, else undefined. */
function readRanksCache(file: string, key: RanksKey): Ranks | undefined {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  try {
    const nl = bytes.indexOf(10);
    const head = JSON.parse(bytes.toString("latin1", 0, nl)) as RanksKey & { sha256: string; count: number };
    if (head.format !== key.format || head.source !== key.source || head.stamp !== key.stamp) return undefined;
    const body = bytes.subarray(nl + 1);
    if (createHash("sha256").update(body).digest("hex") !== head.sha256) return undefined;
    // ASCII (see writeRanksCache): read as Latin-1, one byte per character, which JSON.parse reads faster.
    const ranks = JSON.parse(body.toString("latin1")) as Ranks;
    return Array.isArray(ranks) && ranks.length === head.count ? ranks : undefined;
  } catch {
    return undefined;
  }
}

/** JSON with every character beyond ASCII escaped (`\u00e9`): the same value, in one-byte characters. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Writes the table's copy (atomically: parse workers of one build may write it at once); a failure only costs the next process the module. */
function writeRanksCache(file: string, key: RanksKey, ranks: Ranks): void {
  // JSON has no holes: a table with holes (unused ranks) would come back with nulls in them.
  if (Object.keys(ranks).length !== ranks.length) return;
  const body = asciiJson(ranks);
  const head = asciiJson({ ...key, sha256: createHash("sha256").update(body).digest("hex"), count: ranks.length });
  const tmp = `${file}.tmp-${randomUUID()}`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, `${head}\n${body}`);
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

const o200kCount = await loadCounter();

/** Pieces of text (the tokenizer's own pre-split) mapped to their token counts; cleared when full. */
const pieceTokens = new Map<string, number>();
const PIECE_CACHE_SIZE = 50_000;

/**
 * The o200k token count of `text`, exactly the tokenizer's. BPE never merges across the pieces its
 * split pattern cuts a text into, so a text's count is the sum of its pieces' counts, and source code
 * repeats its pieces (`int`, ` (`, indentation): each distinct piece is counted by the tokenizer once
 * (a lookup instead of its rank map and LRU on every piece; about 1.6x on a C tree once warm).
 * A special token's text (`<|endoftext|>`) is counted as the ordinary text it is in a source file:
 * the tokenizer refuses it by default, which failed the file's extraction.
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    let c = pieceTokens.get(piece);
    if (c === undefined) {
      c = o200kCount(piece);
      if (pieceTokens.size >= PIECE_CACHE_SIZE) pieceTokens.clear();
      // A long piece is a slice that keeps its whole source text alive: the key is a copy.
      pieceTokens.set(piece.length > 12 ? (" " + piece).slice(1) : piece, c);
    }
    n += c;
  }
  return n;
}
