import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BytePairEncodingCore } from "gpt-tokenizer/BytePairEncodingCore";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { O200KBase } from "gpt-tokenizer/encodingParams/o200k_base";
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
 * it is made again. Either way the ranks and special tokens are `gpt-tokenizer`'s o200k_base.
 */
async function loadCounter(): Promise<(piece: string) => number> {
  // Pieces are cut by pieceEnd (below) and their counts cached by countTokens: the tokenizer's core
  // only merges a new piece. Its split pattern is replaced by one that takes the piece whole (its own
  // pattern and special-token scans made each new piece cost 10 µs; Go's src has 140K distinct pieces),
  // and it keeps no cache of its own (its LRU of 100K merges cost more than merging again).
  const encoder = (ranks: Ranks) => {
    const core = new BytePairEncodingCore({ ...O200KBase(ranks), tokenSplitRegex: /[^]+/gu, mergeCacheSize: 0 });
    // The core's own map of its table's strings to ranks (private in its types; a second copy would cost
    // every process ~10 MB): without it, as in another version of the library, the core counts every piece.
    const rankOf = (core as unknown as { bytePairStringRankEncoder?: unknown }).bytePairStringRankEncoder;
    if (!(rankOf instanceof Map)) return (piece: string) => core.countNative(piece);
    return (piece: string) => (isAscii(piece) ? asciiCount(piece, rankOf as Map<string, number>) : core.countNative(piece));
  };
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
      // a table the tokenizer's core cannot read: made again below
    }
  }
  const ranks = await fromModule();
  if (cache) writeRanksCache(cache, key, ranks);
  return encoder(ranks);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) return false;
  return true;
}

/**
 * The token count of an ASCII piece: the tokenizer's own merge (join the adjacent pair of lowest
 * rank, the leftmost of equals, until no pair has a rank) with its table's ranks of strings. An
 * ASCII byte is its character, so the library's lookup of a pair's bytes, which decodes them to a
 * string first, is a lookup of the piece's slice here: the count of Go's src's distinct pieces,
 * merged by the library, cost each parse worker of a build about 1 s of its 2.5 s of counting.
 */
function asciiCount(piece: string, rankOf: Map<string, number>): number {
  if (rankOf.has(piece)) return 1;
  const rankOfPair = (from: number, to: number | undefined) => (to === undefined ? Infinity : (rankOf.get(piece.slice(from, to)) ?? Infinity));
  const starts: number[] = [];
  const ranks: number[] = [];
  for (let i = 0; i <= piece.length; i++) {
    starts.push(i);
    ranks.push(i < piece.length - 1 ? rankOfPair(i, i + 2) : Infinity);
  }
  while (starts.length > 1) {
    let lowest = Infinity;
    let at = -1;
    for (let i = 0; i < ranks.length - 1; i++) {
      if (ranks[i] < lowest) {
        lowest = ranks[i];
        at = i;
      }
    }
    if (at === -1) break;
    starts.splice(at + 1, 1);
    ranks.splice(at, 1);
    ranks[at] = rankOfPair(starts[at], starts[at + 2]);
    if (at > 0) ranks[at - 1] = rankOfPair(starts[at - 1], starts[at + 1]);
  }
  return starts.length - 1;
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
const PIECE_CACHE_SIZE = 200_000;

/**
 * The o200k token count of `text`, exactly the tokenizer's. BPE never merges across the pieces its
 * split pattern cuts a text into, so a text's count is the sum of its pieces' counts, and source code
 * repeats its pieces (`int`, ` (`, indentation): each distinct piece is counted by the tokenizer once
 * (a lookup instead of its rank map and LRU on every piece; about 1.6x on a C tree once warm).
 * A special token's text (`<|endoftext|>`) is counted as the ordinary text it is in a source file:
 * the tokenizer refuses it by default, which failed the file's extraction.
 */
export function countTokens(text: string): number {
  let n = 0;
  for (let i = 0, j = 0; i < text.length; i = j) {
    j = pieceEnd(text, i);
    const piece = text.slice(i, j);
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

/** The split pattern, matching at one position only. It matches at every position: its pieces tile the text. */
const PIECE_AT = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, "uy");

/**
 * Where the tokenizer's piece that starts at `i` ends: the split pattern's own match there. Matching
 * the pattern (Unicode classes, a match object per piece) was about a fifth of counting Go's src cold
 * (6.4 → 5.0 s with this), so ASCII is read by hand, alternative by alternative in the pattern's order:
 *   1. `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+'s?` and 2. `…[\p{Lu}…]+[\p{Ll}…]*'s?` (a word, one
 *      leading non-letter allowed), 3. `\p{N}{1,3}`, 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
 *   5. `\s*[\r\n]+`, 6. `\s+(?!\S)`, 7. `\s+`.
 * A piece whose reading meets a character beyond ASCII (a letter, digit or space of another script
 * may continue it) is the pattern's to match. pieceEnd's equality with the pattern is tested on
 * real trees and on random text of the awkward characters.
 */
export function pieceEnd(s: string, i: number): number {
  const end = asciiPieceEnd(s, i);
  if (end > i) return end;
  PIECE_AT.lastIndex = i;
  return i + PIECE_AT.exec(s)![0].length;
}

const enum Ch {
  Upper = 1,
  Lower = 2,
  Digit = 3,
  NewLine = 4,
  Space = 5,
  Other = 6,
  Wide = 7,
}

/** The class of each ASCII character; 128 and above are Wide. */
const CLASS = new Uint8Array(128).map((_, c) =>
  c >= 65 && c <= 90 ? Ch.Upper : c >= 97 && c <= 122 ? Ch.Lower : c >= 48 && c <= 57 ? Ch.Digit : c === 10 || c === 13 ? Ch.NewLine : c === 32 || (c >= 9 && c <= 12) ? Ch.Space : Ch.Other,
);

function classAt(s: string, k: number): Ch {
  const c = s.charCodeAt(k);
  return c < 128 ? CLASS[c] : Ch.Wide;
}

/** asciiPieceEnd's answer when a character beyond ASCII decides the piece: the pattern matches it. */
const WIDE = -1;

function asciiPieceEnd(s: string, i: number): number {
  const n = s.length;
  const c = classAt(s, i);
  if (c === Ch.Wide) return WIDE;
  // 1 and 2: a word, after one character that is no letter, digit or line break.
  if (c !== Ch.Digit && c !== Ch.NewLine) {
    const end = wordEnd(s, c === Ch.Upper || c === Ch.Lower ? i : i + 1);
    if (end !== 0) return end;
  }
  // 3: up to three digits.
  if (c === Ch.Digit) {
    let k = i + 1;
    for (; k < n && k < i + 3; k++) {
      const d = classAt(s, k);
      if (d === Ch.Wide) return WIDE;
      if (d !== Ch.Digit) break;
    }
    return k;
  }
  // 4: punctuation, after one space, then line breaks and slashes.
  let start = -1;
  if (c === Ch.Other) start = i;
  else if (s.charCodeAt(i) === 32 && i + 1 < n) {
    const d = classAt(s, i + 1);
    if (d === Ch.Wide) return WIDE;
    if (d === Ch.Other) start = i + 1;
  }
  if (start >= 0) {
    let k = start + 1;
    for (; k < n; k++) {
      const d = classAt(s, k);
      if (d === Ch.Wide) return WIDE;
      if (d !== Ch.Other) break;
    }
    for (; k < n; k++) {
      const d = s.charCodeAt(k);
      if (d !== 10 && d !== 13 && d !== 47) break;
    }
    return k;
  }
  // 5, 6 and 7: white space.
  let k = i;
  let lastBreak = -1;
  for (; k < n; k++) {
    const d = classAt(s, k);
    if (d === Ch.Wide) return WIDE;
    if (d === Ch.NewLine) lastBreak = k;
    else if (d !== Ch.Space) break;
  }
  if (lastBreak >= 0) return lastBreak + 1;
  if (k === n || k - i === 1) return k;
  return k - 1;
}

/**
 * The end of `[\p{Lu}…]*[\p{Ll}…]+` or else `[\p{Lu}…]+` at `k`, with a contraction after it
 * (`'s`, `'ll`, … in either case); 0 when no letter is there, WIDE when a character beyond ASCII may
 * continue the word.
 */
function wordEnd(s: string, k: number): number {
  const n = s.length;
  const start = k;
  for (; k < n; k++) {
    const d = classAt(s, k);
    if (d === Ch.Wide) return WIDE;
    if (d !== Ch.Upper) break;
  }
  const upperEnd = k;
  for (; k < n; k++) {
    const d = classAt(s, k);
    if (d === Ch.Wide) return WIDE;
    if (d !== Ch.Lower) break;
  }
  if (k === start) return 0;
  if (k < n && s.charCodeAt(k) === 39) {
    const a = s.charCodeAt(k + 1) | 32;
    const b = s.charCodeAt(k + 2) | 32;
    if (a === 115 || a === 100 || a === 109 || a === 116) return k + 2; // s d m t
    if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return k + 3; // ll ve re
  }
  return k === upperEnd ? upperEnd : k;
}
