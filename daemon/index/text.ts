/** Text normalisation shared by the lexical index, the built-in embedder and query parsing. */

const STOP = new Set(
  ("a an the and or not of to in on at by for with from into onto is are was were be been being this that these those it its " +
    "as if then else when where which who whom what how why does do did done can could should would will shall may might must " +
    "there here i you we they he she me my our your their them us up out so than too very just only also any all each some such " +
    "no nor own same other about over under again further once get gets got use used uses using code function method class file " +
    "implemented implement implements defined define defines handle handled handles handling work works").split(" "),
);

/** Letters and digits as splitWords and identifiersOf read them: anything else (any non-ASCII too) separates words. */
const enum Ch {
  Other = 0,
  Upper = 1,
  Lower = 2,
  Digit = 3,
  Underscore = 4,
}

const CLASS = new Uint8Array(128).map((_, c) => (c >= 65 && c <= 90 ? Ch.Upper : c >= 97 && c <= 122 ? Ch.Lower : c >= 48 && c <= 57 ? Ch.Digit : c === 95 ? Ch.Underscore : Ch.Other));

function classAt(s: string, k: number): Ch {
  const c = s.charCodeAt(k);
  return c < 128 ? CLASS[c] : Ch.Other;
}

/**
 * Splits identifiers and prose into lower-case words: `parseHTTPHeader_v2` → parse http header v 2.
 * The words are the matches of `[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|[0-9]+` within each run of ASCII
 * letters and digits, read by hand (test/index/text.test.ts holds them to that pattern): the regex
 * split took 1.6 s of a full build of Go's src on its main thread alone, this about 0.4.
 */
export function splitWords(text: string): string[] {
  const joined = joinedWords(text);
  return joined ? joined.split(" ") : [];
}

/** The end of the word starting at `i` (a letter or digit of class `c`): splitWords' one rule. */
function wordEnd(text: string, i: number, c: Ch): number {
  const n = text.length;
  let j = i + 1;
  if (c === Ch.Digit) {
    while (j < n && classAt(text, j) === Ch.Digit) j++;
  } else if (j < n && classAt(text, j) === Ch.Lower) {
    // A letter and the lower-case ones after it: `Header`, `parse`.
    while (++j < n && classAt(text, j) === Ch.Lower);
  } else if (c === Ch.Upper) {
    // Capitals, leaving the last one to the word it starts: `HTTPHeader` → HTTP, Header.
    while (j < n && classAt(text, j) === Ch.Upper) j++;
    if (j < n && classAt(text, j) === Ch.Lower) j--;
  }
  return j;
}

/** Bytes joinedWords writes into, grown as needed: a build joins the words of every file and definition. */
let joined = Buffer.allocUnsafe(1 << 16);

/**
 * `splitWords(text).join(" ")` in one pass, as a one-byte string: words are ASCII, so they are
 * written as bytes, with no array of words and no strings per word (a full build joins the words
 * of every file; a two-byte string would also double what a parse worker posts).
 */
export function joinedWords(text: string): string {
  const n = text.length;
  // Each word char is one byte, and each word at most one separator.
  if (joined.length < 2 * n) joined = Buffer.allocUnsafe(2 * n);
  const buf = joined;
  let len = 0;
  let i = 0;
  while (i < n) {
    const c = classAt(text, i);
    if (c === Ch.Other || c === Ch.Underscore) {
      i++;
      continue;
    }
    const j = wordEnd(text, i, c);
    if (len > 0) buf[len++] = 32;
    // Letters of an upper-case word are lowered (0x20), digits and lower-case ones kept.
    const lower = c === Ch.Upper ? 0x20 : 0;
    for (let k = i; k < j; k++) buf[len++] = text.charCodeAt(k) | lower;
    i = j;
  }
  return buf.toString("latin1", 0, len);
}

/** Stems by word: the same words recur in every definition of a tree. Cleared when full. */
const STEMS = new Map<string, string>();
const STEMS_CACHE_SIZE = 50_000;

/** Light stemmer: plurals, -ing, -ed, -er, -tion; conservative on short words. */
export function stem(w: string): string {
  if (w.length <= 3) return w;
  let s = STEMS.get(w);
  if (s === undefined) {
    s = stemOf(w);
    if (STEMS.size >= STEMS_CACHE_SIZE) STEMS.clear();
    STEMS.set(w, s);
  }
  return s;
}

function stemOf(w: string): string {
  if (w.endsWith("ies") && w.length > 4) return w.slice(0, -3) + "y";
  if (w.endsWith("sses")) return w.slice(0, -2);
  if (w.endsWith("ations") || w.endsWith("ation")) return w.replace(/ations?$/, "ate");
  if (w.endsWith("ings") && w.length > 6) return undouble(w.slice(0, -4));
  if (w.endsWith("ing") && w.length > 5) return undouble(w.slice(0, -3));
  if (w.endsWith("ers") && w.length > 5) return w.slice(0, -3);
  if (w.endsWith("er") && w.length > 5) return w.slice(0, -2);
  if (w.endsWith("ed") && w.length > 4) return undouble(w.slice(0, -2));
  if (w.endsWith("es") && /(ches|shes|xes|zes|sses)$/.test(w)) return w.slice(0, -2);
  if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) return w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(w) ? w.slice(0, -1) : w;
}

export function isStopword(w: string): boolean {
  return STOP.has(w);
}

/** Content words of a query or document: split, lower-cased, stopwords removed. */
export function contentWords(text: string): string[] {
  return splitWords(text).filter((w) => !STOP.has(w) && (w.length > 1 || /[0-9]/.test(w)));
}

/** Identifiers appearing in code (`[A-Za-z_][A-Za-z0-9_]{2,}`, read by hand), in order, without duplicates. */
export function identifiersOf(code: string, limit: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const n = code.length;
  let i = 0;
  while (i < n && out.length < limit) {
    const c = classAt(code, i);
    if (c === Ch.Other || c === Ch.Digit) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && classAt(code, j) !== Ch.Other) j++;
    if (j - i >= 3) {
      const id = code.slice(i, j);
      if (!seen.has(id)) {
        seen.add(id);
        out.push(id);
      }
    }
    i = j;
  }
  return out;
}
