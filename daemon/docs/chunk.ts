import { countTokens } from "../../shared/tokens.js";
import type { DocUnit } from "./extract.js";

export interface DocChunk {
  doc: string;
  page?: number;
  heading?: string;
  text: string;
  /** o200k_base tokens of `text`. */
  tokens: number;
}

/** Chunk size in o200k tokens: small enough to quote, large enough to carry an answer with context. */
export const MIN_CHUNK_TOKENS = 120;
export const MAX_CHUNK_TOKENS = 350;
const TARGET_TOKENS = 280;

/**
 * Cuts a document's units into chunks. A chunk never spans two units (pages or sections); a long
 * unit splits on paragraphs, then sentences, then words, packed to even sizes within the bounds.
 */
export function chunkUnits(doc: string, units: DocUnit[]): DocChunk[] {
  const out: DocChunk[] = [];
  for (const u of units) {
    const base = { doc, ...(u.page !== undefined ? { page: u.page } : {}), ...(u.heading ? { heading: u.heading } : {}) };
    for (const text of splitUnit(u.text)) out.push({ ...base, text, tokens: countTokens(text) });
  }
  return out;
}

function splitUnit(text: string): string[] {
  const t = text.trim();
  if (!t) return [];
  const total = countTokens(t);
  if (total <= MAX_CHUNK_TOKENS) return [t];
  const pieces = atoms(t);
  // Even packing: n chunks of about total/n tokens rather than full chunks and a runt at the end.
  const n = Math.ceil(total / TARGET_TOKENS);
  const soft = Math.min(MAX_CHUNK_TOKENS, Math.max(MIN_CHUNK_TOKENS, Math.ceil(total / n)));
  const chunks: string[] = [];
  let cur: { text: string; sep: string }[] = [];
  let curTokens = 0;
  const emit = () => {
    if (cur.length) chunks.push(cur.map((p, i) => (i === 0 ? p.text : p.sep + p.text)).join("").trim());
    cur = [];
    curTokens = 0;
  };
  for (const p of pieces) {
    const fits = curTokens + p.tokens <= soft || (curTokens < MIN_CHUNK_TOKENS && curTokens + p.tokens <= MAX_CHUNK_TOKENS);
    if (!fits) emit();
    cur.push(p);
    curTokens += p.tokens;
  }
  emit();
  // A short tail joins the previous chunk when the two still fit.
  if (chunks.length >= 2) {
    const last = chunks[chunks.length - 1];
    const prev = chunks[chunks.length - 2];
    if (countTokens(last) < MIN_CHUNK_TOKENS && countTokens(prev) + countTokens(last) <= MAX_CHUNK_TOKENS) {
      chunks.splice(chunks.length - 2, 2, `${prev}\n\n${last}`);
    }
  }
  return chunks.filter(Boolean);
}

interface Atom {
  text: string;
  /** What joins this atom to the previous one. */
  sep: string;
  tokens: number;
}

/** Paragraphs, with paragraphs longer than a chunk broken into sentences and overlong sentences into words. */
function atoms(text: string): Atom[] {
  const out: Atom[] = [];
  const paragraphs = text.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean);
  for (const para of paragraphs) {
    const tokens = countTokens(para);
    if (tokens <= MAX_CHUNK_TOKENS) {
      out.push({ text: para, sep: "\n\n", tokens });
      continue;
    }
    // Table rows and list items are lines of their own; prose lines are just wrapping.
    const structured = /(^|\n)(- |.* \| )/.test(para);
    const inner = structured ? "\n" : " ";
    let first = true;
    for (const s of structured ? para.split("\n").filter((l) => l.trim()) : sentences(para)) {
      const st = countTokens(s);
      if (st <= MAX_CHUNK_TOKENS) out.push({ text: s, sep: first ? "\n\n" : inner, tokens: st });
      else for (const w of byWords(s)) out.push({ text: w, sep: first ? "\n\n" : " ", tokens: countTokens(w) });
      first = false;
    }
  }
  return out;
}

/** Sentences: split after . ! ? (then whitespace) and after CJK 。！？; wrapped lines are rejoined. */
export function sentences(text: string): string[] {
  const parts = text.split(/(?<=[.!?]["'\u201d)\]]?)\s+|(?<=[。！？])/);
  const out: string[] = [];
  for (const raw of parts) {
    const p = raw.replace(/\s+/g, " ").trim();
    if (!p) continue;
    // "e.g." and single initials ("J. Smith") do not end a sentence.
    const prev = out.at(-1);
    if (prev !== undefined && /(\b[A-Za-z]\.|\be\.g\.|\bi\.e\.|\betc\.|\bvs\.|\bNo\.|\bFig\.)$/i.test(prev)) out[out.length - 1] = `${prev} ${p}`;
    else out.push(p);
  }
  return out;
}

/** Last resort for a sentence longer than a chunk: runs of words (or characters, for unspaced scripts). */
function byWords(s: string): string[] {
  const words = s.split(/\s+/).flatMap((w) => (countTokens(w) > MAX_CHUNK_TOKENS ? (w.match(/[\s\S]{1,200}/gu) ?? []) : [w]));
  const out: string[] = [];
  let cur = "";
  let curTokens = 0;
  for (const w of words) {
    const t = countTokens(w) + 1;
    if (curTokens + t > TARGET_TOKENS && cur) {
      out.push(cur);
      cur = "";
      curTokens = 0;
    }
    cur = cur ? `${cur} ${w}` : w;
    curTokens += t;
  }
  if (cur) out.push(cur);
  return out;
}
