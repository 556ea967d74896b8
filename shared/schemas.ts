import { z } from "zod";

/** Element shapes the spec leaves open, defined once and published as MCP output schemas. */

export const projectPath = z.string().min(1).describe("Absolute path of the project root");

export const Freshness = z.object({
  indexed_at: z.string().nullable().describe("When the index was last updated (ISO 8601 UTC)"),
  stale: z.boolean().describe("True when files changed since and are not indexed yet"),
  pending_count: z.number().int(),
  pending_files: z.array(z.string()).describe("Up to 20 changed files awaiting re-indexing"),
  warming: z.array(z.string()).optional().describe("Parts still loading after the daemon started; answers go on without them"),
  filling: z.array(z.string()).optional().describe("Parts a whole-tree build is still writing after it became answerable (vectors, tokens); answers are lexical and graph, and token totals partial, until then"),
});

export const Layer = z.object({
  level: z.enum(["L0", "L1", "L2", "L3"]),
  name: z.string(),
  tokens: z.number().int(),
  budget: z.number().int(),
  items: z.number().int(),
});

export const CommunityRef = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  size: z.number().int(),
  score: z.number(),
});

export const Citation = z.object({
  node_id: z.string(),
  file_path: z.string(),
  line_start: z.number().int(),
  line_end: z.number().int(),
  is_test: z.boolean().describe("Test code (by the language's conventions and [index] test_patterns)"),
});

export const SearchResult = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  file_path: z.string(),
  line_start: z.number().int(),
  line_end: z.number().int(),
  score: z.number(),
  community: z.number().int(),
  qualified_name: z.string(),
  signature: z.string(),
  description: z.string(),
  /** Which rankers found it: lexical, vector, graph, synapse. */
  via: z.array(z.string()),
  is_test: z.boolean().describe("Test code (by the language's conventions and [index] test_patterns); ranked below implementation unless the query is about tests"),
  role: z
    .enum(["source", "generated-copy", "vendored", "bench", "build-script", "example"])
    .optional()
    .describe("What the file is when not the project's own source: a generated copy (amalgamation), vendored code, a benchmark, a build script or an example; ranked below source unless asked for"),
  also: z
    .array(z.object({ id: z.string(), qualified_name: z.string(), type: z.string(), line_start: z.number().int(), line_end: z.number().int(), score: z.number() }))
    .optional()
    .describe("group_by file: the file's next best nodes"),
});

export const SkippedFile = z.object({ path: z.string(), reason: z.string(), detail: z.string().optional() });

export const UnsupportedFiles = z
  .array(z.object({ extension: z.string(), language: z.string(), files: z.number().int() }))
  .describe("Source files in languages the code graph does not read, by extension (\"42 .erl files: Erlang is not indexed\")");

/** "42 .erl files: Erlang is not indexed; 3 .pl files: Perl is not indexed" (empty when there are none). */
export function describeUnsupported(list: z.infer<typeof UnsupportedFiles> | undefined): string {
  return (list ?? []).map((u) => `${u.files.toLocaleString("en-US")} ${u.extension} file${u.files === 1 ? "" : "s"}: ${u.language} is not indexed`).join("; ");
}

export const BenchmarkRow = z.object({
  question: z.string(),
  tokens: z.number().int(),
  reduction_ratio: z.number(),
  latency_ms: z.number(),
  search_latency_ms: z.number(),
  cited_files: z.number().int(),
  gold_files: z.array(z.string()).optional(),
  recall: z.number().optional(),
  reciprocal_rank: z.number().optional(),
});

export type FreshnessT = z.infer<typeof Freshness>;
export type LayerT = z.infer<typeof Layer>;
export type CommunityRefT = z.infer<typeof CommunityRef>;
export type SearchResultT = z.infer<typeof SearchResult>;
export type CitationT = z.infer<typeof Citation>;
export type BenchmarkRowT = z.infer<typeof BenchmarkRow>;
