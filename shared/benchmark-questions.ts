import { CodememError } from "./errors.js";

/** One benchmark question and the files a good answer cites. */
export interface Question {
  question: string;
  gold_files?: string[];
}

/**
 * The questions of a question file's text: `[{question, gold_files?}]` or `{questions: [...]}`.
 * Errors name the file (`where`) but never repeat its content: it may be any file the caller can read.
 */
export function questionsOf(text: string, where: string): Question[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CodememError("INVALID_ARGUMENT", `${where} is not JSON; pass a JSON array of {question, gold_files}.`);
  }
  return questionList(doc, where);
}

/** The questions of a parsed question file (or of a tool call's `questions`). */
export function questionList(doc: unknown, where: string): Question[] {
  const list = Array.isArray(doc) ? doc : (doc as { questions?: unknown } | null)?.questions;
  if (!Array.isArray(list) || list.some((q) => typeof q?.question !== "string" || (q.gold_files !== undefined && !(Array.isArray(q.gold_files) && q.gold_files.every((g: unknown) => typeof g === "string"))))) {
    throw new CodememError("INVALID_ARGUMENT", `${where} must hold an array of {question: string, gold_files?: string[]}.`);
  }
  return list.map((q: Question) => ({ question: q.question, ...(q.gold_files ? { gold_files: q.gold_files } : {}) }));
}
