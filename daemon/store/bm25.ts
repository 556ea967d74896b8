import type Database from "better-sqlite3";
import type { LexicalHit } from "./types.js";

/** The local index's full-text tables, and the column weights of their bm25(). */
export type FtsTable = "fts_nodes" | "fts_files";

/**
 * The best rows by BM25 over any of the words. FTS5 scores every matching row, so a common word
 * ("string" is in a quarter of Go's nodes) makes a question cost tens of ms. With rare words beside
 * it, the rows holding only common words are left out, and the others keep their exact score:
 * BM25 sums over the query's phrases, so a row with a rare and a common word scores in
 * `(common) AND (rare)` what it scores in the whole OR, and a row with rare words only scores in
 * `rare` what it scores there. Each top list is complete for its rows, so their merge is exact.
 * `stmt` prepares (and may cache) a statement on the caller's connection.
 */
export function bm25(stmt: (sql: string) => Database.Statement, table: FtsTable, weights: string, words: string[], limit: number, common?: ReadonlySet<string>): LexicalHit[] {
  if (words.length === 0) return [];
  // FTS5's bm25() is negative, better when lower: answered negated, so higher is better.
  const sql = `SELECT rowid, -bm25(${table}, ${weights}) AS score FROM ${table} WHERE ${table} MATCH ? ORDER BY score DESC LIMIT ?`;
  const match = (expr: string) => (stmt(sql).all(expr, limit) as LexicalHit[]).map((r) => ({ rowid: Number(r.rowid), score: r.score }));
  const rare = words.filter((w) => !common?.has(w));
  const often = words.filter((w) => common?.has(w));
  if (rare.length === 0 || often.length === 0) return match(matchExpr(words));
  const best = new Map<number, number>();
  for (const h of match(matchExpr(rare))) best.set(h.rowid, h.score);
  for (const h of match(`(${matchExpr(often)}) AND (${matchExpr(rare)})`)) best.set(h.rowid, h.score);
  return [...best].map(([rowid, score]) => ({ rowid, score })).sort((a, b) => b.score - a.score || a.rowid - b.rowid).slice(0, limit);
}

/** The weights of `fts_files`' columns (path, body) in its bm25(). */
export const FILE_WEIGHTS = "2, 1";

/** FTS5 query matching any of the words; each is quoted, so user text cannot form operators. */
function matchExpr(words: string[]): string {
  return words.map((w) => `"${w.replace(/"/g, "")}"`).join(" OR ");
}
