import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import ignore, { type Ignore } from "ignore";
import * as sqliteVec from "sqlite-vec";
import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { prepareFile, SQLITE_SIDECARS } from "../../shared/own-files.js";
import { leadsOutside, stateDirs } from "../../shared/paths.js";
import { countTokens } from "../../shared/tokens.js";
import type { Embedder } from "../index/embed/embedder.js";
import { isStopword } from "../index/text.js";
import { makePathFilter } from "../index/walk.js";
import { chunkUnits, sentences, type DocChunk } from "./chunk.js";
import { DocSkip, docKindForPath, extractDocument, type DocKind, type SkipReason } from "./extract.js";
import { redactSecrets } from "../secrets/scan.js";

/** Largest PDF or DOCX read; bigger files are reported in `skipped`. */
export const MAX_BINARY_DOC_BYTES = 50 * 1024 * 1024;
/** Largest Markdown file read. */
export const MAX_MARKDOWN_BYTES = 10 * 1024 * 1024;

const SCHEMA_VERSION = "3";
const SCHEMA = (dim: number) => `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
  path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, kind TEXT NOT NULL,
  pages INTEGER NOT NULL, chunks INTEGER NOT NULL, indexed_at TEXT NOT NULL
);
-- Documents that could not be read, kept with their hash so an unchanged one is not retried.
CREATE TABLE IF NOT EXISTS skipped (path TEXT PRIMARY KEY, hash TEXT, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, reason TEXT NOT NULL, detail TEXT);
CREATE TABLE IF NOT EXISTS chunks (
  rowid INTEGER PRIMARY KEY, doc TEXT NOT NULL, ord INTEGER NOT NULL, page INTEGER, heading TEXT, text TEXT NOT NULL, tokens INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_chunks USING fts5(
  text, heading, doc, tokenize='porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS vec_chunks USING vec0(embedding float[${dim}] distance_metric=cosine);
`;

/** Fusion as in code search: reciprocal rank fusion, k = 60, the same list weights. */
const RRF_K = 60;
const LEXICAL_WEIGHT = 1.0;
const VECTOR_WEIGHT = 0.9;
const CANDIDATES = 100;
/** BM25 column weights: chunk text, heading, document name. */
const BM25_WEIGHTS = [1, 2, 1.5];
/** A passage cut to fit the budget keeps at least this many tokens, or is left out. */
const MIN_CUT_TOKENS = 40;
const EMBED_BATCH = 128;

export interface DocsUpdateResult {
  /** Documents in the index after the update. */
  documents: number;
  /** Chunks in the index after the update. */
  chunks: number;
  /** Documents extracted and (re)indexed by this update: new or modified. */
  changed: number;
  /** Previously indexed documents dropped: deleted, now excluded, or now unreadable. */
  removed: number;
  /** Documents that cannot be indexed (encrypted, scanned, corrupt, too large), with the reason. */
  skipped: SkippedDoc[];
  /** Pages (PDF) or sections (DOCX, Markdown) extracted by this update. */
  pages: number;
  seconds: number;
}

export interface DocPassage {
  document: string;
  page?: number;
  heading?: string;
  text: string;
  tokens: number;
  score: number;
}

export interface DocsSearchResult {
  passages: DocPassage[];
  /** Sum of the passages' o200k tokens; never above the budget when one is given. */
  tokens: number;
}

export interface SkippedDoc {
  path: string;
  reason: SkipReason;
  detail?: string;
}

interface SkipRow {
  path: string;
  hash: string | null;
  size: number;
  mtime_ms: number;
  reason: SkipReason;
  detail: string | null;
}

interface DocFile {
  path: string;
  abs: string;
  size: number;
  mtimeMs: number;
  kind: DocKind;
}

/** The reference-document index of one project: its own SQLite file, apart from the code index. */
export class DocsIndex {
  private updating: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly root: string,
    readonly file: string,
    readonly db: Database.Database,
    readonly embedder: Embedder,
  ) {}

  /** Where the documents index of a project lives. */
  static fileFor(root: string): string {
    return path.join(stateDirs(root).dbDir, "docs.db");
  }

  /** Opens (creating if needed) `codegraph-out/codemem_db/docs.db`. A damaged file is rebuilt: it holds only derived data. */
  static open(root: string, embedder: Embedder): DocsIndex {
    const file = DocsIndex.fileFor(root);
    prepareFile(file, SQLITE_SIDECARS);
    try {
      return new DocsIndex(root, file, openDb(file, embedder.dim), embedder);
    } catch (err) {
      if (err instanceof CodememError) throw err;
      log.warn("docs index unreadable, recreating it", { file, error: (err as Error).message });
      for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
      return new DocsIndex(root, file, openDb(file, embedder.dim), embedder);
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private meta(key: string): string | undefined {
    return (this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  private setMeta(kv: Record<string, string>): void {
    const st = this.db.prepare("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    for (const [k, v] of Object.entries(kv)) st.run(k, v);
  }

  /** True once an update has completed. */
  indexed(): boolean {
    return this.meta("updated_at") !== undefined;
  }

  /** Number of documents indexed. */
  documentsIndexed(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM documents").get() as { n: number }).n;
  }

  /** Documents left out at the last update, with the reason. */
  skipped(): SkippedDoc[] {
    return (this.db.prepare("SELECT path, reason, detail FROM skipped ORDER BY path").all() as SkipRow[]).map(skippedDoc);
  }

  /** Brings the index in line with the project's documents; unchanged documents are not re-read. */
  update(cfg: ResolvedConfig): Promise<DocsUpdateResult> {
    const run = this.updating.then(() => this.doUpdate(cfg));
    this.updating = run.catch(() => undefined);
    return run;
  }

  private async doUpdate(cfg: ResolvedConfig): Promise<DocsUpdateResult> {
    const t0 = performance.now();
    if (path.resolve(cfg.root) !== path.resolve(this.root)) {
      throw new CodememError("INVALID_ARGUMENT", `The configuration is for ${cfg.root} but this documents index belongs to ${this.root}; open the index of that project.`);
    }
    // Another embedder (or dimension) built the index: everything is re-embedded.
    const rebuild = this.meta("embedder") !== undefined && (this.meta("embedder") !== this.embedder.id || this.meta("dim") !== String(this.embedder.dim));

    const files = listDocuments(cfg);
    const known = new Map(
      (this.db.prepare("SELECT path, hash, size, mtime_ms FROM documents").all() as { path: string; hash: string; size: number; mtime_ms: number }[]).map((r) => [r.path, r]),
    );
    const knownSkips = new Map(
      (this.db.prepare("SELECT path, hash, size, mtime_ms, reason, detail FROM skipped").all() as SkipRow[]).map((r) => [r.path, r]),
    );

    const keep = new Set<string>();
    const skipped: SkipRow[] = [];
    const fresh: { file: DocFile; hash: string; pages: number; chunks: DocChunk[] }[] = [];
    const touched: DocFile[] = [];
    let pages = 0;

    for (const f of files) {
      const limit = f.kind === "markdown" ? MAX_MARKDOWN_BYTES : MAX_BINARY_DOC_BYTES;
      if (f.size > limit) {
        skipped.push({ path: f.path, hash: null, size: f.size, mtime_ms: f.mtimeMs, reason: "too large", detail: `${f.size} bytes > ${limit}` });
        continue;
      }
      const old = known.get(f.path);
      const oldSkip = knownSkips.get(f.path);
      // Same size and mtime: taken as unchanged without reading (as git does); otherwise the hash decides.
      if (!rebuild && old && old.size === f.size && old.mtime_ms === f.mtimeMs) {
        keep.add(f.path);
        continue;
      }
      if (oldSkip && oldSkip.hash && oldSkip.size === f.size && oldSkip.mtime_ms === f.mtimeMs) {
        skipped.push(oldSkip);
        continue;
      }
      let data: Buffer;
      try {
        data = fs.readFileSync(f.abs);
      } catch (err) {
        skipped.push({ path: f.path, hash: null, size: f.size, mtime_ms: f.mtimeMs, reason: "unreadable", detail: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
        continue;
      }
      const hash = createHash("sha256").update(data).digest("hex");
      if (!rebuild && old && old.hash === hash) {
        keep.add(f.path);
        touched.push(f); // content unchanged, only the stat moved
        continue;
      }
      if (oldSkip && oldSkip.hash === hash) {
        skipped.push({ ...oldSkip, size: f.size, mtime_ms: f.mtimeMs });
        continue;
      }
      try {
        const ex = await extractDocument(f.kind, data);
        pages += ex.pages;
        const units = cfg.build.excludeSecrets ? ex.units.map((u) => redactUnit(u, f.path)) : ex.units;
        fresh.push({ file: f, hash, pages: ex.pages, chunks: chunkUnits(f.path, units) });
      } catch (err) {
        // Anything the parsers throw means a file they cannot read: never fatal to the update.
        const skip = err instanceof DocSkip ? err : new DocSkip("corrupt", (err as Error)?.message ?? String(err));
        skipped.push({ path: f.path, hash, size: f.size, mtime_ms: f.mtimeMs, reason: skip.reason, detail: skip.detail ?? null });
      }
    }

    const vectors: Float32Array[] = [];
    const allChunks = fresh.flatMap((d) => d.chunks);
    for (let i = 0; i < allChunks.length; i += EMBED_BATCH) {
      vectors.push(...(await this.embedder.embed(allChunks.slice(i, i + EMBED_BATCH).map(embedText))));
    }

    const db = this.db;
    const removedPaths = [...known.keys()].filter((p) => !keep.has(p) && !fresh.some((d) => d.file.path === p));
    const replacedPaths = fresh.map((d) => d.file.path).filter((p) => known.has(p));
    const chunkRowids = db.prepare("SELECT rowid FROM chunks WHERE doc = ?");
    const delChunk = db.prepare("DELETE FROM chunks WHERE rowid = ?");
    const delFts = db.prepare("DELETE FROM fts_chunks WHERE rowid = ?");
    const delVec = db.prepare("DELETE FROM vec_chunks WHERE rowid = ?");
    const delDoc = db.prepare("DELETE FROM documents WHERE path = ?");
    const insDoc = db.prepare(
      "INSERT INTO documents(path, hash, size, mtime_ms, kind, pages, chunks, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) " +
        "ON CONFLICT(path) DO UPDATE SET hash=excluded.hash, size=excluded.size, mtime_ms=excluded.mtime_ms, kind=excluded.kind, pages=excluded.pages, chunks=excluded.chunks, indexed_at=excluded.indexed_at",
    );
    const insChunk = db.prepare("INSERT INTO chunks(doc, ord, page, heading, text, tokens) VALUES (?, ?, ?, ?, ?, ?)");
    const insFts = db.prepare("INSERT INTO fts_chunks(rowid, text, heading, doc) VALUES (?, ?, ?, ?)");
    const insSkip = db.prepare("INSERT INTO skipped(path, hash, size, mtime_ms, reason, detail) VALUES (?, ?, ?, ?, ?, ?)");
    const now = new Date().toISOString();

    db.transaction(() => {
      if (rebuild) {
        db.exec("DELETE FROM chunks; DELETE FROM documents; DELETE FROM fts_chunks; DROP TABLE IF EXISTS vec_chunks;");
        db.exec(`CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[${this.embedder.dim}] distance_metric=cosine)`);
      } else {
        for (const p of [...removedPaths, ...replacedPaths]) {
          for (const { rowid } of chunkRowids.all(p) as { rowid: number }[]) {
            delChunk.run(rowid);
            delFts.run(rowid);
            delVec.run(BigInt(rowid));
          }
          delDoc.run(p);
        }
      }
      const setStat = db.prepare("UPDATE documents SET size = ?, mtime_ms = ? WHERE path = ?");
      for (const f of touched) setStat.run(f.size, f.mtimeMs, f.path);
      // Prepared here: a rebuild has just recreated the vector table.
      const insVec = db.prepare("INSERT INTO vec_chunks(rowid, embedding) VALUES (?, ?)");
      let v = 0;
      for (const d of fresh) {
        insDoc.run(d.file.path, d.hash, d.file.size, d.file.mtimeMs, d.file.kind, d.pages, d.chunks.length, now);
        d.chunks.forEach((c, ord) => {
          const { lastInsertRowid: rowid } = insChunk.run(d.file.path, ord, c.page ?? null, c.heading ?? null, c.text, c.tokens);
          insFts.run(rowid, ftsText(c.text), ftsText(c.heading ?? ""), ftsText(docName(c.doc)));
          const vec = vectors[v++];
          insVec.run(BigInt(rowid), Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength));
        });
      }
      db.exec("DELETE FROM skipped");
      for (const s of skipped) insSkip.run(s.path, s.hash, s.size, s.mtime_ms, s.reason, s.detail ?? null);
      this.setMeta({ schema_version: SCHEMA_VERSION, embedder: this.embedder.id, dim: String(this.embedder.dim), updated_at: now });
    })();

    const totals = db.prepare("SELECT count(*) AS documents, coalesce(sum(chunks), 0) AS chunks FROM documents").get() as { documents: number; chunks: number };
    const result: DocsUpdateResult = {
      documents: totals.documents,
      chunks: totals.chunks,
      changed: fresh.length,
      removed: rebuild ? 0 : removedPaths.length,
      skipped: skipped.map(skippedDoc),
      pages,
      seconds: Math.round(performance.now() - t0) / 1000,
    };
    log.debug("docs update finished", { ...result, skipped: skipped.length });
    return result;
  }

  /**
   * Best passages for a question: BM25 and vector rankings fused by reciprocal rank (k = 60).
   * With a budget, the passages' tokens never sum above it (the last one may be cut at a sentence).
   */
  async search(question: string, limit = 5, budget?: number): Promise<DocsSearchResult> {
    if (typeof question !== "string" || !question.trim()) throw new CodememError("INVALID_ARGUMENT", "question is empty; ask about the documents in words.");
    if (!Number.isInteger(limit) || limit < 1 || limit > 20) throw new CodememError("INVALID_ARGUMENT", `limit ${limit} is out of range; pass an integer from 1 to 20.`, { value: limit });
    if (budget !== undefined && (!Number.isInteger(budget) || budget < 1)) {
      throw new CodememError("INVALID_ARGUMENT", `budget ${budget} is not a positive integer; pass a token count such as 800.`, { value: budget });
    }
    if (!this.indexed()) throw new CodememError("INDEX_MISSING", `The documents index ${this.file} has not been built; update it (DocsIndex.update) before searching.`, { file: this.file });
    const built = this.meta("embedder");
    if (built !== this.embedder.id) {
      throw new CodememError("INDEX_EMBEDDER_MISMATCH", `The documents index was built with ${built}, not ${this.embedder.id}; update it to re-embed the documents with the current embedder.`, { built, current: this.embedder.id });
    }

    const scores = new Map<number, number>();
    const add = (rowid: number, s: number) => scores.set(rowid, (scores.get(rowid) ?? 0) + s);
    const expr = matchExpr(question);
    if (expr) {
      const rows = this.db
        .prepare(`SELECT rowid FROM fts_chunks WHERE fts_chunks MATCH ? ORDER BY bm25(fts_chunks, ${BM25_WEIGHTS.join(", ")}) LIMIT ${CANDIDATES}`)
        .all(expr) as { rowid: number }[];
      rows.forEach((r, rank) => add(Number(r.rowid), LEXICAL_WEIGHT / (RRF_K + rank)));
    }
    const [qv] = await this.embedder.embed([question]);
    if (qv.some((x) => x !== 0)) {
      const rows = this.db
        .prepare("SELECT rowid, distance FROM vec_chunks WHERE embedding MATCH ? AND k = ? ORDER BY distance")
        .all(Buffer.from(qv.buffer, qv.byteOffset, qv.byteLength), CANDIDATES) as { rowid: number; distance: number }[];
      rows.forEach((r, rank) => add(Number(r.rowid), VECTOR_WEIGHT / (RRF_K + rank)));
    }

    const ranked = [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const get = this.db.prepare("SELECT doc, page, heading, text, tokens FROM chunks WHERE rowid = ?");
    const passages: DocPassage[] = [];
    let total = 0;
    for (const [rowid, score] of ranked) {
      if (passages.length >= limit) break;
      const c = get.get(rowid) as { doc: string; page: number | null; heading: string | null; text: string; tokens: number } | undefined;
      if (!c) continue;
      let text = c.text;
      let tokens = c.tokens;
      if (budget !== undefined && total + tokens > budget) {
        const room = budget - total;
        if (room < MIN_CUT_TOKENS) continue; // a smaller passage further down may still fit
        const cut = cutToTokens(text, room);
        if (!cut) continue;
        text = cut.text;
        tokens = cut.tokens;
      }
      passages.push({
        document: c.doc,
        ...(c.page !== null ? { page: c.page } : {}),
        ...(c.heading !== null ? { heading: c.heading } : {}),
        text,
        tokens,
        score: Math.round(score * 1e6) / 1e6,
      });
      total += tokens;
    }
    return { passages, tokens: total };
  }
}

function skippedDoc(r: { path: string; reason: SkipReason; detail?: string | null }): SkippedDoc {
  return r.detail ? { path: r.path, reason: r.reason, detail: r.detail } : { path: r.path, reason: r.reason };
}

function openDb(file: string, dim: number): Database.Database {
  const db = new Database(file);
  try {
    sqliteVec.load(db);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 5000");
    const version = (db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").get() as unknown)
      ? (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined)?.value
      : undefined;
    if (version !== undefined && version !== SCHEMA_VERSION) {
      // Derived data only: an index from another codemem version is dropped and rebuilt on update.
      db.exec("DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS documents; DROP TABLE IF EXISTS skipped; DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS fts_chunks; DROP TABLE IF EXISTS vec_chunks;");
    }
    db.exec(SCHEMA(dim));
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Lists the project's documents, honouring .gitignore, `[build] exclude_patterns` and the always-excluded directories. */
export function listDocuments(cfg: ResolvedConfig): DocFile[] {
  const root = cfg.root;
  const filter = makePathFilter(cfg);
  const out: DocFile[] = [];
  const walk = (dirAbs: string, dirRel: string, ignores: { base: string; ig: Ignore }[]) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dirAbs, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const rel = dirRel ? `${dirRel}/${e.name}` : e.name;
      const abs = path.join(dirAbs, e.name);
      if (e.isDirectory()) {
        if (filter.dirExcluded(rel, dirAbs) || isIgnored(ignores, rel, true)) continue;
        const own = loadGitignore(abs, rel);
        walk(abs, rel, own ? [...ignores, own] : ignores);
        continue;
      }
      const kind = docKindForPath(e.name);
      if (!kind || !(e.isFile() || e.isSymbolicLink())) continue;
      if (filter.fileExcluded(rel) || isIgnored(ignores, rel, false)) continue;
      try {
        // File links are followed only when they stay inside the project; directory links never (loops).
        if (e.isSymbolicLink() && leadsOutside(path.relative(root, fs.realpathSync(abs)))) continue;
        const st = fs.statSync(abs);
        if (st.isFile()) out.push({ path: rel, abs, size: st.size, mtimeMs: st.mtimeMs, kind });
      } catch {
        // vanished or dangling: not a document
      }
    }
  };
  const rootIgnore = loadGitignore(root, "");
  walk(root, "", rootIgnore ? [rootIgnore] : []);
  return out;
}

function loadGitignore(dirAbs: string, dirRel: string): { base: string; ig: Ignore } | undefined {
  try {
    return { base: dirRel, ig: ignore().add(fs.readFileSync(path.join(dirAbs, ".gitignore"), "utf8")) };
  } catch {
    return undefined;
  }
}

function isIgnored(stack: { base: string; ig: Ignore }[], rel: string, isDir: boolean): boolean {
  for (const { base, ig } of stack) {
    const sub = base ? rel.slice(base.length + 1) : rel;
    if (ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

function docName(rel: string): string {
  return rel.slice(rel.lastIndexOf("/") + 1).replace(/\.[^.]+$/, "").replace(/[-_.]+/g, " ");
}

/** A unit with secrets redacted from its text and its heading (a heading can hold one: "## Staging key: …"). */
function redactUnit<U extends { text: string; heading?: string }>(u: U, file: string): U {
  return { ...u, text: redactSecrets(u.text, file).text, ...(u.heading !== undefined ? { heading: redactSecrets(u.heading, file).text } : {}) };
}

function embedText(c: DocChunk): string {
  return [docName(c.doc), c.heading ?? "", c.text].filter(Boolean).join("\n");
}

// Han, kana and Hangul have no spaces between words: each character is indexed as a token and
// queried as overlapping bigram phrases.
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_G = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;

function ftsText(s: string): string {
  return CJK.test(s) ? s.replace(CJK_G, " $& ") : s;
}

/** FTS5 query: content words OR'd as quoted terms; CJK runs as bigram phrases. */
export function matchExpr(question: string): string | undefined {
  const terms = new Set<string>();
  for (const m of question.normalize("NFC").matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const word = m[0];
    if (!CJK.test(word)) {
      const w = word.toLowerCase();
      if (!isStopword(w) && (w.length > 1 || /\p{N}/u.test(w))) terms.add(w);
      continue;
    }
    // Split mixed runs ("東京office") into CJK and non-CJK parts.
    for (const part of word.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu) ?? []) {
      if (!CJK.test(part)) {
        const w = part.toLowerCase();
        if (!isStopword(w) && w.length > 1) terms.add(w);
        continue;
      }
      const chars = [...part];
      if (chars.length === 1) terms.add(chars[0]);
      for (let i = 0; i + 1 < chars.length; i++) terms.add(`${chars[i]} ${chars[i + 1]}`);
    }
  }
  if (terms.size === 0) return undefined;
  return [...terms].slice(0, 32).map((t) => `"${t.replace(/"/g, "")}"`).join(" OR ");
}

/** The longest prefix of whole sentences (or words) within `max` tokens. */
function cutToTokens(text: string, max: number): { text: string; tokens: number } | undefined {
  let out = "";
  for (const s of sentences(text)) {
    const next = out ? `${out} ${s}` : s;
    if (countTokens(next) > max) break;
    out = next;
  }
  if (!out) {
    for (const w of text.split(/\s+/)) {
      const next = out ? `${out} ${w}` : w;
      if (countTokens(`${next} …`) > max) break;
      out = next;
    }
    if (out) out += " …";
  }
  if (!out) return undefined;
  return { text: out, tokens: countTokens(out) };
}
