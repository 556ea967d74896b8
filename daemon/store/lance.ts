/**
 * The offline backend: LanceDB tables on local disk, for edge and air-gapped use (≤ ~100k nodes).
 *
 * Atomicity. Lance commits each table on its own, so one build spans several commits. Every
 * apply therefore writes a new generation directory `gens/g<n+1>`: a hard-linked copy of the
 * committed generation (Lance never rewrites a file in place, so the copy costs one link per file
 * and leaves the original byte-for-byte intact), changed there table by table, compacted and
 * pruned there when due, fsynced, and committed by replacing the small `CURRENT` pointer (write
 * to temp, rename). Readers resolve CURRENT when they open and on `refresh`, and read only that
 * generation, which nothing writes after its commit: they see the old index or the new one,
 * never half. A crash before the rename leaves an orphan directory that the next apply deletes;
 * the committed generation is untouched. After the switch every generation but the new one and
 * its predecessor (which readers opened before the apply may still hold) is removed; a reader
 * left behind by two applies finds its files gone and re-resolves CURRENT once.
 *
 * Rejected: one set of tables with a pointer to per-table versions and `checkout`. Pruning old
 * versions goes through `optimize`, which measures its age cutoff after compacting, so it can
 * delete the very version the pointer names; a private generation can be pruned freely.
 *
 * Search. BM25 over one `text` column per node (LexicalFields repeated by weight); rows added
 * since the index was last folded in are searched exhaustively by Lance, so an apply is
 * searchable at once, and indexes are folded in when that tail grows. Vectors: exact cosine
 * scan below 10k nodes; above, an IVF_FLAT index (exact distances within the probed partitions,
 * builds in ~1 s per 20k rows, where IVF_PQ and HNSW took 20-50 s) probed generously.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import type * as LanceDb from "@lancedb/lancedb";
import { CodememError } from "../../shared/errors.js";
import { ensureOwnTree, ownTop } from "../../shared/own-files.js";
import type { FileExtract, GraphCommunity, GraphEdge } from "../index/types.js";
import { acquireLock, corrupt, duBytes, genDir, linkTree, nextGeneration, readPointer, removeGenerations, syncTree, writePointer } from "./lance-generations.js";
import { fromArrow, inChunks, loadLance, schemaOf, TABLE_NAMES, toArrow, type Lance, type Row, type TableName } from "./lance-tables.js";
import { LEXICAL_WEIGHTS, settled, type BuildDelta, type CatalogNode, type FileRow, type IndexStore, type LexicalFields, type LexicalHit, type OpenStoreOptions, type PendingDelta } from "./types.js";

export const LANCE_SCHEMA_VERSION = "lance-2";
/** Meta keys of the store itself, not shown by `meta()`. */
const INTERNAL_PREFIX = "lance.";
const NEXT_ROWID = "lance.next_rowid";
/**
 * Unindexed rows Lance may scan per full-text query before an apply folds them into the index:
 * a node costs ~0.1-0.2 ms per query, a whole file's words about ten times that.
 */
const FTS_TAIL_MAX = { nodes: 128, file_words: 16 };
/** Versions per table before an apply compacts and prunes its generation: bounds the files linked per apply. */
const MAX_VERSIONS = 48;
/** Below this an exact scan answers in ~25 ms; above, an IVF index pays for its build. */
const ANN_MIN_ROWS = 10_000;
/** Edge or membership changes beyond which the table is rewritten rather than patched. */
const PATCH_MAX = 2000;
const CATALOG_COLUMNS = ["rowid", "id", "name", "type", "file_path", "qualified_name", "signature", "docstring", "description", "line_start", "line_end", "language", "parent"];
const FILE_COLUMNS = ["path", "hash", "size", "language", "tokens", "line_count", "mtime_ms"];
/** Times each field is repeated in the `text` column: LEXICAL_WEIGHTS rounded. */
const REPEATS = LEXICAL_WEIGHTS.map((w) => Math.max(1, Math.round(w)));

interface Generation {
  name: string;
  dir: string;
  conn: LanceDb.Connection;
  tables: Record<TableName, LanceDb.Table>;
  meta: Record<string, string>;
  dim: number;
  /** IVF partitions probed per query; undefined while the vectors have no index. */
  probes?: number;
}

export class LanceStore implements IndexStore {
  readonly backend = "lancedb" as const;
  /** The generation read and written from; undefined before the first build or while replacing. */
  private gen?: Generation;
  /** The generation CURRENT named when this store last synced; an apply commits only on top of it. */
  private base?: string;
  private replacing = false;
  private dim: number;

  private constructor(
    private readonly lance: Lance,
    private readonly dir: string,
    private readonly opts: OpenStoreOptions,
  ) {
    this.dim = opts.dim ?? 0;
  }

  get location(): string {
    return this.dir;
  }

  static async open(dir: string, opts: OpenStoreOptions): Promise<LanceStore> {
    const store = new LanceStore(loadLance(), dir, opts);
    const forced = opts.mode === "build" && !!opts.force;
    try {
      const pointer = readPointer(dir);
      store.base = pointer?.generation;
      if (pointer) store.gen = await store.openGeneration(pointer.generation);
    } catch (err) {
      // A forced build replaces an unreadable index, any build one of an older schema (derived data);
      // the old one stays until the replacement commits.
      const e = err as CodememError;
      if (e.code !== "INDEX_CORRUPT" || !(forced || (opts.mode === "build" && e.details?.schema !== undefined))) throw err;
      store.replacing = true;
    }
    if (store.gen) {
      if (forced && opts.dim && store.gen.dim !== opts.dim) {
        // Another vector width needs new tables: built from empty, swapped in at commit.
        store.closeGeneration(store.gen);
        store.gen = undefined;
        store.replacing = true;
      } else store.dim = store.gen.dim;
      return store;
    }
    if (opts.mode === "read") {
      throw new CodememError("INDEX_MISSING", `No LanceDB index at ${dir}; run \`codemem build --backend lancedb\` first.`, { dir });
    }
    if (!opts.dim) throw new CodememError("INDEX_MISSING", `No LanceDB index at ${dir}, and no vector width to create one; run \`codemem build --backend lancedb\`.`, { dir });
    return store;
  }

  private async openGeneration(name: string): Promise<Generation> {
    const dir = genDir(this.dir, name);
    if (!fs.existsSync(dir)) throw corrupt(this.dir, `generation ${name} named by CURRENT is missing`);
    let conn: LanceDb.Connection | undefined;
    try {
      conn = await this.lance.db.connect(dir);
      const present = new Set(await conn.tableNames());
      const missing = TABLE_NAMES.filter((t) => !present.has(t));
      if (missing.length) throw corrupt(this.dir, `generation ${name} lacks the tables ${missing.join(", ")}`);
      const tables = {} as Record<TableName, LanceDb.Table>;
      for (const t of TABLE_NAMES) tables[t] = await conn.openTable(t);
      const meta = Object.fromEntries((await readRows(tables.meta, ["key", "value"])).map((r) => [r.key as string, r.value as string]));
      if (meta.schema_version !== LANCE_SCHEMA_VERSION) {
        const old = corrupt(this.dir, `schema ${meta.schema_version ?? "none"}, this codemem needs ${LANCE_SCHEMA_VERSION}`);
        throw new CodememError(old.code, old.message, { dir: this.dir, schema: meta.schema_version ?? "none" });
      }
      const gen: Generation = { name, dir, conn, tables, meta, dim: Number(meta.dim) };
      await this.setProbes(gen);
      return gen;
    } catch (err) {
      conn?.close();
      if (err instanceof CodememError) throw err;
      throw corrupt(this.dir, `generation ${name}: ${firstLine(err)}`);
    }
  }

  private async setProbes(gen: Generation): Promise<void> {
    const indexed = (await gen.tables.nodes.listIndices()).some((i) => i.columns.includes("vector"));
    // ~1/8 of √n partitions: recall 1.0 on clustered 384-d vectors at 20k and 100k rows.
    gen.probes = indexed ? Math.max(20, Math.ceil(Math.sqrt(await gen.tables.nodes.countRows()) / 8)) : undefined;
  }

  private closeGeneration(gen: Generation): void {
    for (const t of Object.values(gen.tables)) if (t.isOpen()) t.close();
    if (gen.conn.isOpen()) gen.conn.close();
  }

  /**
   * Runs a read on the current generation. A reader left behind by two applies finds its files
   * removed; it moves to the committed generation once and retries.
   */
  private async read<T>(empty: T, f: (g: Generation) => Promise<T>): Promise<T> {
    const g = this.gen;
    if (!g) return empty;
    try {
      return await f(g);
    } catch (err) {
      if (this.opts.mode !== "read") throw err;
      let now: string | undefined;
      try {
        now = readPointer(this.dir)?.generation;
      } catch {
        throw err;
      }
      if (!now || now === g.name) throw err;
      await this.moveTo(now);
      return f(this.gen!);
    }
  }

  /** Switches reads to another committed generation; the old handles are left to the collector, as reads may still run on them. */
  private async moveTo(name: string): Promise<void> {
    this.gen = await this.openGeneration(name);
    this.base = name;
  }

  async meta(): Promise<Record<string, string>> {
    const m = this.gen?.meta ?? { schema_version: LANCE_SCHEMA_VERSION, dim: String(this.dim) };
    return Object.fromEntries(Object.entries(m).filter(([k]) => !k.startsWith(INTERNAL_PREFIX)));
  }

  async files(paths?: string[]): Promise<FileRow[]> {
    if (paths?.length === 0) return [];
    const rows = await this.read([], (g) => (paths ? readWhere(g.tables.files, FILE_COLUMNS, inChunks("path", paths)) : readRows(g.tables.files, FILE_COLUMNS)));
    return (rows as unknown as FileRow[]).sort((a, b) => cmp(a.path, b.path));
  }

  async extracts(paths?: string[]): Promise<FileExtract[]> {
    if (paths?.length === 0) return [];
    const rows = await this.read([], (g) => (paths ? readWhere(g.tables.files, ["path", "extract"], inChunks("path", paths)) : readRows(g.tables.files, ["path", "extract"])));
    return rows.sort((a, b) => cmp(a.path as string, b.path as string)).map((r) => JSON.parse(r.extract as string) as FileExtract);
  }

  async nodeHashes(files: string[]): Promise<Map<string, { rowid: number; textHash: string }>> {
    const rows = await this.read([], (g) => readWhere(g.tables.nodes, ["rowid", "id", "text_hash"], inChunks("file_path", files)));
    return new Map(rows.map((r) => [r.id as string, { rowid: r.rowid as number, textHash: r.text_hash as string }]));
  }

  async vectors(rowids: number[]): Promise<Map<number, Float32Array>> {
    const rows = await this.read([], (g) => readWhere(g.tables.nodes, ["rowid", "vector"], inChunks("rowid", rowids)));
    return new Map(rows.map((r) => [r.rowid as number, r.vector as Float32Array]));
  }

  async edges(): Promise<GraphEdge[]> {
    const rows = (await this.read([], (g) => readRows(g.tables.edges, ["source", "target", "type", "dispatch"]))) as unknown as GraphEdge[];
    for (const r of rows) if (!r.dispatch) delete r.dispatch;
    return rows;
  }

  /** Tables here have no index on edge ends: the generation's adjacency is built once, on first use. */
  private adjacency?: { gen: string; byNode: Map<string, GraphEdge[]> };

  async neighbors(ids: string[]): Promise<GraphEdge[]> {
    if (this.adjacency?.gen !== this.gen?.name) {
      const byNode = new Map<string, GraphEdge[]>();
      for (const e of await this.edges()) {
        if (e.type === "imports") continue;
        for (const end of [e.source, e.target]) (byNode.get(end) ?? byNode.set(end, []).get(end)!).push(e);
      }
      this.adjacency = { gen: this.gen?.name ?? "", byNode };
    }
    const seen = new Set<GraphEdge>();
    return ids.flatMap((id) => (this.adjacency!.byNode.get(id) ?? []).filter((e) => !seen.has(e) && seen.add(e)));
  }

  /** Import edges by target, built once per generation as `adjacency` is. */
  private importedBy?: { gen: string; byTarget: Map<string, GraphEdge[]> };

  async importers(files: string[]): Promise<GraphEdge[]> {
    if (this.importedBy?.gen !== this.gen?.name) {
      const byTarget = new Map<string, GraphEdge[]>();
      for (const e of await this.edges()) if (e.type === "imports") (byTarget.get(e.target) ?? byTarget.set(e.target, []).get(e.target)!).push(e);
      this.importedBy = { gen: this.gen?.name ?? "", byTarget };
    }
    return files.flatMap((f) => this.importedBy!.byTarget.get(f) ?? []);
  }

  async degrees(types: string[]): Promise<Map<string, number>> {
    const d = new Map<string, number>();
    for (const e of await this.edges()) {
      if (!types.includes(e.type) || e.source === e.target || e.dispatch) continue; // recursion and possible calls are no centrality
      for (const end of [e.source, e.target]) d.set(end, (d.get(end) ?? 0) + 1);
    }
    return d;
  }

  async communities(): Promise<GraphCommunity[]> {
    const rows = await this.read([], (g) => readRows(g.tables.communities, ["id", "name", "description", "size", "files"]));
    return rows
      .map((r) => ({ ...(r as unknown as GraphCommunity), files: JSON.parse(r.files as string) as string[] }))
      .sort((a, b) => a.id - b.id);
  }

  async catalog(files?: string[]): Promise<CatalogNode[]> {
    return this.read([], async (g) => {
      const nodes = files ? await readWhere(g.tables.nodes, CATALOG_COLUMNS, inChunks("file_path", files)) : await readRows(g.tables.nodes, CATALOG_COLUMNS);
      const members = files
        ? await readWhere(g.tables.memberships, ["id", "community"], inChunks("id", nodes.map((n) => n.id as string)))
        : await readRows(g.tables.memberships, ["id", "community"]);
      const community = new Map(members.map((m) => [m.id as string, m.community as number]));
      const out = nodes.map((n) => ({ ...n, parent: (n.parent as string | null) ?? null, community: community.get(n.id as string) ?? -1 }) as unknown as CatalogNode);
      if (!files) return out.sort((a, b) => a.rowid - b.rowid);
      const order = new Map(files.map((f, i) => [f, i]));
      return out.sort((a, b) => order.get(a.file_path)! - order.get(b.file_path)! || a.rowid - b.rowid);
    });
  }

  async code(rowid: number): Promise<string> {
    const rows = await this.read([], (g) => readWhere(g.tables.nodes, ["code"], [`rowid = ${Math.trunc(rowid)}`], 1));
    return (rows[0]?.code as string | undefined) ?? "";
  }

  async lexicalNodes(words: string[], limit: number): Promise<LexicalHit[]> {
    return this.fullText("nodes", words, limit);
  }

  async lexicalFiles(words: string[], limit: number): Promise<LexicalHit[]> {
    return this.fullText("file_words", words, limit);
  }

  /**
   * BM25 over the table's `text`. Each word is its own clause of a boolean OR: in Lance 0.21 a
   * MatchQuery of several terms gives every hit the same score. Words go to Lance's tokenizer as
   * plain text, never through a query syntax.
   */
  private async fullText(table: "nodes" | "file_words", words: string[], limit: number): Promise<LexicalHit[]> {
    const terms = [...new Set(words.flatMap((w) => w.toLowerCase().split(/[^\p{L}\p{N}]+/u)).filter(Boolean))];
    if (terms.length === 0 || limit <= 0) return [];
    const { BooleanQuery, MatchQuery, Occur } = this.lance.db;
    const query = new BooleanQuery(terms.map((t) => [Occur.Should, new MatchQuery(t, "text")]));
    const rows = await this.read([], async (g) => (await g.tables[table].query().fullTextSearch(query).select(["rowid"]).limit(limit).toArray()) as { rowid: bigint; _score: number }[]);
    return rows.sort((a, b) => b._score - a._score).map((r) => ({ rowid: Number(r.rowid), score: r._score }));
  }

  async nearest(q: Float32Array, limit: number): Promise<{ rowid: number; sim: number }[]> {
    if (limit <= 0) return [];
    if (this.gen && q.length !== this.gen.dim) {
      throw new CodememError("INVALID_ARGUMENT", `The query vector has width ${q.length}; the LanceDB index at ${this.dir} stores ${this.gen.dim}.`);
    }
    const rows = await this.read([], async (g) => {
      let search = g.tables.nodes.vectorSearch(q).distanceType("cosine").select(["rowid"]).limit(limit);
      if (g.probes) search = search.nprobes(g.probes);
      return (await search.toArray()) as { rowid: bigint; _distance: number }[];
    });
    return rows.map((r) => ({ rowid: Number(r.rowid), sim: 1 - r._distance }));
  }

  async refresh(_files: string[]): Promise<void> {
    // Nothing is cached beyond the generation itself: follow CURRENT if another build committed.
    if (this.opts.mode !== "read") return;
    const now = readPointer(this.dir)?.generation;
    if (now && now !== this.gen?.name) await this.moveTo(now);
  }

  async sizeBytes(): Promise<number> {
    return this.gen ? duBytes(this.gen.dir) : 0;
  }

  async close(): Promise<void> {
    if (this.gen) this.closeGeneration(this.gen);
    this.gen = undefined;
  }

  async apply(pending: BuildDelta | PendingDelta): Promise<void> {
    const delta = await settled(pending);
    await this.commit(async (g, fresh) => {
      const now = new Date().toISOString();
      await this.writeFiles(g, delta, fresh, now);
      await this.writeEdges(g, delta, fresh);
      await this.replaceTable(g, "communities", delta.communities.map((c) => ({ id: c.id, name: c.name, description: c.description, size: c.size ?? 0, files: JSON.stringify(c.files ?? []) })));
      await this.writeMemberships(g, delta, fresh);
      const next = await this.writeNodes(g, delta, fresh);
      g.meta = { ...g.meta, ...delta.meta, schema_version: LANCE_SCHEMA_VERSION, dim: String(g.dim), [NEXT_ROWID]: String(next) };
      await this.replaceTable(g, "meta", Object.entries(g.meta).map(([key, value]) => ({ key, value })));
      await this.upkeep(g, false);
    });
  }

  /** Compacts every table, rebuilds the full-text and vector indexes for the current size, and drops old versions. */
  async optimize(): Promise<void> {
    if (!this.gen) return;
    await this.commit((g) => this.upkeep(g, true));
  }

  /**
   * One atomic step: a private generation linked from the current one is changed by `change`,
   * flushed to disk, and made current by renaming CURRENT. Any failure leaves CURRENT as it was.
   */
  private async commit(change: (g: Generation, fresh: boolean) => Promise<void>): Promise<void> {
    if (this.opts.mode !== "build") throw new CodememError("INTERNAL", `The LanceDB index at ${this.dir} was opened for reading; open it with mode "build" to write.`);
    if (ownTop(this.dir) !== undefined) ensureOwnTree(this.dir);
    else fs.mkdirSync(this.dir, { recursive: true });
    const release = acquireLock(this.dir);
    let next: Generation | undefined;
    let nextDir: string | undefined;
    try {
      let committed: string | undefined;
      try {
        committed = readPointer(this.dir)?.generation;
      } catch (err) {
        if (!this.replacing) throw err;
      }
      if (committed !== this.base) {
        throw new CodememError("BUILD_IN_PROGRESS", `Another build committed to ${this.dir} while this one ran (${this.base ?? "none"} → ${committed ?? "none"}); run the build again.`, { dir: this.dir });
      }
      const started = Date.now();
      const name = nextGeneration(this.dir);
      nextDir = genDir(this.dir, name);
      fs.rmSync(nextDir, { recursive: true, force: true });
      const fresh = !this.gen;
      if (this.gen) linkTree(this.gen.dir, nextDir);
      else fs.mkdirSync(nextDir, { recursive: true });
      const conn = await this.lance.db.connect(nextDir);
      const tables = {} as Record<TableName, LanceDb.Table>;
      for (const t of TABLE_NAMES) tables[t] = fresh ? await conn.createEmptyTable(t, schemaOf(this.lance, t, this.dim)) : await conn.openTable(t);
      if (fresh) for (const t of ["nodes", "file_words"] as const) await tables[t].createIndex("text", { config: this.ftsIndex() });
      const meta = this.gen ? { ...this.gen.meta } : { schema_version: LANCE_SCHEMA_VERSION, dim: String(this.dim) };
      next = { name, dir: nextDir, conn, tables, meta, dim: this.dim };
      await change(next, fresh);
      await this.setProbes(next);
      // Two seconds of slack for file systems with coarse mtimes.
      syncTree(nextDir, started - 2000);
      writePointer(this.dir, name);
    } catch (err) {
      if (next) this.closeGeneration(next);
      if (nextDir) {
        try {
          fs.rmSync(nextDir, { recursive: true, force: true });
        } catch {
          // removed by the next apply
        }
      }
      release();
      throw err;
    }
    const previous = this.base;
    if (this.gen) this.closeGeneration(this.gen);
    this.gen = next;
    this.base = next.name;
    this.replacing = false;
    removeGenerations(this.dir, new Set([next.name, ...(previous ? [previous] : [])]));
    release();
  }

  private ftsIndex(): LanceDb.Index {
    // Positions are only needed for phrase queries, which we never send.
    return this.lance.db.Index.fts({ withPosition: false, stem: true, language: "English", lowercase: true, asciiFolding: true, removeStopWords: false });
  }

  private arrow(g: Generation, table: TableName, rows: Row[]) {
    return toArrow(this.lance, table, g.dim, rows, Math.max(1, this.opts.batchSize ?? 1000));
  }

  /** Replaces a small table wholesale; dropping it in the private generation unlinks only this generation's files. */
  private async replaceTable(g: Generation, table: TableName, rows: Row[]): Promise<void> {
    g.tables[table].close();
    await g.conn.dropTable(table);
    g.tables[table] = await g.conn.createEmptyTable(table, schemaOf(this.lance, table, g.dim));
    if (rows.length) await g.tables[table].add(this.arrow(g, table, rows));
  }

  private async writeFiles(g: Generation, delta: BuildDelta, fresh: boolean, now: string): Promise<void> {
    const t = g.tables.files;
    if (!fresh) for (const p of inChunks("path", [...new Set([...delta.removedFiles, ...delta.upsertFiles.map((u) => u.row.path)])])) await t.delete(p);
    const rows = delta.upsertFiles.map(({ row, extract }) => ({ ...row, extract: JSON.stringify(extract), indexed_at: now }));
    if (rows.length) await t.add(this.arrow(g, "files", rows));
  }

  /** Removed and added edges are deleted by key, then the added ones inserted: an edge present twice stays once. */
  private async writeEdges(g: Generation, delta: BuildDelta, fresh: boolean): Promise<void> {
    const added = [...new Map(delta.edgesAdded.map((e) => [edgeKey(e), { key: edgeKey(e), source: e.source, target: e.target, type: e.type, dispatch: e.dispatch ?? 0 }])).values()];
    if (fresh) {
      if (added.length) await g.tables.edges.add(this.arrow(g, "edges", added));
      return;
    }
    const touched = [...delta.edgesRemoved, ...added];
    if (touched.length > PATCH_MAX) {
      const drop = new Set(touched.map(edgeKey));
      const kept = (await readRows(g.tables.edges, ["key", "source", "target", "type", "dispatch"])).filter((e) => !drop.has(e.key as string));
      await this.replaceTable(g, "edges", [...kept, ...added]);
      return;
    }
    for (const p of inChunks("key", touched.map(edgeKey))) await g.tables.edges.delete(p);
    if (added.length) await g.tables.edges.add(this.arrow(g, "edges", added));
  }

  /** Communities live beside the nodes (id → community), so re-clustering rewrites two small columns instead of every vector. */
  private async writeMemberships(g: Generation, delta: BuildDelta, fresh: boolean): Promise<void> {
    const updates = delta.communityUpdates;
    const newIds = delta.nodes.map((n) => n.node.id);
    if (fresh || !updates || updates.size + newIds.length > PATCH_MAX) {
      // `communityOf` covers every node, so the table is rebuilt from it.
      const all = new Map(delta.communityOf);
      for (const [id, c] of updates ?? []) all.set(id, c);
      for (const id of newIds) if (!all.has(id)) all.set(id, -1);
      await this.replaceTable(g, "memberships", [...all].map(([id, community]) => ({ id, community })));
      return;
    }
    const ids = [...new Set([...updates.keys(), ...newIds])];
    for (const p of inChunks("id", ids)) await g.tables.memberships.delete(p);
    const rows = ids.map((id) => ({ id, community: updates.get(id) ?? delta.communityOf.get(id) ?? -1 }));
    if (rows.length) await g.tables.memberships.add(this.arrow(g, "memberships", rows));
  }

  /** Replaces the nodes of the cleared files; returns the next free rowid. */
  private async writeNodes(g: Generation, delta: BuildDelta, fresh: boolean): Promise<number> {
    const cleared = [...new Set([...delta.replaceNodesOf, ...delta.removedFiles])];
    if (!fresh) {
      for (const p of inChunks("file_path", cleared)) await g.tables.nodes.delete(p);
      for (const p of inChunks("path", cleared)) await g.tables.file_words.delete(p);
    }
    let next = Number(g.meta[NEXT_ROWID] ?? 1);
    const nodes: Row[] = [];
    const words: Row[] = [];
    for (const { node, textHash, lexical, vector, fileWords } of delta.nodes) {
      const rowid = next++;
      nodes.push({
        rowid, id: node.id, name: node.name, type: node.type, file_path: node.file_path, qualified_name: node.qualified_name,
        signature: node.signature, docstring: node.docstring, description: node.description, line_start: node.line_start,
        line_end: node.line_end, language: node.language, parent: node.parent ?? null, code: node.code, text_hash: textHash,
        text: lexicalText(lexical), vector,
      });
      // Path words count twice, as in the local backend's bm25(fts_files, 2, 1).
      if (fileWords !== undefined) words.push({ rowid, path: node.file_path, text: `${lexical.path}\n${lexical.path}\n${fileWords}` });
    }
    if (nodes.length) await g.tables.nodes.add(this.arrow(g, "nodes", nodes));
    if (words.length) await g.tables.file_words.add(this.arrow(g, "file_words", words));
    return next;
  }

  /**
   * Index upkeep inside the private generation. After an apply, a table whose unindexed tail grew
   * long or whose versions piled up is folded: `optimize` compacts it, merges new rows into its
   * indexes and prunes old versions (safe here: no reader sees this generation yet). The vector
   * index appears once the table is large enough. `full` (build --optimize) compacts everything
   * first, then rebuilds every index for the current size, then prunes what the rebuild replaced
   * (compacting after the rebuild would rewrite the fresh indexes once more).
   */
  private async upkeep(g: Generation, full: boolean): Promise<void> {
    const t = g.tables;
    const prune = (table: TableName) => t[table].optimize({ cleanupOlderThan: new Date(), deleteUnverified: true });
    const fold = new Set<TableName>();
    for (const table of ["nodes", "file_words"] as const) {
      const s = await t[table].indexStats("text_idx");
      const tail = s?.numUnindexedRows ?? Infinity;
      // A mostly unindexed table (first build) is indexed from scratch, faster than merging. An
      // index of zero rows must be: Lance's scan of the unindexed tail then matches nothing.
      if (full || !s || tail > s.numIndexedRows) await t[table].createIndex("text", { config: this.ftsIndex(), replace: true });
      else if (tail > FTS_TAIL_MAX[table]) fold.add(table);
    }
    const rows = await t.nodes.countRows();
    const hasAnn = (await t.nodes.listIndices()).some((i) => i.columns.includes("vector"));
    if (rows >= ANN_MIN_ROWS && (!hasAnn || full)) {
      const config = this.lance.db.Index.ivfFlat({ distanceType: "cosine", numPartitions: Math.round(Math.sqrt(rows)) });
      await t.nodes.createIndex("vector", { config, replace: true });
    }
    for (const table of TABLE_NAMES) if (full || (await t[table].listVersions()).length > MAX_VERSIONS) fold.add(table);
    for (const table of fold) await prune(table);
  }
}

/** The node's fields in one column, each repeated by its weight: BM25's term frequency then favours names. */
function lexicalText(l: LexicalFields): string {
  const fields = [l.name, l.qualified, l.signature, l.doc, l.path, l.body];
  return fields.flatMap((f, i) => (f ? Array<string>(REPEATS[i]).fill(f) : [])).join("\n");
}

async function readRows(table: LanceDb.Table, columns: string[]): Promise<Row[]> {
  return fromArrow(await table.query().select(columns).toArrow());
}

async function readWhere(table: LanceDb.Table, columns: string[], predicates: string[], limit?: number): Promise<Row[]> {
  const out: Row[] = [];
  for (const p of predicates) {
    let q = table.query().where(p).select(columns);
    if (limit) q = q.limit(limit);
    // A loop, not push(...rows): a chunk of large files can hold more rows than a call takes arguments.
    for (const row of fromArrow(await q.toArrow())) out.push(row);
  }
  return out;
}

/** An edge's identity as one indexable string (deleting by three-column conjunctions is ~10x slower). */
function edgeKey(e: { source: string; target: string; type: string }): string {
  return createHash("sha1").update(e.source).update("\u0000").update(e.target).update("\u0000").update(e.type).digest("base64url");
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0].slice(0, 300);
}
