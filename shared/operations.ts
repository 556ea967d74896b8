import { z } from "zod";
import { QUERY_DOCS_DESCRIPTION, QueryDocsInput, QueryDocsOutput } from "./docs-schema.js";
import { BenchmarkRow, Citation, CommunityRef, Freshness, Layer, SearchResult, SkippedFile, UnsupportedFiles, projectPath } from "./schemas.js";

/**
 * Every operation is declared once here: its name, tool name, description, input and output
 * schemas. The daemon implements them, and the socket client, the MCP shim and the CLI expose them.
 * Descriptions are terse: an assistant reads the whole tool list on every turn.
 */
export interface Operation<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  tool: string;
  description: string;
  input: I;
  output: O;
  readOnly: boolean;
}

function op<I extends z.ZodRawShape, O extends z.ZodRawShape>(d: {
  name: string;
  description: string;
  input: I;
  output: O;
  readOnly: boolean;
}): Operation<z.ZodObject<I>, z.ZodObject<O>> {
  return { name: d.name, tool: `codemem_${d.name}`, description: d.description, input: z.object(d.input).strict(), output: z.object(d.output), readOnly: d.readOnly };
}

/**
 * Questions are often a whole bug report or stack trace pasted in: any 64 KB text fits (a character
 * is at least one byte). Beyond what ranking uses, long text costs little: its terms are capped by
 * how telling they are, and the names, paths and frames it mentions are what it weighs.
 */
export const QUESTION_MAX_CHARS = 100_000;
const questionText = z
  .string()
  .min(1)
  .max(QUESTION_MAX_CHARS, `at most ${QUESTION_MAX_CHARS} characters; pass the report's relevant part (its message, stack trace and the paths it names)`)
  // Whitespace alone asks nothing: refused like "" rather than answered with a generic context.
  .refine((s) => s.trim() !== "", "holds only whitespace; ask in words");

/** A query answer's token budget; its default follows the project's [query] budget (800, recursive 1.5×). */
const budget = (min: number, dflt: number) => z.number().int().min(min).max(20000).optional().describe(`Total o200k tokens of the answer (default ${dflt})`);

/** What ranked an answer: "hand-rules", or the learned model's family and file hash (`[query] ranker`). */
const RankerId = z.string().describe("hand-rules, or the learned model's id");

const answer = {
  context: z.string(),
  tokens: z.number().int().describe("o200k_base tokens of context"),
  tokenizer: z.string(),
  layers: z.array(Layer),
  freshness: Freshness,
};

export const build = op({
  name: "build",
  description: "Build or update the code index (incremental; force rebuilds all).",
  input: {
    project_path: projectPath,
    force: z.boolean().default(false).describe("Re-parse every file, not only changed ones"),
    optimize: z.boolean().default(false).describe("Also recluster and compact the index (slower)"),
    batch_size: z.number().int().min(1).max(100000).optional().describe("Nodes per embedding batch (default 1000)"),
    exclude_secrets: z.boolean().optional().describe("Leave likely secrets out; later builds keep the choice"),
    backend: z.string().optional().describe("local | postgres | lancedb; later calls follow it"),
    db_url: z.string().optional().describe("postgres URL without password; only the one codemem-mcp was started with"),
    history: z.number().int().min(0).max(100000).optional().describe("Re-learn co-change from the last N git commits"),
  },
  output: {
    nodes_processed: z.number().int(),
    nodes_embedded: z.number().int(),
    communities: z.number().int(),
    time_elapsed: z.number(),
    node_count: z.number().int(),
    edge_count: z.number().int(),
    files_indexed: z.number().int(),
    files_changed: z.number().int(),
    files_removed: z.number().int(),
    files_skipped: z.number().int(),
    skipped: z.array(SkippedFile).describe("Up to 50 files left out, with the reason"),
    unsupported: UnsupportedFiles,
    graph_source: z.string(),
    embedder: z.string(),
    history: z.object({ commits: z.number().int(), learned: z.number().int(), pairs: z.number().int() }).optional().describe("Git commits read as co-change (with history)"),
    filling: z.array(z.string()).optional().describe("What a whole-tree build writes after it answered (vectors, tokens, graph.json): answers are lexical and graph until `stats` shows none"),
    answerable_s: z.number().optional().describe("Seconds to answerable when the result is the complete build's"),
  },
  readOnly: false,
});

export const stats = op({
  name: "stats",
  description: "Index statistics and synapse store location.",
  input: { project_path: projectPath },
  output: {
    node_count: z.number().int(),
    community_count: z.number().int(),
    last_build: z.string(),
    backend: z.string(),
    edge_count: z.number().int(),
    file_count: z.number().int(),
    source_tokens: z.number().int(),
    index_path: z.string(),
    index_bytes: z.number().int(),
    synapse_store: z.string(),
    graph_source: z.string(),
    embedder: z.string(),
    ranker: RankerId,
    unsupported: UnsupportedFiles,
    freshness: Freshness,
  },
  readOnly: true,
});

export const query = op({
  name: "query",
  description: "Answer a question with a small cited context of the relevant code.",
  input: { project_path: projectPath, question: questionText.describe("A question, or a pasted bug report or stack trace"), budget: budget(200, 800) },
  output: {
    ...answer,
    ranker: RankerId,
    reduction_ratio: z.number().describe("Tokens of all indexed source / tokens of context"),
    source_tokens: z.number().int(),
    communities: z.array(CommunityRef),
    citations: z.array(Citation),
  },
  readOnly: true,
});

export const search = op({
  name: "search",
  description: "Hybrid lexical+vector+graph search for symbols and files; group_by file ranks distinct files.",
  input: {
    project_path: projectPath,
    query: questionText.describe("Names, words or pasted text to find"),
    limit: z.number().int().min(1).max(100).default(10).describe("Results (distinct files with group_by file)"),
    group_by: z.enum(["node", "file"]).default("node").describe("file: one result per file, its best node first"),
  },
  output: { results: z.array(SearchResult), ranker: RankerId, freshness: Freshness },
  readOnly: true,
});

export const wakeup = op({
  name: "wakeup",
  description: "Session-start overview: project, main areas, key symbols.",
  input: { project_path: projectPath },
  output: answer,
  readOnly: true,
});

export const skeleton = op({
  name: "skeleton",
  description: "File outline: signatures, docstrings, line numbers.",
  input: { project_path: projectPath, file_path: z.string().min(1).describe("Project-relative or absolute path inside the project") },
  output: {
    file_path: z.string(),
    language: z.string(),
    outline: z.string(),
    tokens: z.number().int(),
    file_tokens: z.number().int(),
    symbols: z.array(z.object({ id: z.string(), name: z.string(), type: z.string(), line_start: z.number().int(), line_end: z.number().int(), signature: z.string() })),
    freshness: Freshness,
  },
  readOnly: true,
});

export const recursiveQuery = op({
  name: "recursive_query",
  description: "Split a complex question, answer the parts, merge into one context.",
  input: { project_path: projectPath, question: questionText.describe("A question spanning several parts of the code"), budget: budget(300, 1200) },
  output: {
    ...answer,
    reduction_ratio: z.number(),
    source_tokens: z.number().int(),
    communities: z.array(CommunityRef),
    citations: z.array(Citation),
    sub_questions: z.array(z.object({ question: z.string(), citations: z.number().int() })),
    decomposition: z.enum(["provider", "heuristic"]),
    provider_error: z.string().optional(),
  },
  readOnly: true,
});

export const benchmark = op({
  name: "benchmark",
  description: "Retrieval benchmark: tokens, reduction, latency, recall, MRR.",
  input: {
    project_path: projectPath,
    questions_file: z.string().optional().describe("Project JSON file of [{question, gold_files?}] (default: from documented symbols)"),
    // Checked by questionList: a short schema keeps the tool list cheap.
    questions: z.array(z.unknown()).max(10_000).optional().describe("[{question, gold_files?}] instead of a file"),
    limit: z.number().int().min(1).max(500).optional().describe("Questions to run (default all)"),
  },
  output: {
    results: z.array(BenchmarkRow),
    averages: z.object({
      tokens: z.number(),
      reduction_ratio: z.number(),
      latency_ms: z.number(),
      search_latency_ms: z.number(),
      cited_files: z.number(),
      recall: z.number().optional(),
      mrr: z.number().optional(),
    }),
    query_count: z.number().int(),
    question_source: z.string(),
  },
  readOnly: true,
});

export const queryDocs: Operation<typeof QueryDocsInput, typeof QueryDocsOutput> = {
  name: "query_docs",
  tool: "codemem_query_docs",
  description: QUERY_DOCS_DESCRIPTION,
  input: QueryDocsInput,
  output: QueryDocsOutput,
  readOnly: true,
};

const NodeBrief = { id: z.string(), name: z.string(), type: z.string(), file_path: z.string(), line_start: z.number().int(), line_end: z.number().int() };

export const synapticNeighbors = op({
  name: "synaptic_neighbors",
  description: "Code used or changed together with given nodes, files or a query (learned from sessions and git history); when those run out, the seeds' tests by name, then files changed lately.",
  input: {
    project_path: projectPath,
    query: questionText.optional().describe("Seeds: the best search hits for this text"),
    node_ids: z.array(z.string()).max(50).optional().describe("Seeds: node ids or file paths"),
    depth: z.number().int().min(1).max(2).default(2).describe("Hops from the seeds"),
    k: z.number().int().min(1).max(50).default(10).describe("Neighbours returned"),
  },
  output: {
    seeds: z.array(z.string()),
    neighbors: z.array(
      z.object({
        ...NodeBrief,
        activation: z.number(),
        depth: z.number().int(),
        via: z.string(),
        reason: z.enum(["associated", "test_pair", "recent_change"]).describe("associated: used or changed with the seeds; after those run out, test_pair: a seed's test by name (or the code it tests), recent_change: among the files the project changed last"),
        co_activations: z.number().int().describe("Sessions' co-activations with `via`"),
        commits: z.number().int().describe("Commits that changed it with `via`"),
        last_at: z.string().nullable(),
      }),
    ),
  },
  readOnly: true,
});

export const synapseStats = op({
  name: "synapse_stats",
  description: "Synapse store: edges, LTP edges, total weight, top hubs.",
  input: { project_path: projectPath, top: z.number().int().min(1).max(50).default(10).describe("Hubs listed") },
  output: {
    edges: z.number().int(),
    ltp_edges: z.number().int(),
    total_weight: z.number(),
    nodes: z.number().int(),
    top_hubs: z.array(z.object({ id: z.string(), name: z.string().optional(), file_path: z.string().optional(), degree: z.number().int(), strength: z.number() })),
    last_decay_at: z.string().nullable(),
    history: z.object({ commits: z.number().int(), learned: z.number().int(), edges: z.number().int() }).describe("Git commits read, learned from, co-change pairs"),
    store: z.string(),
  },
  readOnly: true,
});

export const synapseDecay = op({
  name: "synapse_decay",
  description: "Decay the learned synapses now.",
  input: { project_path: projectPath, ticks: z.number().int().min(0).max(1000).default(1).describe("Manual ticks; 0 = by the time elapsed since the last decay") },
  output: { ticks: z.number().int(), decayed: z.number().int(), pruned: z.number().int(), edges: z.number().int() },
  readOnly: false,
});

export const exportSynapseMemory = op({
  name: "export_synapse_memory",
  description: "Write the strongest learned associations as markdown memory.",
  input: { project_path: projectPath, limit: z.number().int().min(1).max(200).default(30).describe("Associations written") },
  output: { written: z.array(z.string()), tokens: z.number().int(), markdown: z.string() },
  readOnly: false,
});

/** A symbol as trace and impact take it: a node id, `path:Name`, `Class.method` or a bare name. */
const symbolSpec = z.string().min(1).max(1000);
/** A graph entry: where it is (`path:line`) and what. */
const GraphEntry = { id: z.string(), name: z.string(), type: z.string(), at: z.string() };

export const trace = op({
  name: "trace",
  description: "Callers or callees of a symbol, by depth (path:line each).",
  input: {
    project_path: projectPath,
    symbol: symbolSpec.describe("Name, Class.method, path:name or node id"),
    direction: z.enum(["callers", "callees"]).default("callers").describe("Which way to walk"),
    depth: z.number().int().min(1).max(5).default(2).describe("Hops"),
  },
  output: {
    symbol: z.object(GraphEntry),
    direction: z.string(),
    levels: z.array(
      z.object({
        depth: z.number().int(),
        entries: z.array(z.object({ ...GraphEntry, via: z.string().describe("The entry one hop closer to the symbol"), dispatch: z.boolean().optional().describe("One of several run-time candidates"), confidence: z.number().optional().describe("1/candidates") })),
        truncated: z.number().int().describe("Entries of this depth left out"),
      }),
    ),
    freshness: Freshness,
  },
  readOnly: true,
});

export const impact = op({
  name: "impact",
  description: "What a change affects: transitive callers, tests, co-change partners; for symbols, files or a git diff.",
  input: {
    project_path: projectPath,
    symbols: z.array(symbolSpec).max(50).optional().describe("As trace takes them"),
    files: z.array(z.string().min(1)).max(200).optional().describe("Project files"),
    diff: z.string().min(1).max(200).optional().describe("Git ref: working tree changes since it (e.g. HEAD)"),
    depth: z.number().int().min(1).max(6).default(3).describe("Caller hops"),
    budget: budget(100, 1000),
  },
  output: {
    seeds: z.array(z.object(GraphEntry)),
    changed_files: z.array(z.string()).describe("Files the diff changed"),
    callers: z.array(z.object({ ...GraphEntry, depth: z.number().int(), score: z.number(), dispatch: z.boolean().optional(), confidence: z.number().optional() })),
    tests: z.array(z.object({ file_path: z.string(), score: z.number(), via: z.string().describe("calls, imports or co-change") })),
    co_change: z.array(z.object({ file_path: z.string(), commits: z.number().int(), weight: z.number() })),
    tokens: z.number().int().describe("o200k tokens of the lists"),
    truncated: z.number().int().describe("Entries left out for the budget"),
    freshness: Freshness,
  },
  readOnly: true,
});

/** Internal: assistant and git hooks report what they touched (not an MCP tool). */
export const hookEvent = op({
  name: "hook_event",
  description: "Record an assistant or git hook event: reinforce the files it touched.",
  input: {
    project_path: projectPath,
    event: z.enum(["post_tool_use", "session_start", "git_commit"]),
    files: z.array(z.string()).max(500).default([]),
    tool: z.string().optional(),
    tokens_saved: z.number().int().min(0).optional(),
  },
  output: { reinforced_pairs: z.number().int(), nodes: z.number().int() },
  readOnly: false,
});

export const OPERATIONS = [
  build, stats, query, search, wakeup, skeleton, recursiveQuery, queryDocs, benchmark,
  trace, impact, synapticNeighbors, synapseStats, synapseDecay, exportSynapseMemory, hookEvent,
] as const;

/** Operations published as MCP tools (hook_event is internal to hooks). */
export const TOOLS = OPERATIONS.filter((o) => o.name !== "hook_event");
export type OperationName = (typeof OPERATIONS)[number]["name"];

export function operationByName(name: string): Operation | undefined {
  return OPERATIONS.find((o) => o.name === name || o.tool === name) as Operation | undefined;
}
export type In<O extends Operation> = z.input<O["input"]>;
export type Out<O extends Operation> = z.infer<O["output"]>;
