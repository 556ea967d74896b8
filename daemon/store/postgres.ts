import pg from "pg";
import { CodememError } from "../../shared/errors.js";
import { redactDbUrl, type StoreSettings } from "../../shared/config.js";
import type { FileExtract, GraphCommunity, GraphEdge } from "../index/types.js";
import { pgError, targetOf, connectionUrl, type Target } from "./postgres-connection.js";
import {
  FILE_RANK_WEIGHTS,
  LATEST_VERSION,
  MAX_LEXICAL_CHARS,
  MIGRATIONS,
  MIGRATIONS_TABLE,
  NODE_RANK_WEIGHTS,
  SEARCH_INDEXES,
  TABLES,
  TS_CONFIG,
} from "./postgres-schema.js";
import { settled, type BuildDelta, type CatalogNode, type FileRow, type IndexStore, type LexicalHit, type OpenStoreOptions, type PendingDelta } from "./types.js";

const CONNECT_TIMEOUT_MS = 5000;
/** Reads answer in milliseconds; a minute means the server is stuck. Builds and VACUUM lift it. */
const STATEMENT_TIMEOUT_MS = 60_000;
/**
 * Lexical search ranks at most this many GIN matches (bounded time at a million nodes; whole-file
 * rows are large, so fewer of them).
 */
const nodeCandidates = (limit: number) => Math.max(2000, limit * 40);
const fileCandidates = (limit: number) => Math.max(500, limit * 20);
/**
 * A word found in more rows than this is left out of the match (it still counts in the rank):
 * collecting its GIN postings alone takes tens of ms at a million nodes, and it says little.
 */
const MAX_MATCH_ROWS = 20_000;
/**
 * Memory for building the HNSW graph in one go (it is many times slower once the graph spills):
 * sized to the vectors, between 256 MB and 4 GB.
 */
function indexBuildMemory(rows: number, dim: number): string {
  const mb = Math.ceil((rows * (dim * 4 + 160) * 1.3) / 1048576);
  return `${Math.min(4096, Math.max(256, mb))}MB`;
}

const CATALOG_COLUMNS = "rowid, id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community";

/** bigint columns (rowids, sizes) come back as numbers: every value we store fits in 2^53. */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/** What `open` found: an index to use, or one that `apply` creates ("create") or swaps in ("replace"). */
type Pending = "create" | "replace" | undefined;
type LexicalTable = "lexical" | "file_lexical";

/**
 * The PostgreSQL backend: one schema per project holding its tables, pgvector's HNSW index for
 * nearest neighbours and weighted tsvectors with GIN for lexical search. Builds are one
 * transaction; a build that replaces the index writes a shadow schema and renames it at commit.
 */
export class PostgresStore implements IndexStore {
  readonly backend = "postgres" as const;
  readonly location: string;
  private searchPath = "";
  private extSchema = "";
  private pending: Pending;
  private lexemeCache = new Map<LexicalTable, LexemeStats>();
  private closed = false;

  private pool!: pg.Pool;

  private constructor(
    private readonly schema: string,
    private readonly target: Target,
    dbUrl: string,
    private dim: number,
    private readonly batchSize: number,
  ) {
    this.location = `${redactDbUrl(dbUrl)}#${schema}`;
  }

  static async open(s: StoreSettings, opts: OpenStoreOptions): Promise<PostgresStore> {
    if (s.refused) throw new CodememError(s.refused.code, s.refused.message);
    if (!s.dbUrl) {
      throw new CodememError("CONFIG_INVALID", "The postgres backend needs a database URL: pass --db-url postgres://user@host:5432/db or set CODEMEM_DB_URL (the password goes in CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE).");
    }
    if (!/^[a-z_][a-z0-9_]{0,55}$/.test(s.schema)) {
      throw new CodememError("CONFIG_INVALID", `The schema name "${s.schema}" is not a plain lower-case identifier of at most 56 characters; set [store] project to letters, digits or underscores.`, { schema: s.schema });
    }
    let target: Target;
    try {
      target = targetOf(s.dbUrl);
    } catch {
      throw new CodememError("CONFIG_INVALID", `The database URL ${redactDbUrl(s.dbUrl)} cannot be parsed; use postgres://user@host:5432/db in --db-url or CODEMEM_DB_URL.`);
    }
    const connection: pg.ClientConfig = {
      connectionString: connectionUrl({ ...s, dbUrl: s.dbUrl }),
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      keepAlive: true,
      application_name: "codemem",
      types: TYPES,
    };
    const store = new PostgresStore(s.schema, target, s.dbUrl, opts.dim ?? 0, Math.max(1, opts.batchSize ?? 1000));
    // The first connection finds the vector extension's schema, which the pool's search_path names.
    const first = new pg.Client(connection);
    first.on("error", () => {});
    try {
      await first.connect();
      await store.init(first, opts);
    } catch (err) {
      throw pgError(err, target, "opening the index");
    } finally {
      await first.end().catch(() => {});
    }
    // search_path as a startup option: every pooled connection has it from its first statement on.
    // jit=off: the lexical query's cost estimate at a million rows triggers JIT compilation, which
    // took search from ~20 to ~90 ms p50 (bench-postgres at 1M nodes) and never pays off for it.
    store.pool = new pg.Pool({ ...connection, max: s.poolSize, idleTimeoutMillis: 30_000, options: `-c search_path=${store.searchPath.replace(/[\\ ]/g, "\\$&")} -c jit=off` });
    // A connection dropped by the server (a restart, an outage, a proxy's idle cut) must not crash
    // the process: idle ones report to the pool, checked-out ones to their statements.
    store.pool.on("error", () => {});
    store.pool.on("connect", (client) => client.on("error", () => {}));
    return store;
  }

  private async init(client: pg.ClientBase, opts: OpenStoreOptions): Promise<void> {
    try {
      this.extSchema = await this.vectorExtension(client, opts.mode);
      this.searchPath = `${quoteIdent(this.schema)},${quoteIdent(this.extSchema)}`;
      await client.query(`SET search_path TO ${this.searchPath}`);

      const found = await this.inspect(client);
      const missing = `No codemem index for this project in ${this.location}; run \`codemem build --backend postgres\` first.`;
      if (opts.mode === "read") {
        if (!found.version) throw new CodememError("INDEX_MISSING", missing, { location: this.location });
        if (found.version > LATEST_VERSION) throw newerSchema(this.location, found.version);
      } else if (found.version === undefined) {
        this.pending = "create";
      } else if (opts.force || found.version === 0) {
        // build.ts reads nothing of the old index when forced: build a shadow schema, swap at commit.
        this.pending = "replace";
      } else if (found.version > LATEST_VERSION) {
        throw newerSchema(this.location, found.version);
      }
      if (this.pending) {
        if (!opts.dim) throw new CodememError("INDEX_MISSING", `${missing} (A vector width is needed to create it.)`);
        this.dim = opts.dim;
        return;
      }
      if (found.version! < LATEST_VERSION) await this.migrate(client);
      const dim = Number((await client.query("SELECT value FROM meta WHERE key = 'dim'")).rows[0]?.value);
      if (!dim) throw new CodememError("INDEX_CORRUPT", `The index in ${this.location} records no vector width; rebuild with \`codemem build --backend postgres --force\`.`);
      this.dim = dim;
    } catch (err) {
      if (err instanceof CodememError) throw err;
      const code = (err as { code?: string }).code ?? "";
      // Connection and permission failures keep their own codes; anything else means unreadable tables.
      if (/^(08|28|3D|42501|57|E)/.test(code) || !code) throw pgError(err, this.target, "opening the index");
      throw new CodememError("INDEX_CORRUPT", `The index in ${this.location} is unreadable (${(err as Error).message}); rebuild with \`codemem build --backend postgres --force\`.`);
    }
  }

  /** The schema holding the `vector` type; in build mode the extension is created when absent. */
  private async vectorExtension(client: pg.ClientBase, mode: "read" | "build"): Promise<string> {
    const installed = await client.query<{ schema: string }>("SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'vector'");
    if (installed.rows[0]) return unquoteIdent(installed.rows[0].schema);
    const available = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    if (!available.rows[0]) {
      throw new CodememError(
        "BACKEND_UNSUPPORTED",
        `The PostgreSQL server at ${this.target.host}:${this.target.port} has no pgvector extension. Install pgvector on the server (Debian: postgresql-NN-pgvector; for PostgreSQL 15 on Debian 12: \`sudo bash scripts/setup-postgres.sh\`).`,
      );
    }
    if (mode === "read") throw new CodememError("INDEX_MISSING", `No codemem index in ${this.location} (the vector extension is not even enabled); run \`codemem build --backend postgres\` first.`);
    try {
      await client.query("CREATE EXTENSION IF NOT EXISTS vector");
    } catch (err) {
      throw new CodememError(
        "BACKEND_UNSUPPORTED",
        `pgvector is installed on the server but user "${this.target.user}" cannot enable it in database "${this.target.database}" (${(err as Error).message}). Have a superuser run \`CREATE EXTENSION vector;\` in that database (scripts/setup-postgres.sh does it for a local server).`,
      );
    }
    const created = await client.query<{ schema: string }>("SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'vector'");
    return unquoteIdent(created.rows[0].schema);
  }

  /**
   * Highest applied migration of the project's schema: undefined when it holds no index, 0 when
   * only part of one (tables dropped by hand, say).
   */
  private async inspect(client: pg.ClientBase): Promise<{ version?: number }> {
    // A plain catalog query, not to_regclass: after waiting on the advisory lock, the backend's
    // name cache may not know yet of tables another builder just committed.
    const r = await client.query<{ relname: string }>(
      "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname IN ('schema_migrations', 'nodes')",
      [this.schema],
    );
    const migrations = r.rows.some((x) => x.relname === "schema_migrations");
    const nodes = r.rows.some((x) => x.relname === "nodes");
    if (!migrations && !nodes) return {};
    if (!migrations || !nodes) return { version: 0 };
    const v = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${quoteIdent(this.schema)}.schema_migrations`);
    return { version: v.rows[0].v ?? 0 };
  }

  /** Applies the migrations an older codemem did not, in order, one transaction under the project's lock. */
  private async migrate(client: pg.ClientBase): Promise<void> {
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`codemem:${this.schema}`]);
      const dim = Number((await client.query("SELECT value FROM meta WHERE key = 'dim'")).rows[0]?.value);
      await this.runMigrations(client, dim);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    }
  }

  /** Runs the migrations not yet recorded; the caller holds the lock inside a transaction. */
  private async runMigrations(client: pg.ClientBase, dim: number): Promise<void> {
    await client.query(MIGRATIONS_TABLE);
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version));
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql(dim));
      await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
    }
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[], doing: string): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw pgError(err, this.target, doing);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async meta(): Promise<Record<string, string>> {
    if (this.pending) return { schema_version: String(LATEST_VERSION), dim: String(this.dim) };
    const rows = await this.query<{ key: string; value: string }>("SELECT key, value FROM meta", [], "reading meta");
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  async files(paths?: string[]): Promise<FileRow[]> {
    if (this.pending) return [];
    const where = paths ? "WHERE path = ANY($1::text[]) " : "";
    return this.query<FileRow>(`SELECT path, hash, size, language, tokens, line_count, mtime_ms FROM files ${where}ORDER BY path COLLATE "C"`, paths ? [paths] : [], "reading files");
  }

  async extracts(paths?: string[]): Promise<FileExtract[]> {
    if (this.pending) return [];
    const where = paths ? "WHERE path = ANY($1::text[]) " : "";
    const rows = await this.query<{ extract: string }>(`SELECT extract FROM files ${where}ORDER BY path COLLATE "C"`, paths ? [paths] : [], "reading extracts");
    return rows.map((r) => JSON.parse(r.extract) as FileExtract);
  }

  async nodeHashes(files: string[]): Promise<Map<string, { rowid: number; textHash: string }>> {
    const out = new Map<string, { rowid: number; textHash: string }>();
    if (this.pending || files.length === 0) return out;
    const rows = await this.query<{ rowid: number; id: string; text_hash: string }>("SELECT rowid, id, text_hash FROM nodes WHERE file_path = ANY($1::text[])", [files], "reading node hashes");
    for (const r of rows) out.set(r.id, { rowid: r.rowid, textHash: r.text_hash });
    return out;
  }

  async vectors(rowids: number[]): Promise<Map<number, Float32Array>> {
    const out = new Map<number, Float32Array>();
    if (this.pending || rowids.length === 0) return out;
    const rows = await this.query<{ rowid: number; embedding: string }>("SELECT rowid, embedding::text AS embedding FROM vectors WHERE rowid = ANY($1::int8[])", [rowids], "reading vectors");
    for (const r of rows) out.set(r.rowid, vectorFromSql(r.embedding));
    return out;
  }

  async edges(): Promise<GraphEdge[]> {
    if (this.pending) return [];
    return edgeRows(await this.query<GraphEdge>("SELECT source, target, type, dispatch FROM edges", [], "reading edges"));
  }

  async neighbors(ids: string[]): Promise<GraphEdge[]> {
    if (this.pending || ids.length === 0) return [];
    return edgeRows(await this.query<GraphEdge>("SELECT source, target, type, dispatch FROM edges WHERE (source = ANY($1::text[]) OR target = ANY($1::text[])) AND type <> 'imports'", [ids], "reading edges"));
  }

  async importers(files: string[]): Promise<GraphEdge[]> {
    if (this.pending || files.length === 0) return [];
    return this.query<GraphEdge>("SELECT source, target, type FROM edges WHERE target = ANY($1::text[]) AND type = 'imports'", [files], "reading edges");
  }

  async degrees(types: string[]): Promise<Map<string, number>> {
    if (this.pending) return new Map();
    const rows = await this.query<{ id: string; n: string }>(
      "SELECT id, sum(n) AS n FROM (SELECT source AS id, count(*) AS n FROM edges WHERE type = ANY($1::text[]) AND source <> target AND dispatch IS NULL GROUP BY source UNION ALL SELECT target, count(*) FROM edges WHERE type = ANY($1::text[]) AND source <> target AND dispatch IS NULL GROUP BY target) d GROUP BY id",
      [types],
      "reading edges",
    );
    return new Map(rows.map((r) => [r.id, Number(r.n)]));
  }

  async communities(): Promise<GraphCommunity[]> {
    if (this.pending) return [];
    return this.query<GraphCommunity>("SELECT id, name, description, size, files FROM communities ORDER BY id", [], "reading communities");
  }

  async catalog(files?: string[]): Promise<CatalogNode[]> {
    if (this.pending) return [];
    if (!files) return this.query<CatalogNode>(`SELECT ${CATALOG_COLUMNS} FROM nodes ORDER BY rowid`, [], "reading the catalog");
    if (files.length === 0) return [];
    // Grouped by file in the order asked, as the local backend answers.
    return this.query<CatalogNode>(`SELECT ${CATALOG_COLUMNS} FROM nodes WHERE file_path = ANY($1::text[]) ORDER BY array_position($1::text[], file_path), rowid`, [files], "reading the catalog");
  }

  async code(rowid: number): Promise<string> {
    if (this.pending) return "";
    const rows = await this.query<{ code: string }>("SELECT code FROM nodes WHERE rowid = $1", [rowid], "reading code");
    return rows[0]?.code ?? "";
  }

  async lexicalNodes(words: string[], limit: number): Promise<LexicalHit[]> {
    return this.lexical("lexical", NODE_RANK_WEIGHTS, words, limit, nodeCandidates(limit));
  }

  async lexicalFiles(words: string[], limit: number): Promise<LexicalHit[]> {
    return this.lexical("file_lexical", FILE_RANK_WEIGHTS, words, limit, fileCandidates(limit));
  }

  private async lexical(table: LexicalTable, weights: string, words: string[], limit: number, candidates: number): Promise<LexicalHit[]> {
    if (this.pending || words.length === 0 || limit <= 0) return [];
    const stats = await this.lexemeStats(table);
    const rows = await this.query<LexicalHit>(lexicalSql(table, weights), [words, limit, candidates, stats.lexemes, stats.rows, MAX_MATCH_ROWS, stats.tuples, stats.rare], "searching words");
    return rows.map((r) => ({ rowid: r.rowid, score: Number(r.score) }));
  }

  /**
   * How many rows hold each common lexeme of `table`, from the planner's statistics (ANALYZE keeps
   * the most common elements of a tsvector column): what keeps very common words out of the match
   * and gives every word its inverse document frequency. Re-read once a minute and after this
   * store writes.
   */
  private async lexemeStats(table: LexicalTable): Promise<LexemeStats> {
    const cached = this.lexemeCache.get(table);
    if (cached && Date.now() - cached.at < 60_000) return cached;
    const stats = await this.query<{ elems: string[] | null; freqs: number[] | null; tuples: number }>(
      "SELECT s.most_common_elems::text::text[] AS elems, s.most_common_elem_freqs AS freqs, c.reltuples::float8 AS tuples " +
        "FROM pg_stats s JOIN pg_namespace n ON n.nspname = s.schemaname JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename " +
        "WHERE s.schemaname = $1 AND s.tablename = $2 AND s.attname = 'lexical'",
      [this.schema, table],
      "reading lexical statistics",
    );
    const { elems, freqs, tuples } = stats[0] ?? { elems: null, freqs: null, tuples: 0 };
    const out: LexemeStats = { at: Date.now(), lexemes: [], rows: [], tuples: Math.max(1, tuples), rare: 1 };
    for (let i = 0; elems && freqs && i < elems.length; i++) {
      out.lexemes.push(elems[i]);
      out.rows.push(freqs[i] * out.tuples);
    }
    // A lexeme missing from the list is rarer than the rarest listed one: count it as half that.
    if (out.rows.length > 0) out.rare = Math.max(1, Math.min(...out.rows) / 2);
    this.lexemeCache.set(table, out);
    return out;
  }

  async nearest(q: Float32Array, limit: number): Promise<{ rowid: number; sim: number }[]> {
    if (this.pending || limit <= 0) return [];
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw pgError(err, this.target, "searching vectors");
    }
    try {
      // The HNSW candidate list must hold at least `limit` rows; pgvector caps it at 1000.
      await client.query(`BEGIN; SET LOCAL hnsw.ef_search = ${Math.min(1000, Math.max(40, Math.floor(limit)))}`);
      const r = await client.query<{ rowid: number; d: number }>("SELECT rowid, embedding <=> $1::vector AS d FROM vectors ORDER BY embedding <=> $1::vector LIMIT $2", [
        vectorToSql(q),
        limit,
      ]);
      await client.query("COMMIT");
      client.release();
      return r.rows.map((row) => ({ rowid: row.rowid, sim: 1 - row.d }));
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      client.release(true); // possibly a dead connection: not back into the pool
      throw pgError(err, this.target, "searching vectors");
    }
  }

  async refresh(_files: string[]): Promise<void> {
    // Only statistics are cached in the process; every other read goes to the server.
    this.lexemeCache.clear();
  }

  async optimize(): Promise<void> {
    if (this.pending) return;
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw pgError(err, this.target, "optimizing");
    }
    try {
      await client.query("SET statement_timeout = 0");
      await client.query(`VACUUM (ANALYZE) ${TABLES.join(", ")}`);
      await client.query(`SET statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
    } catch (err) {
      throw pgError(err, this.target, "optimizing");
    } finally {
      // A client whose session settings may be off is not returned to the pool.
      client.release(true);
    }
  }

  async sizeBytes(): Promise<number> {
    if (this.pending) return 0;
    const rows = await this.query<{ bytes: number }>(
      "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')",
      [this.schema],
      "measuring the index",
    );
    return rows[0].bytes;
  }

  /**
   * Applies one build in one transaction: any failure rolls back and leaves the previous index as it
   * was. A new or replaced index is built in a schema nobody reads yet and appears at COMMIT.
   */
  async apply(pending: BuildDelta | PendingDelta): Promise<void> {
    const delta = await settled(pending);
    for (const n of delta.nodes) {
      if (n.vector.length !== this.dim) {
        throw new CodememError("INDEX_EMBEDDER_MISMATCH", `Node ${n.node.id} has a ${n.vector.length}-wide vector; the index in ${this.location} holds ${this.dim}. Rebuild with \`codemem build --backend postgres --force\`.`);
      }
    }
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw pgError(err, this.target, "writing the index");
    }
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL statement_timeout = 0");
      // Two builders of one project (two machines, one database) take turns.
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`codemem:${this.schema}`]);
      let shadow: string | undefined;
      if (this.pending) {
        const exists = (await this.inspect(client)).version !== undefined;
        // A replacement (or a project another builder created meanwhile) goes to a shadow schema.
        const schema = this.pending === "replace" || exists ? (shadow = `${this.schema}__next`) : this.schema;
        if (shadow) await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(shadow)} CASCADE`);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
        await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}, ${quoteIdent(this.extSchema)}`);
        await this.runMigrations(client, this.dim);
        await client.query(`DROP INDEX ${SEARCH_INDEXES.map((i) => i.name).join(", ")}`);
        await client.query("INSERT INTO meta (key, value) VALUES ('schema_version', $1), ('dim', $2)", [String(LATEST_VERSION), String(this.dim)]);
      }
      await this.write(client, delta);
      if (this.pending) {
        await client.query(`SET LOCAL maintenance_work_mem = '${indexBuildMemory(delta.nodes.length, this.dim)}'`);
        for (const i of SEARCH_INDEXES) await client.query(i.sql);
        await client.query(`ANALYZE ${TABLES.join(", ")}`);
      }
      if (shadow) {
        await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(this.schema)} CASCADE`);
        await client.query(`ALTER SCHEMA ${quoteIdent(shadow)} RENAME TO ${quoteIdent(this.schema)}`);
      }
      await client.query("COMMIT");
      this.pending = undefined;
      this.lexemeCache.clear();
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      client.release(true);
      throw pgError(err, this.target, "writing the index");
    }
    client.release();
  }

  /** The statements of one build, in LocalStore.apply's order, batched by `batchSize` rows. */
  private async write(client: pg.PoolClient, delta: BuildDelta): Promise<void> {
    const batch = this.batchSize;
    const q = (sql: string, params: unknown[]) => client.query(sql, params);

    const dropFiles = [...new Set([...delta.replaceNodesOf, ...delta.removedFiles])];
    for (const part of chunks(dropFiles, batch)) {
      await q(
        "WITH gone AS (DELETE FROM nodes WHERE file_path = ANY($1::text[]) RETURNING rowid), " +
          "v AS (DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM gone)), " +
          "l AS (DELETE FROM lexical WHERE rowid IN (SELECT rowid FROM gone)) " +
          "DELETE FROM file_lexical WHERE rowid IN (SELECT rowid FROM gone)",
        [part],
      );
    }
    for (const part of chunks(delta.removedFiles, batch)) await q("DELETE FROM files WHERE path = ANY($1::text[])", [part]);

    // A path twice in one INSERT … ON CONFLICT DO UPDATE is an error; the last one wins, as in sequential upserts.
    const upserts = [...new Map(delta.upsertFiles.map((f) => [f.row.path, f])).values()];
    const now = new Date().toISOString();
    for (const part of chunks(upserts, batch)) {
      await q(
        "INSERT INTO files (path, hash, size, language, tokens, line_count, mtime_ms, extract, indexed_at) " +
          "SELECT p, h, s, l, t, c, m, e, $9 FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[], $5::int4[], $6::int4[], $7::float8[], $8::text[]) AS u(p, h, s, l, t, c, m, e) " +
          "ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, size = excluded.size, language = excluded.language, tokens = excluded.tokens, " +
          "line_count = excluded.line_count, mtime_ms = excluded.mtime_ms, extract = excluded.extract, indexed_at = excluded.indexed_at",
        [
          part.map((f) => f.row.path),
          part.map((f) => f.row.hash),
          part.map((f) => Math.round(f.row.size)),
          part.map((f) => f.row.language),
          part.map((f) => Math.round(f.row.tokens)),
          part.map((f) => Math.round(f.row.line_count)),
          part.map((f) => f.row.mtime_ms),
          part.map((f) => JSON.stringify(f.extract)),
          now,
        ],
      );
    }

    // One statement per batch writes the nodes, their vector and lexical rows and file rows. The next batch's
    // parameters (vector literals are the costly part) are prepared while the server works.
    let inflight: Promise<unknown> | undefined;
    for (const part of chunks(delta.nodes, batch)) {
      const params = nodeParams(part, delta.communityOf);
      await inflight;
      inflight = q(INSERT_NODES, params);
    }
    await inflight;

    for (const part of chunks(delta.edgesRemoved, batch)) {
      await q("DELETE FROM edges e USING unnest($1::text[], $2::text[], $3::text[]) AS d(s, t, k) WHERE e.source = d.s AND e.target = d.t AND e.type = d.k", [
        part.map((e) => e.source),
        part.map((e) => e.target),
        part.map((e) => e.type),
      ]);
    }
    for (const part of chunks(delta.edgesAdded, batch)) {
      await q("INSERT INTO edges (source, target, type, dispatch) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) ON CONFLICT DO NOTHING", [
        part.map((e) => e.source),
        part.map((e) => e.target),
        part.map((e) => e.type),
        part.map((e) => e.dispatch ?? null),
      ]);
    }
    // Rows whose community did not move are left alone: after re-clustering most keep theirs.
    for (const part of chunks([...(delta.communityUpdates ?? delta.communityOf)], batch)) {
      await q("UPDATE nodes n SET community = u.c FROM unnest($1::text[], $2::int4[]) AS u(id, c) WHERE n.id = u.id AND n.community <> u.c", [
        part.map(([id]) => id),
        part.map(([, c]) => c),
      ]);
    }
    await q("DELETE FROM communities", []);
    for (const part of chunks(delta.communities, batch)) {
      await q(
        "INSERT INTO communities (id, name, description, size, files) " +
          "SELECT i, n, d, s, ARRAY(SELECT jsonb_array_elements_text(f::jsonb)) FROM unnest($1::int4[], $2::text[], $3::text[], $4::int4[], $5::text[]) AS u(i, n, d, s, f)",
        [
          part.map((c) => c.id),
          part.map((c) => c.name),
          part.map((c) => c.description),
          part.map((c) => c.size ?? 0),
          part.map((c) => JSON.stringify(c.files ?? [])),
        ],
      );
    }
    const meta = Object.entries(delta.meta);
    if (meta.length > 0) {
      await q("INSERT INTO meta (key, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [
        meta.map(([k]) => k),
        meta.map(([, v]) => v),
      ]);
    }
  }
}

const tsv = (col: string, weight: string) => `setweight(to_tsvector('${TS_CONFIG}', ${col}), '${weight}')`;

/** Inserts a batch of nodes with their vector and lexical rows and, for module nodes, the whole-file row. */
const INSERT_NODES =
  "WITH ins AS (" +
  "INSERT INTO nodes (id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community, code, text_hash) " +
  "SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int4[], $10::int4[], $11::text[], $12::text[], $13::int4[], $14::text[], $15::text[]) " +
  "RETURNING rowid, id), " +
  "v AS (INSERT INTO vectors (rowid, embedding) SELECT ins.rowid, u.e::vector FROM ins JOIN unnest($1::text[], $16::text[]) AS u(id, e) ON u.id = ins.id), " +
  "l AS (INSERT INTO lexical (rowid, lexical) " +
  `SELECT ins.rowid, ${tsv("u.a", "A")} || ${tsv("u.b", "B")} || ${tsv("u.c", "C")} || ${tsv("u.d", "D")} ` +
  "FROM ins JOIN unnest($1::text[], $17::text[], $18::text[], $19::text[], $20::text[]) AS u(id, a, b, c, d) ON u.id = ins.id) " +
  `INSERT INTO file_lexical (rowid, lexical) SELECT ins.rowid, ${tsv("f.p", "A")} || ${tsv("f.w", "D")} ` +
  "FROM ins JOIN unnest($21::text[], $22::text[], $23::text[]) AS f(id, p, w) ON f.id = ins.id";

function nodeParams(part: BuildDelta["nodes"], communityOf: Map<string, number>): unknown[] {
  const withFile = part.filter((n) => n.fileWords !== undefined);
  return [
    part.map((n) => n.node.id),
    part.map((n) => n.node.name),
    part.map((n) => n.node.type),
    part.map((n) => n.node.file_path),
    part.map((n) => n.node.qualified_name),
    part.map((n) => text(n.node.signature)),
    part.map((n) => text(n.node.docstring)),
    part.map((n) => text(n.node.description)),
    part.map((n) => Math.round(n.node.line_start)),
    part.map((n) => Math.round(n.node.line_end)),
    part.map((n) => n.node.language),
    part.map((n) => n.node.parent ?? null),
    part.map((n) => communityOf.get(n.node.id) ?? -1),
    part.map((n) => text(n.node.code)),
    part.map((n) => n.textHash),
    part.map((n) => vectorToSql(n.vector)),
    part.map((n) => lexText(n.lexical.name)),
    part.map((n) => lexText(n.lexical.qualified)),
    part.map((n) => lexText(`${n.lexical.signature} ${n.lexical.doc} ${n.lexical.path}`)),
    part.map((n) => lexText(n.lexical.body)),
    withFile.map((n) => n.node.id),
    withFile.map((n) => lexText(n.lexical.path)),
    withFile.map((n) => lexText(n.fileWords!)),
  ];
}

/**
 * Rows of `table` matching any of the words ($1), best first. Each word goes through
 * plainto_tsquery, so no user text is parsed as query syntax. Words whose lexemes are all common
 * (row estimates $4/$5 above $6) are left out of the match but kept in the rank; when every word
 * is common, the least common one matches. At most $3 matches are ranked. The score is BM25-like:
 * each word's ts_rank (weighted fields, length-normalised) times its inverse document frequency
 * over $7 rows, a word absent from the statistics counting as $8 rows; ts_rank alone has no IDF.
 */
function lexicalSql(table: LexicalTable, weights: string): string {
  const or = (col: string) => `string_agg('(' || ${col}::text || ')', ' | ')`;
  return (
    // Each word's row estimate: its least common lexeme's count among the statistics ($4/$5), 0 when absent.
    `WITH st AS MATERIALIZED (SELECT * FROM unnest($4::text[], $5::float8[]) AS c(l, n)), ` +
    `words AS MATERIALIZED (SELECT u.q, e.est, greatest(ln(1 + ($7::float8 - k.n + 0.5) / (k.n + 0.5)), 0.01) AS idf ` +
    `FROM (SELECT w, plainto_tsquery('${TS_CONFIG}', w) AS q FROM unnest($1::text[]) AS w) AS u ` +
    `CROSS JOIN LATERAL (SELECT min(coalesce(st.n, 0)) AS est FROM unnest(tsvector_to_array(to_tsvector('${TS_CONFIG}', u.w))) AS l(l) LEFT JOIN st ON st.l = l.l) AS e ` +
    "CROSS JOIN LATERAL (SELECT CASE WHEN e.est > 0 THEN e.est ELSE $8::float8 END AS n) AS k " +
    "WHERE numnode(u.q) > 0), " +
    "q AS MATERIALIZED (SELECT " +
    `coalesce(${or("q")} FILTER (WHERE est <= $6), (SELECT x.q::text FROM words x ORDER BY x.est LIMIT 1))::tsquery AS match_q ` +
    "FROM words) " +
    `SELECT m.rowid, (SELECT sum(w.idf * ts_rank('${weights}', m.lexical, w.q, 1)) FROM words w) AS score ` +
    `FROM (SELECT x.rowid, x.lexical FROM ${table} x WHERE x.lexical @@ (SELECT match_q FROM q) LIMIT $3) AS m ` +
    "ORDER BY score DESC, m.rowid LIMIT $2"
  );
}

interface LexemeStats {
  at: number;
  lexemes: string[];
  rows: number[];
  tuples: number;
  rare: number;
}

function newerSchema(location: string, version: number): CodememError {
  return new CodememError("INDEX_CORRUPT", `The index in ${location} has schema version ${version}, newer than this codemem's ${LATEST_VERSION}; upgrade codemem, or rebuild with \`codemem build --backend postgres --force\`.`);
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `regnamespace::text` quotes names that need it; the bare name is what quoteIdent expects. */
function unquoteIdent(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replace(/""/g, '"') : name;
}

/** PostgreSQL text cannot hold NUL characters. */
function text(s: string): string {
  return s.includes("\0") ? s.replace(/\0/g, "") : s;
}

function lexText(s: string): string {
  return text(s.length > MAX_LEXICAL_CHARS ? s.slice(0, MAX_LEXICAL_CHARS) : s);
}

function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** pgvector's text form: `[0.1,0.2,…]`. */
function vectorToSql(v: Float32Array): string {
  return `[${Array.from(v).join(",")}]`;
}

function vectorFromSql(text: string): Float32Array {
  return Float32Array.from(JSON.parse(text) as number[]);
}

/** Edge rows as edges: `dispatch` only where set. */
function edgeRows(rows: GraphEdge[]): GraphEdge[] {
  for (const r of rows) if (r.dispatch === null) delete r.dispatch;
  return rows;
}
