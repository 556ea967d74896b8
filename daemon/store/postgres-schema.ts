/**
 * Layout of one project's index in PostgreSQL: every table lives in the project's own schema, so
 * several projects share a database without seeing each other. Statements run with
 * `search_path = <project schema>, <schema of the vector extension>`, hence unqualified names.
 *
 * Migrations are numbered and applied in order, each recorded in `schema_migrations`; a new
 * codemem adds one at the end and never edits an applied one.
 */

/** Text search configuration: identifiers arrive split into words, so English stemming helps ("parsing" finds "parse"). */
export const TS_CONFIG = "english";

/**
 * ts_rank weights for {D, C, B, A}, after `LEXICAL_WEIGHTS` (name 8, qualified 4, signature/doc/path
 * 2–3, body 1) scaled so the name is 1.
 */
export const NODE_RANK_WEIGHTS = "{0.125, 0.3, 0.5, 1.0}";
/** Whole-file rows: path (A) counts twice the body (D), as in the local backend. */
export const FILE_RANK_WEIGHTS = "{0.5, 0, 0, 1.0}";

/**
 * Searchable text per row is truncated to this many characters: a tsvector must stay under 1 MB,
 * and one oversized file must not fail a whole build.
 */
export const MAX_LEXICAL_CHARS = 250_000;

/** Tables of one project, for VACUUM and size accounting. */
export const TABLES = ["meta", "files", "nodes", "vectors", "lexical", "file_lexical", "edges", "communities", "schema_migrations"] as const;

/**
 * The search indexes. A fresh build drops them, loads the rows, then creates them once: building
 * an HNSW graph over all rows is several times faster than inserting rows into it one by one.
 */
export const SEARCH_INDEXES: { name: string; sql: string }[] = [
  { name: "vectors_embedding", sql: "CREATE INDEX vectors_embedding ON vectors USING hnsw (embedding vector_cosine_ops)" },
  { name: "lexical_lexical", sql: "CREATE INDEX lexical_lexical ON lexical USING gin (lexical)" },
  { name: "file_lexical_lexical", sql: "CREATE INDEX file_lexical_lexical ON file_lexical USING gin (lexical)" },
];

export interface Migration {
  version: number;
  name: string;
  /** Statements for a vector width of `dim`. */
  sql: (dim: number) => string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: "initial layout",
    // Vectors and tsvectors sit in tables of their own, keyed by the node's rowid: rewriting a node's
    // community (every node after re-clustering) leaves the HNSW and GIN indexes alone, and a
    // lexical search reads small rows, not 1.5 kB vectors.
    // No foreign keys: apply deletes dependants explicitly, which is cheaper than per-row triggers.
    sql: (dim) => `
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE files (
  path text PRIMARY KEY, hash text NOT NULL, size bigint NOT NULL, language text NOT NULL,
  tokens integer NOT NULL, line_count integer NOT NULL, mtime_ms double precision NOT NULL,
  extract text NOT NULL, indexed_at timestamptz NOT NULL
);
CREATE TABLE nodes (
  rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id text NOT NULL UNIQUE, name text NOT NULL, type text NOT NULL,
  file_path text NOT NULL, qualified_name text NOT NULL, signature text NOT NULL, docstring text NOT NULL,
  description text NOT NULL, line_start integer NOT NULL, line_end integer NOT NULL, language text NOT NULL,
  parent text, community integer NOT NULL, code text NOT NULL, text_hash text NOT NULL
);
CREATE INDEX nodes_file ON nodes (file_path);
CREATE TABLE vectors (rowid bigint PRIMARY KEY, embedding vector(${dim}) NOT NULL);
CREATE TABLE lexical (rowid bigint PRIMARY KEY, lexical tsvector NOT NULL);
CREATE TABLE file_lexical (rowid bigint PRIMARY KEY, lexical tsvector NOT NULL);
CREATE TABLE edges (source text NOT NULL, target text NOT NULL, type text NOT NULL, PRIMARY KEY (source, target, type));
CREATE INDEX edges_target ON edges (target);
CREATE TABLE communities (id integer PRIMARY KEY, name text NOT NULL, description text NOT NULL, size integer NOT NULL, files text[] NOT NULL);
${SEARCH_INDEXES.map((i) => i.sql).join(";\n")};
`,
  },
  {
    version: 2,
    name: "dispatch candidates on edges",
    // A call's run-time candidate's confidence (GraphEdge.dispatch), NULL on every other edge. An index
    // built before has none: INDEX_VERSION 7 makes the next build resolve every file again.
    sql: () => "ALTER TABLE edges ADD COLUMN dispatch double precision",
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

export const MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())";
