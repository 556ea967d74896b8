/**
 * Schema of the local index (codegraph-out/codemem_db/index.db). Bump SCHEMA_VERSION on change.
 * `files.extract` is the file's lean extract (no code), JSON deflated (raw deflate).
 */
export const SCHEMA_VERSION = "6";

export const SCHEMA = (dim: number) => `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
  path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, language TEXT NOT NULL,
  tokens INTEGER NOT NULL, line_count INTEGER NOT NULL, mtime_ms REAL NOT NULL, extract BLOB NOT NULL, indexed_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS nodes (
  rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, name TEXT NOT NULL, type TEXT NOT NULL,
  file_path TEXT NOT NULL, qualified_name TEXT NOT NULL, signature TEXT NOT NULL, docstring TEXT NOT NULL,
  description TEXT NOT NULL, line_start INTEGER NOT NULL, line_end INTEGER NOT NULL, language TEXT NOT NULL,
  parent TEXT, community INTEGER NOT NULL, text_hash TEXT NOT NULL, vec_scale REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS nodes_file ON nodes(file_path);
CREATE INDEX IF NOT EXISTS nodes_community ON nodes(community);
-- A node's code and the exact texts its lexical rows were indexed with: the JSON array [code, name,
-- qualified, signature, doc, path, body, file words or null], raw-deflated (one call per node: a
-- deflate costs ~15 µs however small its input). The FTS tables keep no copy of their text
-- (contentless): deleting a row is FTS5's 'delete' command given the values it indexed, which
-- takes back the row's share of the BM25 statistics exactly (contentless_delete's tombstones do not).
CREATE TABLE IF NOT EXISTS node_text (rowid INTEGER PRIMARY KEY, text BLOB NOT NULL);
-- Edge endpoints are node ids interned once: an id is ~40 characters, an edge was ~200 bytes with
-- its target index.
CREATE TABLE IF NOT EXISTS symbols (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
-- dispatch: a call's run-time candidate's confidence (GraphEdge.dispatch), NULL on every other edge.
CREATE TABLE IF NOT EXISTS edges (source INTEGER NOT NULL, target INTEGER NOT NULL, type TEXT NOT NULL, dispatch REAL, PRIMARY KEY (source, target, type)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_target ON edges(target);
CREATE TABLE IF NOT EXISTS communities (id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL, size INTEGER NOT NULL, files TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_nodes USING fts5(
  name, qualified, signature, doc, path, body, content='', tokenize='porter unicode61'
);
-- Whole-file lexical index: one row per file, rowid = the file's module node.
CREATE VIRTUAL TABLE IF NOT EXISTS fts_files USING fts5(path, body, content='', tokenize='porter unicode61');
-- Vectors as int8 with a per-node scale (nodes.vec_scale): a quarter of float32's size, cosine
-- within about 1e-3 of it; the dense in-memory matrix of readers holds them the same way.
CREATE VIRTUAL TABLE IF NOT EXISTS vec_nodes USING vec0(embedding int8[${dim}] distance_metric=cosine);
`;
