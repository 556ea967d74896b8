import type { FileExtract, GraphCommunity, GraphEdge } from "../index/types.js";
import type { NodeRecord } from "../index/resolve.js";
import type { BackendName } from "../../shared/config.js";

export type { BackendName };

/**
 * The storage interface every backend implements. A build writes through `apply` (one atomic step:
 * a concurrent reader sees the old index or the new one, never half); the retriever reads the
 * catalog once and asks the store for lexical and vector candidates per question.
 *
 * Node keys: every node has an integer `rowid` assigned by the store; it is stable until the node's
 * file is re-indexed. Lexical and vector searches answer with rowids, best first.
 */
/**
 * A lexical match: `score` grows with relevance (BM25, or ts_rank on PostgreSQL) and is comparable
 * only within one answer, so the retriever normalises it per question.
 */
export interface LexicalHit {
  rowid: number;
  score: number;
}

export interface IndexStore {
  readonly backend: BackendName;
  /** Where the index lives, safe to print: a file path, or a URL without password plus schema. */
  readonly location: string;

  meta(): Promise<Record<string, string>>;
  /** Rows of every indexed file by path, or of those of `paths` that are indexed. */
  files(paths?: string[]): Promise<FileRow[]>;
  /** Stored parse results of every file (or of those of `paths`), for incremental builds. */
  extracts(paths?: string[]): Promise<FileExtract[]>;
  /** rowid and text hash of the nodes of the given files (for vector reuse). */
  nodeHashes(files: string[]): Promise<Map<string, { rowid: number; textHash: string }>>;
  /** Stored vectors by rowid; missing rowids are absent from the answer. */
  vectors(rowids: number[]): Promise<Map<number, Float32Array>>;
  edges(): Promise<GraphEdge[]>;
  /** Edges from these nodes, of every type (graph.json's rewrite of the files a build changed); backends without it are written whole. */
  edgesFrom?(ids: string[]): Promise<GraphEdge[]>;
  /** Edges at either end of these nodes, imports left out (file-to-file imports are too broad to expand along). */
  neighbors(ids: string[]): Promise<GraphEdge[]>;
  /** The `imports` edges into these module nodes (file paths): who imports them, for impact. */
  importers(files: string[]): Promise<GraphEdge[]>;
  /** How many edges of these types each node has, at either end: centrality without holding the graph. */
  degrees(types: string[]): Promise<Map<string, number>>;
  /** Communities; with `files: false` their file lists may be left out (readers: 6,869 lists at 300K nodes cost 80 ms a save). */
  communities(opts?: { files?: boolean }): Promise<GraphCommunity[]>;
  /**
   * Ranking metadata (no code, no vector) of every node, or of the nodes of `files`. `slice`: every
   * node's, read that many rows at a time in one snapshot, yielding between slices, so answers on
   * this thread go on meanwhile (a reader opened beside a warm one); backends whose reads do not
   * hold the thread ignore it.
   */
  catalog(files?: string[], opts?: { slice?: number }): Promise<CatalogNode[]>;
  /** Applies one build atomically. */
  apply(delta: BuildDelta | PendingDelta): Promise<void>;
  /**
   * A deferred build's fill (build.ts, fillIndex), in one transaction: vectors of nodes still holding
   * `textHash` and none yet, tokens of files still of `hash`; sets the token total and clears
   * `filling`. Answers the new total. Only the local backend defers.
   */
  fill?(f: { vectors: { id: string; textHash: string; vector: Float32Array }[]; tokens: { path: string; hash: string; tokens: number }[] }, opts?: { last: boolean }): Promise<number>;
  /**
   * What an unfinished fill left (its process stopped or killed between parts): nodes without a
   * vector, with what their embedding text is made of, and files whose tokens are 0 (not counted yet,
   * or empty). Only the local backend defers.
   */
  unfilled?(): Promise<Unfilled>;
  /** Compacts and re-indexes (`build --optimize`). */
  optimize(): Promise<void>;
  /**
   * A reader whose index was replaced by another (a forced build swapped a new file in): it still
   * reads the one it opened, whole and consistent, so it can answer until a reader of the new one
   * is ready. Backends that change in place do not have it.
   */
  replaced?(): boolean;

  /**
   * Nodes matching any of `words` (already split and lower-cased), best first by BM25 or the backend's
   * equivalent. Words in `common` (frequent in the project) still score, but a row holding only such
   * words need not be a candidate when another word is rare: a backend may skip them (SQLite does).
   */
  lexicalNodes(words: string[], limit: number, common?: ReadonlySet<string>): Promise<LexicalHit[]>;
  /** Files matching any of `words` by whole-file text, best first; answers the file's module-node rowid. `common` as for lexicalNodes. */
  lexicalFiles(words: string[], limit: number, common?: ReadonlySet<string>): Promise<LexicalHit[]>;
  /** Nearest nodes to the unit vector `q` by cosine similarity, best first. */
  nearest(q: Float32Array, limit: number): Promise<{ rowid: number; sim: number }[]>;
  /** Source text of one node. */
  code(rowid: number): Promise<string>;
  /** Warm caches (if the backend keeps any) re-read these files after a small build. */
  refresh(files: string[]): Promise<void>;
  /** Loads what the backend keeps in memory for searches (the local vector matrix) without blocking reads meanwhile. */
  warm?(): Promise<void>;
  /** Runs reads that must see one version of the index (a build may commit meanwhile); plain calls where the backend has no such snapshot. */
  snapshot?<T>(reads: () => Promise<T>): Promise<T>;
  sizeBytes(): Promise<number>;
  close(): Promise<void>;
}


export interface OpenStoreOptions {
  /** "read": the index must exist. "build": created when absent. */
  mode: "read" | "build";
  /** Vector width, needed to create an index. */
  dim?: number;
  /**
   * A forced build may replace an index that is unreadable, of an older schema, or of another
   * vector width. The replacement becomes visible only when `apply` commits.
   */
  force?: boolean;
  /** Rows per write batch (`--batch-size`). */
  batchSize?: number;
  /**
   * Close without checkpointing the write-ahead log (SQLite): a watch build's save must not wait for
   * the checkpoint's writes and fsyncs (100–450 ms at 60K nodes). A later close without it checkpoints.
   */
  keepWal?: boolean;
  /**
   * A user's plain build checks every page first (local backend: SQLite's quick_check, 0.2-0.5 s
   * at the stdlib's 36 MB index) and fails INDEX_CORRUPT on a damaged index: an incremental build
   * reads only what changed, and exited 0 leaving the damage in place. Watch builds skip it.
   */
  check?: boolean;
}

/** A node as kept in memory for ranking; code is fetched on demand. */
export interface CatalogNode {
  rowid: number;
  id: string;
  name: string;
  type: string;
  file_path: string;
  qualified_name: string;
  signature: string;
  docstring: string;
  description: string;
  line_start: number;
  line_end: number;
  language: string;
  parent: string | null;
  community: number;
}

export interface FileRow {
  path: string;
  hash: string;
  size: number;
  language: string;
  tokens: number;
  line_count: number;
  mtime_ms: number;
}

/** Everything one build changes, applied in a single transaction. */
export interface BuildDelta {
  removedFiles: string[];
  upsertFiles: { row: FileRow; extract: FileExtract; stored?: Buffer }[];
  /** Files whose nodes are all replaced by `nodes` (changed, removed, or every file when the graph is external). */
  replaceNodesOf: string[];
  /** `stored`: the node's stored text (a local index's), made by the parse worker; made by the write when absent. */
  nodes: { node: NodeRecord; textHash: string; lexical: LexicalFields; vector: Float32Array; fileWords?: string; stored?: Buffer }[];
  edgesAdded: GraphEdge[];
  edgesRemoved: GraphEdge[];
  communities: GraphCommunity[];
  /** Community of every node. */
  communityOf: Map<string, number>;
  /** Existing nodes whose community moved; all of `communityOf` when absent (after re-clustering). */
  communityUpdates?: Map<string, number>;
  meta: Record<string, string>;
}

/** What a node's stored text is made of. */
export type NodeTextOf = { node: Pick<NodeRecord, "code">; lexical: LexicalFields; fileWords?: string };

/** The communities after a build: their table and every node's. */
export type Clustering = Pick<BuildDelta, "communities" | "communityOf">;

/**
 * A delta whose communities are still being detected (a large full build's, on a thread beside the
 * write): the local store writes what does not need them first and awaits them where it does.
 */
export type PendingDelta = Omit<BuildDelta, "communities" | "communityOf"> & { clustering: Promise<Clustering> };

/** The delta with its communities, for a store that needs them before it writes anything. */
export async function settled(delta: BuildDelta | PendingDelta): Promise<BuildDelta> {
  return "clustering" in delta ? { ...delta, ...(await delta.clustering) } : delta;
}

/** Text fields of one node for lexical search, most specific first. Identifiers are already split into words. */
export interface LexicalFields {
  name: string;
  qualified: string;
  signature: string;
  doc: string;
  path: string;
  body: string;
}

/** BM25 column weights of `LexicalFields` in order: name, qualified name, signature, docstring, path, body. */
export const LEXICAL_WEIGHTS = [8, 4, 2, 2.5, 3, 1] as const;

/** A node a fill has not embedded yet: the fields its embedding text is made of (documents.ts, nodeDocuments) and its text hash as written. */
export interface UnfilledNode {
  id: string;
  name: string;
  qualified_name: string;
  type: NodeRecord["type"];
  signature: string;
  docstring: string;
  file_path: string;
  code: string;
  text_hash: string;
  /** A module's file words. */
  fileWords?: string;
}

/** See IndexStore.unfilled. */
export interface Unfilled {
  nodes: UnfilledNode[];
  /** Names of every node's children, by parent id, in the index's order. */
  childNames: Map<string, string[]>;
  files: { path: string; hash: string }[];
}
