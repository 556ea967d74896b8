import { countTokens } from "../../shared/tokens.js";
import { contentWords, splitWords, stem } from "../index/text.js";

/** What a question asks about, for choosing the lines of an excerpt. */
export interface LineFocus {
  terms: Set<string>;
  /** How telling a stem is in the project (the retriever's idf): a rare term picks its lines first. */
  weight: (stem: string) => number;
}

export function lineFocus(question: string, weight: (stem: string) => number): LineFocus {
  return { terms: new Set(contentWords(question).map(stem)), weight };
}

const COMMENT = /^\s*(#|\/\/|\/\*|\*|--)/;
const DOC_OPEN = /^\s*[rRuUbB]?("""|''')/;
/** A body comment that matches counts half a code line: the code is the answer, the comment its gloss. */
const COMMENT_FACTOR = 0.5;
/**
 * A line is taken out of order only when it names two of the question's terms (or the only one)
 * and scores at least half the best line: a single common word ("err", "body") picks lines that
 * chop the excerpt without answering.
 */
const MATCH_TERMS = 2;
const MATCH_FLOOR = 0.5;

/**
 * The lines of a node's code within `budget` tokens. All of it when it fits; else the signature,
 * the docstring's first line, the body lines that match the question (most telling first, then a
 * line of context either side of each), then the body from the top — a long docstring no longer eats the
 * lines that answer. Gaps are marked `…`. Without a match (and without a docstring) this is the
 * first lines that fit, as before. Returns "" when not even the signature fits.
 */
export function excerpt(code: string, signature: string, budget: number, focus: LineFocus, truncated: boolean): string {
  const lines = code.split("\n");
  const keep = new Set<number>();
  const text = () => render(lines, keep, truncated);
  const tryAdd = (idx: number[]): boolean => {
    const fresh = idx.filter((i) => i >= 0 && i < lines.length && !keep.has(i));
    for (const i of fresh) keep.add(i);
    if (countTokens(text()) <= budget) return true;
    for (const i of fresh) keep.delete(i);
    return false;
  };
  if (countTokens(code) <= budget && !truncated) return code;
  const head = headLength(lines, signature);
  const doc = docBlock(lines, head);
  if (!tryAdd(range(0, head))) {
    // A signature longer than the budget: the first lines that fit, as they come.
    keep.clear();
    for (let i = 0; i < lines.length && tryAdd([i]); i++);
    return keep.size ? text() : "";
  }
  const body = range(head, lines.length).filter((i) => !doc.has(i));
  const docStart = Math.min(...doc);
  const docFirst = [...doc].find((i) => /\w/.test(lines[i]));
  if (docFirst !== undefined) tryAdd(range(docStart, docFirst + 1));
  // The matching lines first, then a line of context either side of each while room is left.
  const hits = matches(lines, body, focus);
  for (const i of hits) tryAdd([i]);
  const inBody = new Set(body);
  for (const i of hits) for (const j of [i - 1, i + 1]) if (inBody.has(j) && lines[j].trim() !== "") tryAdd([j]);
  for (const i of body) if (!tryAdd([i])) break;
  for (const i of doc) if (!tryAdd([i])) break;
  return text();
}

/** Body lines matching the question, best first. */
function matches(lines: string[], body: number[], focus: LineFocus): number[] {
  if (focus.terms.size === 0) return [];
  const need = Math.min(MATCH_TERMS, focus.terms.size);
  const scored = body.map((i) => {
    const words = new Set(splitWords(lines[i]).map(stem));
    let s = 0;
    let n = 0;
    for (const t of focus.terms) if (words.has(t)) (s += focus.weight(t)), n++;
    return { i, n, s: COMMENT.test(lines[i]) ? s * COMMENT_FACTOR : s };
  });
  const best = Math.max(0, ...scored.map((x) => x.s));
  return scored
    .filter((x) => x.n >= need && x.s >= best * MATCH_FLOOR)
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.i);
}

/** Lines the signature spans (decorators included); one when the signature cannot be found. */
function headLength(lines: string[], signature: string): number {
  const want = signature.replace(/\s+/g, "");
  let acc = "";
  for (let i = 0; i < Math.min(lines.length, 12); i++) {
    acc += lines[i].replace(/\s+/g, "");
    if (want && acc.includes(want)) return i + 1;
  }
  return 1;
}

/** Lines of the docstring right after the signature (Python's string literal), if any. */
function docBlock(lines: string[], head: number): Set<number> {
  const out = new Set<number>();
  let i = head;
  while (i < lines.length && lines[i].trim() === "") i++;
  const open = DOC_OPEN.exec(lines[i] ?? "");
  if (!open) return out;
  const quote = open[1];
  const rest = lines[i].slice(lines[i].indexOf(quote) + 3);
  out.add(i);
  if (rest.includes(quote)) return out;
  for (i++; i < lines.length; i++) {
    out.add(i);
    if (lines[i].includes(quote)) break;
  }
  return out;
}

/** Kept lines in order; a gap of anything but blank lines becomes `…` at the indentation of what it hides. */
function render(lines: string[], keep: Set<number>, truncated: boolean): string {
  const out: string[] = [];
  const elide = (from: number, to: number) => {
    const hidden = lines.slice(from, to).filter((l) => l.trim() !== "");
    if (hidden.length) out.push(`${/^\s*/.exec(hidden[0])![0] || "    "}…`);
  };
  let prev = -1;
  for (const i of [...keep].sort((a, b) => a - b)) {
    elide(prev + 1, i);
    out.push(lines[i]);
    prev = i;
  }
  const before = out.length;
  elide(prev + 1, lines.length);
  if (truncated && out.length === before) out.push("    …");
  return out.join("\n");
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);
}
