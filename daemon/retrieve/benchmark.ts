import fs from "node:fs";
import path from "node:path";
import { questionsOf, type Question } from "../../shared/benchmark-questions.js";
import { CodememError } from "../../shared/errors.js";
import { toProjectPath } from "../../shared/paths.js";
import type { BenchmarkRowT } from "../../shared/schemas.js";
import type { z } from "zod";
import type * as ops from "../../shared/operations.js";
import type { Retriever } from "./retriever.js";
import { firstSentence } from "../index/resolve.js";

/** What a benchmark asks of the project's engine (its facade hands itself in; no import back to it). */
export interface BenchmarkEngine {
  readonly root: string;
  retriever(): Promise<Retriever>;
  query(input: z.input<typeof ops.query.input>): Promise<z.infer<typeof ops.query.output>>;
  search(input: z.input<typeof ops.search.input>): Promise<z.infer<typeof ops.search.output>>;
}

/**
 * Reads a question file of the project: `[{question, gold_files?}]` or `{questions: [...]}` (the
 * retrieval benchmark's format). A tool call may name files of this project only (a path outside,
 * or a symlink leading out, is PATH_OUTSIDE_PROJECT), and no error repeats the file's content: the
 * CLI reads a file the user names anywhere and sends its questions instead.
 */
function loadQuestions(root: string, file: string): Question[] {
  const abs = path.join(root, toProjectPath(root, file));
  let text: string;
  try {
    text = fs.readFileSync(abs, "utf8");
  } catch (err) {
    throw new CodememError("INVALID_ARGUMENT", `questions_file ${abs} cannot be read (${(err as NodeJS.ErrnoException).code}); pass a JSON file of the project.`);
  }
  return questionsOf(text, `questions_file ${abs}`);
}

/** Questions derived from the project: documented symbols, asked by their documentation without their name. */
async function deriveQuestions(engine: BenchmarkEngine, limit: number): Promise<Question[]> {
  const r = await engine.retriever();
  const documented = r.nodes.filter((n) => n.type !== "module" && firstSentence(n.docstring).split(" ").length >= 5);
  const step = Math.max(1, Math.floor(documented.length / limit));
  const out: Question[] = [];
  for (let i = 0; i < documented.length && out.length < limit; i += step) {
    const n = documented[i];
    const q = firstSentence(n.docstring).replace(new RegExp(`\\b${n.name}\\b`, "g"), "it");
    out.push({ question: `Where is the code that does this: ${q}`, gold_files: [n.file_path] });
  }
  return out;
}

/** Runs questions through query and search without side effects; reports per-query rows and averages. */
export async function runBenchmark(engine: BenchmarkEngine, questions: string | Question[] | undefined, limit: number | undefined) {
  const qs = typeof questions === "string" ? loadQuestions(engine.root, questions) : (questions ?? (await deriveQuestions(engine, limit ?? 20)));
  const picked = qs.slice(0, limit ?? qs.length);
  const results: BenchmarkRowT[] = [];
  for (const q of picked) {
    let t = performance.now();
    const a = await engine.query({ project_path: engine.root, question: q.question });
    const latency = performance.now() - t;
    t = performance.now();
    const s = await engine.search({ project_path: engine.root, query: q.question, limit: 10 });
    const searchLatency = performance.now() - t;
    const cited = new Set(a.citations.map((c) => c.file_path));
    const row: BenchmarkRowT = {
      question: q.question,
      tokens: a.tokens,
      reduction_ratio: a.reduction_ratio,
      latency_ms: Math.round(latency * 100) / 100,
      search_latency_ms: Math.round(searchLatency * 100) / 100,
      cited_files: cited.size,
    };
    if (q.gold_files?.length) {
      row.gold_files = q.gold_files;
      row.recall = q.gold_files.filter((g) => cited.has(g)).length / q.gold_files.length;
      const rank = s.results.findIndex((x) => q.gold_files!.includes(x.file_path));
      row.reciprocal_rank = rank >= 0 ? 1 / (rank + 1) : 0;
    }
    results.push(row);
  }
  const avg = (f: (r: BenchmarkRowT) => number | undefined) => {
    const xs = results.map(f).filter((x): x is number => x !== undefined);
    return xs.length ? Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 1000) / 1000 : undefined;
  };
  return {
    results,
    averages: {
      tokens: avg((r) => r.tokens) ?? 0,
      reduction_ratio: avg((r) => r.reduction_ratio) ?? 0,
      latency_ms: avg((r) => r.latency_ms) ?? 0,
      search_latency_ms: avg((r) => r.search_latency_ms) ?? 0,
      cited_files: avg((r) => r.cited_files) ?? 0,
      ...(results.some((r) => r.recall !== undefined) ? { recall: avg((r) => r.recall), mrr: avg((r) => r.reciprocal_rank) } : {}),
    },
    query_count: results.length,
    question_source: typeof questions === "string" ? path.resolve(engine.root, questions) : questions ? "questions given with the call" : "derived from documented symbols",
  };
}
