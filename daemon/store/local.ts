import fs from "node:fs";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { CodememError, isDiskFullError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { prepareFile, SQLITE_SIDECARS } from "../../shared/own-files.js";
import type { FileExtract, GraphCommunity, GraphEdge } from "../index/types.js";
import { SCHEMA, SCHEMA_VERSION } from "./schema.js";
import { dequantize, quantize, type Quantized } from "./vector-matrix.js";
import { deflateApart, deflateText, extractJob, textJob, type NodeText } from "./deflate-thread.js";
import { VectorThread } from "./vector-thread.js";
import { bm25, FILE_WEIGHTS } from "./bm25.js";
import { LEXICAL_WEIGHTS, type BuildDelta, type CatalogNode, type FileRow, type IndexStore, type LexicalHit, type OpenStoreOptions, type PendingDelta, type Unfilled, type UnfilledNode } from "./types.js";

const CATALOG_COLUMNS = "rowid, id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community";
type CatalogRow = [number, string, string, string, string, string, string, string, string, number, number, string, string | null, number];
/** A row of CATALOG_COLUMNS, in their order. */
function catalogNode(r: CatalogRow): CatalogNode {
  return { rowid: r[0], id: r[1], name: r[2], type: r[3], file_path: r[4], qualified_name: r[5], signature: r[6], docstring: r[7], description: r[8], line_start: r[9], line_end: r[10], language: r[11], parent: r[12], community: r[13] };
}
/** Edges with their endpoints' node ids (edges store interned symbols). */
const EDGE_SELECT = "SELECT s.name AS source, t.name AS target, e.type AS type, e.dispatch AS dispatch FROM edges e JOIN symbols s ON s.id = e.source JOIN symbols t ON t.id = e.target";
/** Rows of EDGE_SELECT as edges: `dispatch` only where set. */
function edgeRows(rows: unknown[]): GraphEdge[] {
  for (const r of rows as GraphEdge[]) if (r.dispatch === null) delete r.dispatch;
  return rows as GraphEdge[];
}

/**
 * The local backend: SQLite (WAL) with FTS5 and sqlite-vec, one file per project. Read-mode stores
 * keep every vector in one dense matrix, on a thread of their own (vector-thread.ts): exact cosine
 * search over it beats sqlite-vec's scan, and runs beside the lexical queries.
 */
export class LocalStore implements IndexStore {
  readonly backend = "local" as const;
  /** A forced rebuild that cannot reuse the file writes `<file>.new`, swapped in on close after `apply`. */
  private replacing = false;
  private applied = false;
  /** This build created the file: if it ends without an `apply`, the file goes (no empty index stays behind). */
  private created = false;
  /** A reader's vector search (the dense matrix on a thread of its own), started by the first vector search or warm(). */
  private vectorThread?: VectorThread;
  private stmts = new Map<string, Database.Statement>();

  private constructor(
    readonly db: Database.Database,
    private readonly file: string,
    private readonly target: string,
  ) {}

  /** The file a reader opened (see replaced). */
  private inode?: number;

  replaced(): boolean {
    if (this.inode === undefined) return false;
    try {
      return fs.statSync(this.target).ino !== this.inode;
    } catch {
      return true;
    }
  }

  get location(): string {
    return this.target;
  }

  /** See OpenStoreOptions.keepWal. */
  private keepWal = false;

  static async open(file: string, opts: OpenStoreOptions): Promise<LocalStore> {
    // Readers load the vector matrix on their first vector search.
    if (opts.mode === "read") return LocalStore.openFile(file, file, { create: false, readonly: true });
    let store: LocalStore;
    try {
      const existed = fs.existsSync(file);
      store = LocalStore.openFile(file, file, { create: true, dim: opts.dim });
      store.created = !existed;
      store.keepWal = !!opts.keepWal;
      if (opts.check && existed && !opts.force && !store.intact()) {
        store.db.close();
        throw new CodememError("INDEX_CORRUPT", `The index ${file} is damaged (SQLite's quick_check found bad pages); a build cannot update it. Rebuild it with \`codemem build --force\` (the damaged file is kept aside as ${path.basename(file)}.corrupt-<time>).`, { file });
      }
      if (opts.force && existed) {
        // A forced rebuild replaces every row. Built beside the old file and swapped in at the end, it
        // does not delete each old row first (FTS5 forgets a row only when told the values it indexed:
        // ~10 s of a 29 s write phase at Go src's 60K nodes), and readers keep the old index meanwhile.
        // A damaged index (a bad page is found only when read) is kept as <file>.corrupt-<time>.
        const damaged = !store.intact();
        // The index's own policy (secret redaction) outlives a rebuild that does not restate it.
        const redaction = damaged ? undefined : store.metaValue("exclude_secrets");
        store.db.close();
        if (damaged) {
          const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
          fs.renameSync(file, aside);
          for (const s of ["-wal", "-shm"]) fs.rmSync(file + s, { force: true });
          log.warn("the index was damaged; kept aside and rebuilt", { file, aside });
        }
        const fresh = LocalStore.replacement(file, opts.dim);
        if (redaction !== undefined) fresh.setMeta({ exclude_secrets: redaction });
        return fresh;
      }
    } catch (err) {
      // An index of an older schema is derived data: any build replaces it. A damaged one only with
      // --force. Either way the new index is built beside the old file and swapped in at the end.
      const e = err as CodememError;
      if (e.code !== "INDEX_CORRUPT" || !(opts.force || e.details?.schema !== undefined)) throw err;
      return LocalStore.replacement(file, opts.dim);
    }
    return store;
  }

  private static replacement(file: string, dim: number | undefined): LocalStore {
    fs.rmSync(file + ".new", { force: true });
    const store = LocalStore.openFile(file + ".new", file, { create: true, dim });
    store.replacing = true;
    return store;
  }

  /** Opens (creating when asked) one SQLite file. `dim` is needed to create the vector table. */
  private static openFile(file: string, target: string, opts: { create: boolean; dim?: number; readonly?: boolean }): LocalStore {
    if (!opts.create && !fs.existsSync(file)) {
      throw new CodememError("INDEX_MISSING", `No index at ${file}; run \`codemem build <project>\` first.`, { file });
    }
    prepareFile(file, SQLITE_SIDECARS);
    let db: Database.Database;
    try {
      db = new Database(file, { readonly: !!opts.readonly, fileMustExist: !opts.create });
      sqliteVec.load(db);
      if (!opts.readonly) {
        db.pragma("journal_mode = WAL");
        db.pragma("synchronous = NORMAL");
        // A checkpoint truncates the WAL back to this size: one large build's WAL does not stay on disk.
        db.pragma("journal_size_limit = 67108864");
      }
      db.pragma("busy_timeout = 5000");
      // Readers keep 8 MB of pages: the OS page cache holds the file anyway, and a 64 MB cache filled by
      // reading the catalog stayed resident in the daemon. A build's one big transaction spills to
      // the WAL past 16 MB instead of holding every dirty page (stdlib build peak RSS 623 → 575 MB).
      db.pragma(opts.readonly ? "cache_size = -8192" : "cache_size = -16384");
    } catch (err) {
      throw new CodememError("INDEX_CORRUPT", `Cannot open the index ${file}: ${(err as Error).message}. Rebuild it with \`codemem build --force\`.`, { file });
    }
    const store = new LocalStore(db, file, target);
    if (opts.readonly) store.inode = fs.statSync(file).ino;
    try {
      const hasMeta = db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").get();
      if (!hasMeta) {
        if (!opts.create || !opts.dim) throw new CodememError("INDEX_MISSING", `The index ${file} is empty; run \`codemem build\`.`);
        db.exec(SCHEMA(opts.dim));
        store.setMeta({ schema_version: SCHEMA_VERSION, dim: String(opts.dim) });
      } else if (opts.readonly && store.metaValue("built_at") === undefined) {
        // Made by a build that never finished (a full disk, a kill): nothing to answer from.
        throw new CodememError("INDEX_MISSING", `The index ${file} holds no finished build; run \`codemem build\`.`, { file });
      } else if (store.metaValue("schema_version") !== SCHEMA_VERSION) {
        const schema = store.metaValue("schema_version");
        throw new CodememError("INDEX_CORRUPT", `The index ${file} has schema ${schema}, this codemem needs ${SCHEMA_VERSION}; run \`codemem build\` to rebuild it.`, { file, schema });
      }
    } catch (err) {
      db.close();
      if (err instanceof CodememError) throw err;
      throw new CodememError("INDEX_CORRUPT", `The index ${file} is unreadable (${(err as Error).message}); rebuild with \`codemem build --force\`.`, { file });
    }
    return store;
  }

  /** SQLite's quick check of every page (0.2-0.5 s for the stdlib's 36 MB index: run before a user's build only, never a save's). */
  private intact(): boolean {
    try {
      return (this.db.pragma("quick_check(1)", { simple: true }) as string) === "ok";
    } catch {
      return false;
    }
  }

  private stmt(sql: string): Database.Statement {
    let st = this.stmts.get(sql);
    if (!st) this.stmts.set(sql, (st = this.db.prepare(sql)));
    return st;
  }

  async close(): Promise<void> {
    const vectors = this.vectorThread;
    this.vectorThread = undefined;
    await vectors?.close();
    // A build that failed (nothing applied: a full disk) checkpoints anyway: no settled work follows it.
    let full: unknown;
    if (this.db.open && !this.db.readonly && !(this.keepWal && this.applied)) {
      // Leave no WAL behind a clean close (a 291 MB WAL stayed beside a 185 MB index).
      try {
        // Never waits: a reader's open snapshot (its vector thread loading) would hold this thread
        // for the whole busy timeout, and the next writer checkpoints anyway.
        this.db.pragma("busy_timeout = 0");
        this.db.pragma("wal_checkpoint(TRUNCATE)");
      } catch (err) {
        // Readers hold it: the next writer checkpoints. A full disk after the commit: the WAL holds
        // the build, so it stays, and the build says so.
        if (isDiskFullError(err) && this.applied) full = err;
      }
    }
    if (this.db.open) this.db.close();
    if (this.replacing && this.applied) {
      this.replacing = false;
      for (const s of ["-wal", "-shm"]) fs.rmSync(this.target + s, { force: true });
      fs.renameSync(this.file, this.target);
      // A WAL not folded in belongs with its file (it is found by name, and holds the build's pages).
      if (fs.existsSync(this.file + "-wal")) fs.renameSync(this.file + "-wal", this.target + "-wal");
      fs.rmSync(this.file + "-shm", { force: true });
    } else if ((this.replacing || this.created) && !this.applied) {
      // A build that failed before its one transaction (a full disk, a refused setting) leaves no
      // schema-only file: its WAL held the disk at 100 % and readers took it for an empty project.
      this.replacing = this.created = false;
      for (const s of ["", "-wal", "-shm"]) fs.rmSync(this.file + s, { force: true });
    }
    if (full) throw walNotFolded(this.target);
  }

  private metaValue(key: string): string | undefined {
    return (this.stmt("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  async meta(): Promise<Record<string, string>> {
    const rows = this.stmt("SELECT key, value FROM meta").all() as { key: string; value: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  private setMeta(kv: Record<string, string>): void {
    const st = this.stmt("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    for (const [k, v] of Object.entries(kv)) st.run(k, v);
  }

  async files(paths?: string[]): Promise<FileRow[]> {
    const cols = "path, hash, size, language, tokens, line_count, mtime_ms";
    if (!paths) return this.stmt(`SELECT ${cols} FROM files ORDER BY path`).all() as FileRow[];
    const st = this.stmt(`SELECT ${cols} FROM files WHERE path = ?`);
    return paths.flatMap((p) => (st.all(p) as FileRow[])).sort((a, b) => (a.path < b.path ? -1 : 1));
  }

  async extracts(paths?: string[]): Promise<FileExtract[]> {
    const st = this.stmt("SELECT extract FROM files WHERE path = ?");
    const rows = paths ? paths.flatMap((p) => st.all(p) as { extract: Buffer }[]) : (this.stmt("SELECT extract FROM files ORDER BY path").all() as { extract: Buffer }[]);
    return rows.map((r) => inflated<FileExtract>(r.extract, this.target, "file extract"));
  }

  async nodeHashes(files: string[]): Promise<Map<string, { rowid: number; textHash: string }>> {
    const out = new Map<string, { rowid: number; textHash: string }>();
    const st = this.stmt("SELECT rowid, id, text_hash FROM nodes WHERE file_path = ?");
    for (const f of files) for (const r of st.all(f) as { rowid: number; id: string; text_hash: string }[]) out.set(r.id, { rowid: r.rowid, textHash: r.text_hash });
    return out;
  }

  async vectors(rowids: number[]): Promise<Map<number, Float32Array>> {
    const out = new Map<number, Float32Array>();
    for (const [rowid, v] of this.quantized(rowids)) out.set(rowid, dequantize(v));
    return out;
  }

  /** Stored vectors as they are kept: int8 components and a scale. */
  private quantized(rowids: number[]): Map<number, Quantized> {
    const st = this.stmt("SELECT v.embedding AS embedding, n.vec_scale AS scale FROM vec_nodes v JOIN nodes n ON n.rowid = v.rowid WHERE v.rowid = ?");
    const out = new Map<number, Quantized>();
    for (const rowid of rowids) {
      const r = st.get(BigInt(rowid)) as { embedding: Buffer; scale: number } | undefined;
      if (r) out.set(rowid, { q: new Int8Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)), scale: r.scale });
    }
    return out;
  }

  async edges(): Promise<GraphEdge[]> {
    return edgeRows(this.stmt(`${EDGE_SELECT}`).all());
  }

  async edgesFrom(ids: string[]): Promise<GraphEdge[]> {
    const from = this.stmt(`${EDGE_SELECT} WHERE e.source = (SELECT id FROM symbols WHERE name = ?)`);
    return ids.flatMap((id) => edgeRows(from.all(id)));
  }

  async neighbors(ids: string[]): Promise<GraphEdge[]> {
    const out = this.stmt(`${EDGE_SELECT} WHERE e.source = (SELECT id FROM symbols WHERE name = ?) AND e.type <> 'imports'`);
    const inc = this.stmt(`${EDGE_SELECT} WHERE e.target = (SELECT id FROM symbols WHERE name = ?) AND e.type <> 'imports'`);
    return ids.flatMap((id) => [...edgeRows(out.all(id)), ...edgeRows(inc.all(id))]);
  }

  async importers(files: string[]): Promise<GraphEdge[]> {
    const inc = this.stmt(`${EDGE_SELECT} WHERE e.target = (SELECT id FROM symbols WHERE name = ?) AND e.type = 'imports'`);
    return files.flatMap((f) => edgeRows(inc.all(f)));
  }

  async degrees(types: string[]): Promise<Map<string, number>> {
    const marks = types.map(() => "?").join(", ");
    const rows = this.db
      .prepare(
        `SELECT s.name AS id, d.n AS n FROM (SELECT id, sum(n) AS n FROM (SELECT source AS id, count(*) AS n FROM edges WHERE type IN (${marks}) AND source <> target AND dispatch IS NULL GROUP BY source UNION ALL SELECT target, count(*) FROM edges WHERE type IN (${marks}) AND source <> target AND dispatch IS NULL GROUP BY target) GROUP BY id) d JOIN symbols s ON s.id = d.id`,
      )
      .all(...types, ...types) as { id: string; n: number }[];
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  async communities(opts: { files?: boolean } = {}): Promise<GraphCommunity[]> {
    if (opts.files === false) return this.stmt("SELECT id, name, description, size FROM communities ORDER BY id").all() as GraphCommunity[];
    const rows = this.stmt("SELECT id, name, description, size, files FROM communities ORDER BY id").all() as (GraphCommunity & { files: string })[];
    return rows.map((r) => ({ ...r, files: JSON.parse(r.files as unknown as string) as string[] }));
  }

  async catalog(files?: string[], opts: { slice?: number } = {}): Promise<CatalogNode[]> {
    // Rows come as arrays and become objects here: better-sqlite3 builds each row object property by
    // property, which took twice as long (60K nodes: 400 → 200 ms, on a daemon's first answer).
    // Iterated, so each row's array dies young instead of all of them outliving the read.
    if (!files && opts.slice) return this.catalogInSlices(opts.slice);
    if (!files) return Array.from(this.stmt(`SELECT ${CATALOG_COLUMNS} FROM nodes ORDER BY rowid`).raw(true).iterate() as IterableIterator<CatalogRow>, catalogNode);
    const st = this.stmt(`SELECT ${CATALOG_COLUMNS} FROM nodes WHERE file_path = ? ORDER BY rowid`).raw(true);
    return files.flatMap((f) => (st.all(f) as CatalogRow[]).map(catalogNode));
  }

  /** Every node's catalog row, `slice` rows at a time in one read transaction, yielding between slices. */
  private async catalogInSlices(slice: number): Promise<CatalogNode[]> {
    const page = this.stmt(`SELECT ${CATALOG_COLUMNS} FROM nodes WHERE rowid > ? ORDER BY rowid LIMIT ?`).raw(true);
    const out: CatalogNode[] = [];
    return this.snapshot(async () => {
      for (let after = 0; ; ) {
        const rows = page.all(after, slice) as CatalogRow[];
        for (const r of rows) out.push(catalogNode(r));
        if (rows.length < slice) return out;
        after = rows[rows.length - 1][0];
        await new Promise<void>((r) => setImmediate(r));
      }
    });
  }

  async code(rowid: number): Promise<string> {
    const r = this.stmt("SELECT text FROM node_text WHERE rowid = ?").get(rowid) as { text: Buffer } | undefined;
    return r ? nodeText(r.text, this.target)[0] : "";
  }

  async lexicalNodes(words: string[], limit: number, common?: ReadonlySet<string>): Promise<LexicalHit[]> {
    return bm25((sql) => this.stmt(sql), "fts_nodes", LEXICAL_WEIGHTS.join(", "), words, limit, common);
  }

  /** On the vector thread once its vectors are loaded: the reader's thread runs the node query meanwhile. */
  async lexicalFiles(words: string[], limit: number, common?: ReadonlySet<string>): Promise<LexicalHit[]> {
    if (this.vectorThread && !this.warming) return this.vectorThread.lexicalFiles(words, limit, common);
    return bm25((sql) => this.stmt(sql), "fts_files", FILE_WEIGHTS, words, limit, common);
  }

  /** Posted to the vector thread at once when its vectors are loaded: the caller's next queries overlap the scan. */
  nearest(q: Float32Array, limit: number): Promise<{ rowid: number; sim: number }[]> {
    if (this.vectorThread && !this.warming) return this.vectorThread.nearest(q, limit);
    return this.warm().then(() => this.vectorThread!.nearest(q, limit));
  }

  private warming?: Promise<void>;
  /** Files re-indexed while the vectors load from an older snapshot: patched in once they are loaded. */
  private stale?: Set<string>;

  /**
   * Starts the vector thread, which loads the vectors from a snapshot of its own connection: this
   * connection keeps answering meanwhile (0.6 s at 60K nodes would otherwise hold a start's first
   * answers). A thread that stopped (a crash) is replaced on the next call.
   */
  warm(): Promise<void> {
    if (this.vectorThread && !this.warming) return Promise.resolve();
    this.warming ??= (async () => {
      this.stale = new Set();
      const t = new VectorThread({ file: this.file, dim: Number(this.metaValue("dim")) }, () => {
        if (this.vectorThread === t) this.vectorThread = undefined;
      });
      this.vectorThread = t;
      await t.loaded;
      const stale = [...this.stale];
      this.stale = undefined;
      if (stale.length) await this.refresh(stale);
    })().finally(() => {
      this.warming = undefined;
      this.stale = undefined;
    });
    return this.warming;
  }

  async refresh(files: string[]): Promise<void> {
    if (this.stale) for (const f of files) this.stale.add(f);
    if (!this.vectorThread || this.stale) return;
    const rows = (await this.catalog(files)).map((n) => ({ rowid: n.rowid, file: n.file_path }));
    this.vectorThread.patch(files, rows, this.quantized(rows.map((r) => r.rowid)));
  }

  /** One read transaction: every read in `reads` sees the same committed index (WAL keeps it while builds commit). */
  async snapshot<T>(reads: () => Promise<T>): Promise<T> {
    this.db.exec("BEGIN");
    try {
      return await reads();
    } finally {
      this.db.exec("COMMIT");
    }
  }

  async unfilled(): Promise<Unfilled> {
    const db = this.db;
    const withVector = new Set(db.prepare("SELECT rowid FROM vec_nodes").pluck().all() as number[]);
    const text = db.prepare("SELECT text FROM node_text WHERE rowid = ?").pluck();
    const rows = db.prepare("SELECT rowid, id, name, qualified_name, type, signature, docstring, file_path, parent, text_hash FROM nodes ORDER BY rowid").all() as (UnfilledNode & { rowid: number; parent: string | null })[];
    const childNames = new Map<string, string[]>();
    const nodes: UnfilledNode[] = [];
    for (const { rowid, parent, ...n } of rows) {
      if (parent) (childNames.get(parent) ?? childNames.set(parent, []).get(parent)!).push(n.name);
      if (withVector.has(rowid)) continue;
      const blob = text.get(rowid) as Buffer | undefined;
      const [code, , , , , , , fileWords] = blob ? nodeText(blob, this.target) : ["", "", "", "", "", "", "", null];
      nodes.push({ ...n, code, fileWords: fileWords ?? undefined });
    }
    const files = db.prepare("SELECT path, hash FROM files WHERE tokens = 0 ORDER BY path").all() as { path: string; hash: string }[];
    return { nodes, childNames, files };
  }

  async fill(f: { vectors: { id: string; textHash: string; vector: Float32Array }[]; tokens: { path: string; hash: string; tokens: number }[] }, opts: { last: boolean } = { last: true }): Promise<number> {
    const db = this.db;
    const nodeOf = db.prepare("SELECT rowid, text_hash FROM nodes WHERE id = ?");
    const hasVec = db.prepare("SELECT 1 FROM vec_nodes WHERE rowid = ?").pluck();
    const insVec = db.prepare("INSERT INTO vec_nodes(rowid, embedding) VALUES (?, vec_int8(?))");
    const setScale = db.prepare("UPDATE nodes SET vec_scale = ? WHERE rowid = ?");
    const setTokens = db.prepare("UPDATE files SET tokens = ? WHERE path = ? AND hash = ?");
    db.exec("BEGIN");
    try {
      for (const { id, textHash, vector } of f.vectors) {
        const n = nodeOf.get(id) as { rowid: number; text_hash: string } | undefined;
        if (!n || n.text_hash !== textHash || vector.length === 0 || hasVec.get(BigInt(n.rowid)) !== undefined) continue;
        const { q, scale } = quantize(vector);
        insVec.run(BigInt(n.rowid), Buffer.from(q.buffer, q.byteOffset, q.byteLength));
        setScale.run(scale, n.rowid);
      }
      for (const t of f.tokens) setTokens.run(t.tokens, t.path, t.hash);
      const total = db.prepare("SELECT coalesce(sum(tokens), 0) FROM files").pluck().get() as number;
      // A part before the last keeps `filling`: a fill stopped after it resumes with what is left (unfilled).
      if (opts.last) this.setMeta({ total_tokens: String(total), filling: "" });
      db.exec("COMMIT");
      this.applied = true;
      return total;
    } catch (err) {
      if (db.inTransaction) db.exec("ROLLBACK");
      if (!isDiskFullError(err)) throw err;
      throw new CodememError("DISK_FULL", `No space left on the disk holding ${this.target} (${freeMb(this.target)} MB free) to write the build's vectors and token counts; its lexical and graph index stands. Free space, then run \`codemem build --force\`.`, { file: this.target });
    }
  }

  /** Applies one build atomically: a concurrent reader sees the old index or the new one. */
  async apply(delta: BuildDelta | PendingDelta): Promise<void> {
    const db = this.db;
    const delNodesOfFile = db.prepare("SELECT n.rowid AS rowid, t.text AS text FROM nodes n LEFT JOIN node_text t ON t.rowid = n.rowid WHERE n.file_path = ?");
    const delNode = db.prepare("DELETE FROM nodes WHERE rowid = ?");
    const delText = db.prepare("DELETE FROM node_text WHERE rowid = ?");
    // Contentless FTS tables forget a row when told the values it was indexed with.
    const delFts = db.prepare("INSERT INTO fts_nodes(fts_nodes, rowid, name, qualified, signature, doc, path, body) VALUES ('delete', ?, ?, ?, ?, ?, ?, ?)");
    const delFtsFile = db.prepare("INSERT INTO fts_files(fts_files, rowid, path, body) VALUES ('delete', ?, ?, ?)");
    const insFtsFile = db.prepare("INSERT INTO fts_files(rowid, path, body) VALUES (?, ?, ?)");
    const insText = db.prepare("INSERT INTO node_text(rowid, text) VALUES (?, ?)");
    const delVec = db.prepare("DELETE FROM vec_nodes WHERE rowid = ?");
    const delFile = db.prepare("DELETE FROM files WHERE path = ?");
    const upFile = db.prepare(
      "INSERT INTO files(path, hash, size, language, tokens, line_count, mtime_ms, extract, indexed_at) VALUES (@path, @hash, @size, @language, @tokens, @line_count, @mtime_ms, @extract, @indexed_at) " +
        "ON CONFLICT(path) DO UPDATE SET hash=excluded.hash, size=excluded.size, language=excluded.language, tokens=excluded.tokens, line_count=excluded.line_count, mtime_ms=excluded.mtime_ms, extract=excluded.extract, indexed_at=excluded.indexed_at",
    );
    const insNode = db.prepare(
      "INSERT INTO nodes(rowid, id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community, text_hash, vec_scale) " +
        "VALUES (@rowid, @id, @name, @type, @file_path, @qualified_name, @signature, @docstring, @description, @line_start, @line_end, @language, @parent, @community, @text_hash, @vec_scale)",
    );
    const insFts = db.prepare("INSERT INTO fts_nodes(rowid, name, qualified, signature, doc, path, body) VALUES (?, ?, ?, ?, ?, ?, ?)");
    const insVec = db.prepare("INSERT INTO vec_nodes(rowid, embedding) VALUES (?, vec_int8(?))");
    const insSymbol = db.prepare("INSERT INTO symbols(name) VALUES (?)");
    const symbolOf = db.prepare("SELECT id FROM symbols WHERE name = ?").pluck();
    const insEdge = db.prepare("INSERT OR IGNORE INTO edges(source, target, type, dispatch) VALUES (?, ?, ?, ?)");
    const delEdge = db.prepare("DELETE FROM edges WHERE source = ? AND target = ? AND type = ?");
    // A symbol no edge names any more goes with its last edge.
    const dropSymbol = db.prepare("DELETE FROM symbols WHERE id = @id AND NOT EXISTS (SELECT 1 FROM edges WHERE source = @id) AND NOT EXISTS (SELECT 1 FROM edges WHERE target = @id)");
    const setCommunity = db.prepare("UPDATE nodes SET community = ? WHERE id = ?");
    const now = new Date().toISOString();

    // A large build's texts not made by its parse workers (stored) are deflated on another thread while this one inserts the other rows.
    const texts = delta.nodes.flatMap((n, i) => (n.stored ? [] : [{ i, job: textJob(n) }]));
    const extracts = delta.upsertFiles.flatMap((u, i) => (u.stored ? [] : [{ i, job: extractJob(u.extract) }]));
    const jobs = [...texts, ...extracts].map((t) => t.job);
    const apart = texts.length >= DEFLATE_APART_NODES ? deflateApart(jobs) : undefined;
    // Awaited after the inserts (a failure there is deflated here); if the inserts fail first, its rejection is not left unhandled.
    apart?.catch(() => {});
    /** Each node's and upserted file's stored bytes, once the ones deflated here or apart are in. */
    const nodeBlobs = delta.nodes.map((n) => n.stored);
    const extractBlobs = delta.upsertFiles.map((u) => u.stored);
    const place = (blobs: Buffer[]) => {
      texts.forEach((t, k) => (nodeBlobs[t.i] = blobs[k]));
      extracts.forEach((t, k) => (extractBlobs[t.i] = blobs[texts.length + k]));
    };
    if (!apart) place(jobs.map(deflateText));

    db.exec("BEGIN");
    try {
      for (const f of new Set([...delta.replaceNodesOf, ...delta.removedFiles])) {
        for (const { rowid, text } of delNodesOfFile.all(f) as { rowid: number; text: Buffer | null }[]) {
          delNode.run(rowid);
          if (text) {
            const [, name, qualified, signature, doc, path, body, fileWords] = nodeText(text, this.target);
            delFts.run(rowid, name, qualified, signature, doc, path, body);
            if (fileWords !== null) delFtsFile.run(rowid, path, fileWords);
            delText.run(rowid);
          }
          delVec.run(BigInt(rowid));
        }
      }
      for (const f of delta.removedFiles) delFile.run(f);
      // With the texts deflated apart, the file rows follow them at the end.
      if (!apart) delta.upsertFiles.forEach(({ row }, i) => upFile.run({ ...row, extract: extractBlobs[i], indexed_at: now }));
      // Each table in a pass of its own: one node's rows in five tables at a time took a full build
      // of Go's src 4.1-4.5 s, table by table 3.4-3.5 s (its pages stay in the cache while it grows).
      // New nodes take the rowids after the highest left, as SQLite would give them: the rows keyed
      // by them go first, the node rows last, once a pending delta's communities are known.
      const first = (db.prepare("SELECT coalesce(max(rowid), 0) FROM nodes").pluck().get() as number) + 1;
      const rowids = delta.nodes.map((_, i) => first + i);
      const quantized = delta.nodes.map(({ vector }) => quantize(vector));
      delta.nodes.forEach(({ lexical }, i) => insFts.run(rowids[i], lexical.name, lexical.qualified, lexical.signature, lexical.doc, lexical.path, lexical.body));
      delta.nodes.forEach(({ lexical, fileWords }, i) => fileWords !== undefined && insFtsFile.run(rowids[i], lexical.path, fileWords));
      // A deferred build's nodes have no vector yet: their fill writes them (fill, below).
      quantized.forEach(({ q }, i) => q.length > 0 && insVec.run(BigInt(rowids[i]), Buffer.from(q.buffer, q.byteOffset, q.byteLength)));
      if (!apart) rowids.forEach((rowid, i) => insText.run(rowid, nodeBlobs[i]));
      for (const e of delta.edgesRemoved) {
        const [source, target] = [symbolOf.get(e.source) as number | undefined, symbolOf.get(e.target) as number | undefined];
        if (source === undefined || target === undefined) continue;
        delEdge.run(source, target, e.type);
        dropSymbol.run({ id: source });
        dropSymbol.run({ id: target });
      }
      const interned = new Map<string, number>();
      const idOf = (name: string): number => {
        let id = interned.get(name) ?? (symbolOf.get(name) as number | undefined);
        id ??= Number(insSymbol.run(name).lastInsertRowid);
        interned.set(name, id);
        return id;
      };
      for (const e of delta.edgesAdded) insEdge.run(idOf(e.source), idOf(e.target), e.type, e.dispatch ?? null);
      const { communities, communityOf } = "clustering" in delta ? await delta.clustering : delta;
      delta.nodes.forEach(({ node, textHash }, i) => {
        insNode.run({
          rowid: rowids[i],
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
          community: communityOf.get(node.id) ?? -1,
          text_hash: textHash,
          vec_scale: quantized[i].scale,
        });
      });
      // After re-clustering every node's community is written: the nodes this build inserted carry
      // theirs already (a full build of Go's src updated all 60K rows again, ~0.35 s).
      const inserted = delta.communityUpdates ? undefined : new Set(delta.nodes.map((n) => n.node.id));
      for (const [id, c] of delta.communityUpdates ?? communityOf) if (!inserted?.has(id)) setCommunity.run(c, id);
      db.prepare("DELETE FROM communities").run();
      const insC = db.prepare("INSERT INTO communities(id, name, description, size, files) VALUES (?, ?, ?, ?, ?)");
      for (const c of communities) insC.run(c.id, c.name, c.description, c.size ?? 0, JSON.stringify(c.files ?? []));
      this.setMeta(delta.meta);
      if (apart) {
        place(await apart.catch((err: Error) => {
          log.warn("deflating node texts on a thread failed; deflating them here", { error: err.message });
          return jobs.map(deflateText);
        }));
        rowids.forEach((rowid, i) => insText.run(rowid, nodeBlobs[i]));
        delta.upsertFiles.forEach(({ row }, i) => upFile.run({ ...row, extract: extractBlobs[i], indexed_at: now }));
      }
      db.exec("COMMIT");
    } catch (err) {
      // The index stays the previous build's (close() truncates the WAL).
      if (db.inTransaction) db.exec("ROLLBACK");
      if (!isDiskFullError(err)) throw err;
      throw new CodememError("DISK_FULL", `No space left on the disk holding ${this.target} (${freeMb(this.target)} MB free); the index is unchanged. Free space, then run \`codemem build\` again.`, { file: this.target });
    }
    this.applied = true;
  }

  /**
   * Folds the WAL into the index and removes it (a daemon's stop: its readers cannot, and a WAL a
   * full disk kept after a build's commit held the disk at 100 %). False when there is none.
   */
  static foldLog(file: string): boolean {
    if (!fs.existsSync(file) || !(fs.statSync(file + "-wal", { throwIfNoEntry: false })?.size ?? 0)) return false;
    const db = new Database(file);
    try {
      db.pragma("busy_timeout = 0");
      db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (err) {
      if (isDiskFullError(err)) throw walNotFolded(file);
      throw err;
    } finally {
      db.close(); // the last connection's close removes the WAL
    }
    return true;
  }

  /** Rebuilds FTS segments, refreshes planner statistics and compacts the file (`build --optimize`). */
  async optimize(): Promise<void> {
    this.db.exec("INSERT INTO fts_nodes(fts_nodes) VALUES('optimize')");
    this.db.exec("INSERT INTO fts_files(fts_files) VALUES('optimize')");
    this.db.exec("ANALYZE");
    this.db.pragma("wal_checkpoint(TRUNCATE)");
    this.db.exec("VACUUM");
  }

  async sizeBytes(): Promise<number> {
    let total = 0;
    for (const suffix of ["", "-wal", "-shm"]) {
      try {
        total += fs.statSync(this.target + suffix).size;
      } catch {
        // absent WAL files are fine
      }
    }
    return total;
  }
}

/** Builds of this many nodes deflate their texts on a thread of their own (deflate-thread.ts). */
const DEFLATE_APART_NODES = 2000;

function nodeText(blob: Buffer, file: string): NodeText {
  const text = inflated<NodeText>(blob, file, "node text");
  if (!Array.isArray(text) || text.length !== 8 || typeof text[0] !== "string") throw damagedBlob(file, "node text", "not the stored shape");
  return text;
}

/**
 * A deflated JSON value of the index. Raw deflate carries no checksum and SQLite checks only its
 * pages' structure, so a blob damaged on disk is found here, when it fails to inflate or parse.
 */
function inflated<T>(blob: Buffer, file: string, what: string): T {
  try {
    return JSON.parse(inflateRawSync(blob).toString("utf8")) as T;
  } catch (err) {
    throw damagedBlob(file, what, (err as Error).message);
  }
}

function damagedBlob(file: string, what: string, why: string): CodememError {
  return new CodememError("INDEX_CORRUPT", `The index ${file} is damaged: a stored ${what} does not read back (${why}); rebuild it with \`codemem build --force\`.`, { file });
}

/** Free megabytes on the file system holding `file` ('?' when it cannot be read). */
function freeMb(file: string): string {
  try {
    const st = fs.statfsSync(path.dirname(file));
    return String(Math.floor((st.bavail * st.bsize) / 1048576));
  } catch {
    return "?";
  }
}

/** DISK_FULL after a build's commit: the index is written, its WAL could not be folded in. */
function walNotFolded(file: string): CodememError {
  const walMb = Math.round((fs.statSync(file + "-wal", { throwIfNoEntry: false })?.size ?? 0) / 1e5) / 10;
  return new CodememError(
    "DISK_FULL",
    `No space left on the disk holding ${file} (${freeMb(file)} MB free) to fold the build's log (${file}-wal, ${walMb} MB) into the index; the index answers from it meanwhile. Free space, then run \`codemem build\` or \`codemem daemon stop\` (either folds it in and removes it).`,
    { file },
  );
}
