import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { CodememError } from "../../shared/errors.js";
import type { FileExtract, GraphCommunity, GraphEdge } from "../index/types.js";
import type { NodeRecord } from "../index/resolve.js";
import { SCHEMA, SCHEMA_VERSION } from "./schema.js";

export interface StoredNode extends NodeRecord {
  rowid: number;
  text_hash: string;
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
  upsertFiles: { row: FileRow; extract: FileExtract }[];
  /** Files whose nodes are all replaced by `nodes` (changed, removed, or every file when the graph is external). */
  replaceNodesOf: string[];
  nodes: { node: NodeRecord; textHash: string; lexical: LexicalFields; vector: Float32Array; fileWords?: string }[];
  edgesAdded: GraphEdge[];
  edgesRemoved: GraphEdge[];
  communities: GraphCommunity[];
  /** Community of every node. */
  communityOf: Map<string, number>;
  /** Existing nodes whose community moved; all of `communityOf` when absent (after re-clustering). */
  communityUpdates?: Map<string, number>;
  meta: Record<string, string>;
}

export interface LexicalFields {
  name: string;
  qualified: string;
  signature: string;
  doc: string;
  path: string;
  body: string;
}

/** The local backend: SQLite (WAL) with FTS5 and sqlite-vec, one file per project. */
export class LocalStore {
  private constructor(readonly db: Database.Database, readonly file: string) {}

  static exists(file: string): boolean {
    return fs.existsSync(file);
  }

  /** Opens (creating when asked) the index. `dim` is needed to create the vector table. */
  static open(file: string, opts: { create: boolean; dim?: number; readonly?: boolean }): LocalStore {
    if (!opts.create && !fs.existsSync(file)) {
      throw new CodememError("INDEX_MISSING", `No index at ${file}; run \`codemem build <project>\` first.`, { file });
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let db: Database.Database;
    try {
      db = new Database(file, { readonly: !!opts.readonly, fileMustExist: !opts.create });
      sqliteVec.load(db);
      if (!opts.readonly) {
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
      }
      db.pragma("busy_timeout = 5000");
      db.pragma("cache_size = -65536");
    } catch (err) {
      throw new CodememError("INDEX_CORRUPT", `Cannot open the index ${file}: ${(err as Error).message}. Rebuild it with \`codemem build --force\`.`, { file });
    }
    const store = new LocalStore(db, file);
    try {
      const hasMeta = db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").get();
      if (!hasMeta) {
        if (!opts.create || !opts.dim) throw new CodememError("INDEX_MISSING", `The index ${file} is empty; run \`codemem build\`.`);
        db.exec(SCHEMA(opts.dim));
        store.setMeta({ schema_version: SCHEMA_VERSION, dim: String(opts.dim) });
      } else if (store.meta("schema_version") !== SCHEMA_VERSION) {
        throw new CodememError("INDEX_CORRUPT", `The index ${file} has schema ${store.meta("schema_version")}, this codemem needs ${SCHEMA_VERSION}; rebuild with \`codemem build --force\`.`);
      }
    } catch (err) {
      db.close();
      if (err instanceof CodememError) throw err;
      throw new CodememError("INDEX_CORRUPT", `The index ${file} is unreadable (${(err as Error).message}); rebuild with \`codemem build --force\`.`, { file });
    }
    return store;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  meta(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  allMeta(): Record<string, string> {
    const rows = this.db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  setMeta(kv: Record<string, string>): void {
    const st = this.db.prepare("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    for (const [k, v] of Object.entries(kv)) st.run(k, v);
  }

  files(): FileRow[] {
    return this.db.prepare("SELECT path, hash, size, language, tokens, line_count, mtime_ms FROM files ORDER BY path").all() as FileRow[];
  }

  extracts(): FileExtract[] {
    const rows = this.db.prepare("SELECT extract FROM files ORDER BY path").all() as { extract: string }[];
    return rows.map((r) => JSON.parse(r.extract) as FileExtract);
  }

  /** Node rowid, id and text hash of the nodes in the given files (for vector reuse). */
  nodeHashes(files: string[]): Map<string, { rowid: number; textHash: string }> {
    const out = new Map<string, { rowid: number; textHash: string }>();
    const st = this.db.prepare("SELECT rowid, id, text_hash FROM nodes WHERE file_path = ?");
    for (const f of files) for (const r of st.all(f) as { rowid: number; id: string; text_hash: string }[]) out.set(r.id, { rowid: r.rowid, textHash: r.text_hash });
    return out;
  }

  vector(rowid: number): Float32Array | undefined {
    const r = this.db.prepare("SELECT embedding FROM vec_nodes WHERE rowid = ?").get(BigInt(rowid)) as { embedding: Buffer } | undefined;
    if (!r) return undefined;
    return new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength));
  }

  edges(): GraphEdge[] {
    return this.db.prepare("SELECT source, target, type FROM edges").all() as GraphEdge[];
  }

  communities(): GraphCommunity[] {
    const rows = this.db.prepare("SELECT id, name, description, size, files FROM communities ORDER BY id").all() as (GraphCommunity & { files: string })[];
    return rows.map((r) => ({ ...r, files: JSON.parse(r.files as unknown as string) as string[] }));
  }

  allNodes(): StoredNode[] {
    return this.db.prepare("SELECT * FROM nodes ORDER BY rowid").all() as StoredNode[];
  }

  /** Applies one build atomically: a concurrent reader sees the old index or the new one. */
  apply(delta: BuildDelta): void {
    const db = this.db;
    const delNodesOfFile = db.prepare("SELECT rowid FROM nodes WHERE file_path = ?");
    const delNode = db.prepare("DELETE FROM nodes WHERE rowid = ?");
    const delFts = db.prepare("DELETE FROM fts_nodes WHERE rowid = ?");
    const delFtsFile = db.prepare("DELETE FROM fts_files WHERE rowid = ?");
    const insFtsFile = db.prepare("INSERT INTO fts_files(rowid, path, body) VALUES (?, ?, ?)");
    const delVec = db.prepare("DELETE FROM vec_nodes WHERE rowid = ?");
    const delFile = db.prepare("DELETE FROM files WHERE path = ?");
    const upFile = db.prepare(
      "INSERT INTO files(path, hash, size, language, tokens, line_count, mtime_ms, extract, indexed_at) VALUES (@path, @hash, @size, @language, @tokens, @line_count, @mtime_ms, @extract, @indexed_at) " +
        "ON CONFLICT(path) DO UPDATE SET hash=excluded.hash, size=excluded.size, language=excluded.language, tokens=excluded.tokens, line_count=excluded.line_count, mtime_ms=excluded.mtime_ms, extract=excluded.extract, indexed_at=excluded.indexed_at",
    );
    const insNode = db.prepare(
      "INSERT INTO nodes(id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community, code, text_hash) " +
        "VALUES (@id, @name, @type, @file_path, @qualified_name, @signature, @docstring, @description, @line_start, @line_end, @language, @parent, @community, @code, @text_hash)",
    );
    const insFts = db.prepare("INSERT INTO fts_nodes(rowid, name, qualified, signature, doc, path, body) VALUES (?, ?, ?, ?, ?, ?, ?)");
    const insVec = db.prepare("INSERT INTO vec_nodes(rowid, embedding) VALUES (?, ?)");
    const insEdge = db.prepare("INSERT OR IGNORE INTO edges(source, target, type) VALUES (?, ?, ?)");
    const delEdge = db.prepare("DELETE FROM edges WHERE source = ? AND target = ? AND type = ?");
    const setCommunity = db.prepare("UPDATE nodes SET community = ? WHERE id = ?");
    const now = new Date().toISOString();

    db.transaction(() => {
      for (const f of new Set([...delta.replaceNodesOf, ...delta.removedFiles])) {
        for (const { rowid } of delNodesOfFile.all(f) as { rowid: number }[]) {
          delNode.run(rowid);
          delFts.run(rowid);
          delFtsFile.run(rowid);
          delVec.run(BigInt(rowid));
        }
      }
      for (const f of delta.removedFiles) delFile.run(f);
      for (const { row, extract } of delta.upsertFiles) upFile.run({ ...row, extract: JSON.stringify(extract), indexed_at: now });
      for (const { node, textHash, lexical, vector, fileWords } of delta.nodes) {
        const { lastInsertRowid: rowid } = insNode.run({
          id: node.id,
          name: node.name,
          type: node.type,
          file_path: node.file_path,
          qualified_name: node.qualified_name,
          signature: node.signature,
          docstring: node.docstring,
          description: node.description,
          line_start: node.line_start,
          line_end: node.line_end,
          language: node.language,
          parent: node.parent ?? null,
          community: delta.communityOf.get(node.id) ?? -1,
          code: node.code,
          text_hash: textHash,
        });
        insFts.run(rowid, lexical.name, lexical.qualified, lexical.signature, lexical.doc, lexical.path, lexical.body);
        insVec.run(BigInt(rowid), Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
        if (fileWords !== undefined) insFtsFile.run(rowid, lexical.path, fileWords);
      }
      for (const e of delta.edgesRemoved) delEdge.run(e.source, e.target, e.type);
      for (const e of delta.edgesAdded) insEdge.run(e.source, e.target, e.type);
      for (const [id, c] of delta.communityUpdates ?? delta.communityOf) setCommunity.run(c, id);
      db.prepare("DELETE FROM communities").run();
      const insC = db.prepare("INSERT INTO communities(id, name, description, size, files) VALUES (?, ?, ?, ?, ?)");
      for (const c of delta.communities) insC.run(c.id, c.name, c.description, c.size ?? 0, JSON.stringify(c.files ?? []));
      this.setMeta(delta.meta);
    })();
  }

  /** Rebuilds FTS segments, refreshes planner statistics and compacts the file (`build --optimize`). */
  optimize(): void {
    this.db.exec("INSERT INTO fts_nodes(fts_nodes) VALUES('optimize')");
    this.db.exec("INSERT INTO fts_files(fts_files) VALUES('optimize')");
    this.db.exec("ANALYZE");
    this.db.pragma("wal_checkpoint(TRUNCATE)");
    this.db.exec("VACUUM");
  }

  sizeBytes(): number {
    let total = 0;
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        total += fs.statSync(this.file + suffix).size;
      } catch {
        // absent WAL files are fine
      }
    }
    return total;
  }
}
