import { z } from "zod";
import { TOKENIZER } from "./tokenizer-name.js";

/** Tool description of `codemem_query_docs`: kept short, the assistant reads it every turn. */
export const QUERY_DOCS_DESCRIPTION = "Search project documents (PDF, DOCX, Markdown): passages with page or heading.";

/** Input of `codemem_query_docs`. */
export const QueryDocsInput = z
  .object({
    project_path: z
      .string()
      .min(1)
      .refine((p) => p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p), { message: "project_path must be absolute" })
      .describe("Absolute path of the project root"),
    question: z.string().min(1).max(4000).describe("What to look for in the documents"),
    limit: z.number().int().min(1).max(20).default(5).describe("Most passages returned"),
    budget: z.number().int().min(1).max(20000).optional().describe("Most o200k_base tokens of passage text in total"),
  })
  .strict();

export const DocPassageSchema = z.object({
  document: z.string().describe("Project-relative path of the document"),
  page: z.number().int().optional().describe("1-based PDF page"),
  heading: z.string().optional().describe("Section heading path (DOCX, Markdown), outer > inner"),
  text: z.string(),
  tokens: z.number().int().describe("o200k_base tokens of text"),
  score: z.number().describe("Fused rank score (reciprocal rank fusion of BM25 and vectors)"),
});

/** Output of `codemem_query_docs`. */
export const QueryDocsOutput = z.object({
  passages: z.array(DocPassageSchema),
  tokens: z.number().int().describe("o200k_base tokens of all passages; never above budget"),
  tokenizer: z.literal(TOKENIZER),
  documents_indexed: z.number().int(),
  skipped: z
    .array(z.object({ path: z.string(), reason: z.string(), detail: z.string().optional() })).describe("Documents that could not be read (encrypted, scanned, corrupt, too large)"),
});

export type QueryDocsInputT = z.infer<typeof QueryDocsInput>;
export type QueryDocsOutputT = z.infer<typeof QueryDocsOutput>;
