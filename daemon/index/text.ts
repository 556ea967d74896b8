/** Text normalisation shared by the lexical index, the built-in embedder and query parsing. */

const STOP = new Set(
  ("a an the and or not of to in on at by for with from into onto is are was were be been being this that these those it its " +
    "as if then else when where which who whom what how why does do did done can could should would will shall may might must " +
    "there here i you we they he she me my our your their them us up out so than too very just only also any all each some such " +
    "no nor own same other about over under again further once get gets got use used uses using code function method class file " +
    "implemented implement implements defined define defines handle handled handles handling work works").split(" "),
);

/** Splits identifiers and prose into lower-case words: `parseHTTPHeader_v2` → parse http header v 2. */
export function splitWords(text: string): string[] {
  const out: string[] = [];
  const re = /[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|[0-9]+/g;
  for (const chunk of text.split(/[^A-Za-z0-9]+/)) {
    if (!chunk) continue;
    const parts = chunk.match(re);
    if (!parts) continue;
    for (const p of parts) out.push(p.toLowerCase());
  }
  return out;
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

/** Identifiers appearing in code, in order, without duplicates. */
export function identifiersOf(code: string, limit: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of code.matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)) {
    const id = m[0];
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
    if (out.length >= limit) break;
  }
  return out;
}
