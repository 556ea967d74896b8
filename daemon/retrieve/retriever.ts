import type Database from "better-sqlite3";
import type { Embedder } from "../index/embed/embedder.js";
import { contentWords, splitWords } from "../index/text.js";
import type { GraphCommunity, GraphEdge } from "../index/types.js";
import { LocalStore } from "../store/local.js";

/** A node as kept in memory for ranking; code is fetched on demand. */
export interface MemNode {
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

export interface Hit {
  node: MemNode;
  score: number;
  via: string[];
}

const RRF_K = 10;
const LEXICAL_WEIGHT = 1.0;
const VECTOR_WEIGHT = 0.9;
const CANDIDATES = 120;
/** Share of the best hit's score a fully activated synaptic neighbour receives. */
const RECALL_WEIGHT = 0.15;
/** Weight of the whole-file BM25 rank, shared by every node of the file (hierarchical evidence). */
const FILE_WEIGHT = 2.5;
const FILE_CANDIDATES = 30;
/** BM25 column weights: name, qualified name, signature, docstring, path, body identifiers. */
const BM25_WEIGHTS = [8, 4, 2, 2.5, 3, 1];

/** The warm, read-only view of one index used to answer questions. */
export class Retriever {
  nodes: MemNode[];
  readonly byId = new Map<string, MemNode>();
  private readonly byRowid = new Map<number, MemNode>();
  neighbors = new Map<string, { id: string; type: string }[]>();
  communities: GraphCommunity[];
  meta: Record<string, string>;
  private vectors: Float32Array;
  private rowIndex: Map<number, number>;
  readonly dim: number;
  private readonly ftsStmt: Database.Statement;
  private readonly ftsFileStmt: Database.Statement;
  private readonly codeStmt: Database.Statement;
  fileTokens: Map<string, number>;

  constructor(readonly store: LocalStore) {
    const db = store.db;
    this.meta = store.allMeta();
    this.nodes = db
      .prepare("SELECT rowid, id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community FROM nodes ORDER BY rowid")
      .all() as MemNode[];
    for (const n of this.nodes) {
      this.byId.set(n.id, n);
      this.byRowid.set(n.rowid, n);
    }
    this.neighbors = adjacency(store.edges());
    this.communities = store.communities();
    this.dim = Number(this.meta.dim);
    this.vectors = new Float32Array(this.nodes.length * this.dim);
    this.rowIndex = new Map();
    let i = 0;
    for (const r of db.prepare("SELECT rowid, embedding FROM vec_nodes").iterate() as Iterable<{ rowid: number; embedding: Buffer }>) {
      const v = new Float32Array(r.embedding.buffer, r.embedding.byteOffset, this.dim);
      this.vectors.set(v, i * this.dim);
      this.rowIndex.set(i, Number(r.rowid));
      i++;
    }
    this.vectorCount = i;
    this.ftsStmt = db.prepare(
      `SELECT rowid, bm25(fts_nodes, ${BM25_WEIGHTS.join(", ")}) AS score FROM fts_nodes WHERE fts_nodes MATCH ? ORDER BY score LIMIT ${CANDIDATES}`,
    );
    this.ftsFileStmt = db.prepare(`SELECT rowid FROM fts_files WHERE fts_files MATCH ? ORDER BY bm25(fts_files, 2, 1) LIMIT ${FILE_CANDIDATES}`);
    this.codeStmt = db.prepare("SELECT code FROM nodes WHERE rowid = ?");
    this.fileTokens = new Map(store.files().map((f) => [f.path, f.tokens]));
  }
  private vectorCount: number;

  /**
   * Applies a small build without a full reload: the nodes and vectors of `files` are re-read, the
   * adjacency is rebuilt from the build's edges, and everything else is kept.
   */
  refresh(files: string[], edges: GraphEdge[], communityOf: Map<string, number>): void {
    const db = this.store.db;
    const changed = new Set(files);
    const keep = this.nodes.filter((n) => !changed.has(n.file_path));
    const nodeStmt = db.prepare("SELECT rowid, id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community FROM nodes WHERE file_path = ?");
    const vecStmt = db.prepare("SELECT embedding FROM vec_nodes WHERE rowid = ?");
    const added: { node: MemNode; vec?: Float32Array }[] = [];
    for (const f of changed) {
      for (const n of nodeStmt.all(f) as MemNode[]) {
        const r = vecStmt.get(BigInt(n.rowid)) as { embedding: Buffer } | undefined;
        added.push({ node: n, vec: r ? new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)) : undefined });
      }
    }
    // Rebuild the dense matrix from kept rows (a copy per row) plus the new ones.
    const dim = this.dim;
    const rowOfRowid = new Map<number, number>();
    for (const [i, rowid] of this.rowIndex) rowOfRowid.set(rowid, i);
    const next = new Float32Array((keep.length + added.length) * dim);
    const rowIndex = new Map<number, number>();
    let i = 0;
    for (const n of keep) {
      const old = rowOfRowid.get(n.rowid);
      if (old === undefined) continue;
      next.set(this.vectors.subarray(old * dim, old * dim + dim), i * dim);
      rowIndex.set(i++, n.rowid);
    }
    for (const a of added) {
      if (!a.vec) continue;
      next.set(a.vec, i * dim);
      rowIndex.set(i++, a.node.rowid);
    }
    this.vectors = next;
    this.rowIndex = rowIndex;
    this.vectorCount = i;
    this.nodes = [...keep, ...added.map((a) => a.node)];
    this.byId.clear();
    this.byRowid.clear();
    for (const n of this.nodes) {
      n.community = communityOf.get(n.id) ?? n.community;
      this.byId.set(n.id, n);
      this.byRowid.set(n.rowid, n);
    }
    this.neighbors = adjacency(edges);
    this.meta = this.store.allMeta();
    this.communities = this.store.communities();
    this.fileTokens = new Map(this.store.files().map((f) => [f.path, f.tokens]));
  }

  code(n: MemNode): string {
    return (this.codeStmt.get(n.rowid) as { code: string } | undefined)?.code ?? "";
  }

  private matchExpr(query: string): string | undefined {
    const words = [...new Set(contentWords(query))].slice(0, 24);
    if (words.length === 0) return undefined;
    return words.map((w) => `"${w.replace(/"/g, "")}"`).join(" OR ");
  }

  /** Files ranked by whole-file BM25; returns file path → rank. */
  fileRanks(query: string): Map<string, number> {
    const expr = this.matchExpr(query);
    const out = new Map<string, number>();
    if (!expr) return out;
    for (const r of this.ftsFileStmt.all(expr) as { rowid: number }[]) {
      const n = this.byRowid.get(Number(r.rowid));
      if (n && !out.has(n.file_path)) out.set(n.file_path, out.size);
    }
    return out;
  }

  lexical(query: string): { node: MemNode; rank: number }[] {
    const expr = this.matchExpr(query);
    if (!expr) return [];
    const rows = this.ftsStmt.all(expr) as { rowid: number; score: number }[];
    const out: { node: MemNode; rank: number }[] = [];
    for (const r of rows) {
      const n = this.byRowid.get(Number(r.rowid));
      if (n) out.push({ node: n, rank: out.length });
    }
    return out;
  }

  vector(q: Float32Array): { node: MemNode; rank: number; sim: number }[] {
    const dim = this.dim;
    const n = this.vectorCount;
    const sims = new Float32Array(n);
    const V = this.vectors;
    for (let i = 0; i < n; i++) {
      let s = 0;
      const off = i * dim;
      for (let d = 0; d < dim; d++) s += V[off + d] * q[d];
      sims[i] = s;
    }
    // Partial selection of the best CANDIDATES.
    const idx: number[] = [];
    let floor = -Infinity;
    for (let i = 0; i < n; i++) {
      if (idx.length < CANDIDATES) {
        idx.push(i);
        if (idx.length === CANDIDATES) {
          idx.sort((a, b) => sims[b] - sims[a]);
          floor = sims[idx[idx.length - 1]];
        }
      } else if (sims[i] > floor) {
        let j = idx.length - 1;
        while (j > 0 && sims[idx[j - 1]] < sims[i]) j--;
        idx.splice(j, 0, i);
        idx.pop();
        floor = sims[idx[idx.length - 1]];
      }
    }
    if (idx.length < CANDIDATES) idx.sort((a, b) => sims[b] - sims[a]);
    return idx.map((i, rank) => ({ node: this.byRowid.get(this.rowIndex.get(i)!)!, rank, sim: sims[i] })).filter((x) => x.node);
  }

  /** Hybrid ranking: BM25 and vector lists fused by reciprocal rank, then boosted around strong seeds. */
  async search(query: string, embedder: Embedder, limit: number, recall?: (seeds: string[]) => Map<string, number>): Promise<Hit[]> {
    const [qv] = await embedder.embed([query]);
    const lex = this.lexical(query);
    const vec = this.vector(qv);
    const scores = new Map<string, Hit>();
    const add = (node: MemNode, s: number, via: string) => {
      const h = scores.get(node.id);
      if (h) {
        h.score += s;
        if (!h.via.includes(via)) h.via.push(via);
      } else scores.set(node.id, { node, score: s, via: [via] });
    };
    for (const { node, rank } of lex) add(node, LEXICAL_WEIGHT / (RRF_K + rank), "lexical");
    for (const { node, rank } of vec) add(node, VECTOR_WEIGHT / (RRF_K + rank), "vector");
    // File-level evidence: the file's whole-text BM25 rank lifts every candidate in it, and the file itself.
    const files = this.fileRanks(query);
    for (const h of scores.values()) {
      const fr = files.get(h.node.file_path);
      if (fr !== undefined) h.score += FILE_WEIGHT / (RRF_K + fr);
    }
    for (const [file, fr] of files) {
      const mod = this.byId.get(file);
      if (mod && !scores.has(mod.id)) add(mod, FILE_WEIGHT / (RRF_K + fr), "file");
    }

    // An identifier the question names verbatim (wait_for, ThreadPoolExecutor) is the strongest signal it
    // gives; plain words that happen to be names (time, rule) are not, so only compound names count.
    const rawTokens = new Set(query.split(/[^A-Za-z0-9_.]+/).filter(Boolean).map((t) => t.toLowerCase()));
    for (const h of scores.values()) {
      if (splitWords(h.node.name).length < 2) continue;
      if (rawTokens.has(h.node.name.toLowerCase()) || rawTokens.has(h.node.qualified_name.toLowerCase())) h.score *= 1.6;
    }

    // Graph-aware re-ranking: neighbours of strong seeds (1 hop) gain a share of the seed's score.
    let ranked = [...scores.values()].sort((a, b) => b.score - a.score);
    // Synapse recall: code used together with the best hits joins with a share of the top score;
    // the answer's budget is unchanged, so recalled nodes displace the weakest hits.
    if (recall && ranked.length > 0) {
      const top = ranked[0].score;
      const recalled = recall(ranked.slice(0, 5).map((h) => h.node.id));
      // Activations are relative (weight × damping / √degree): scale so the strongest recall gets RECALL_WEIGHT.
      const peak = Math.max(0, ...recalled.values());
      for (const [id, activation] of recalled) {
        const n = this.byId.get(id);
        if (!n || peak <= 0) continue;
        // Candidates the question already found are re-ranked toward code used with the best hits;
        // nodes it did not find enter at half weight, so they displace only the weakest hits.
        const share = scores.has(id) ? RECALL_WEIGHT : RECALL_WEIGHT / 2;
        add(n, top * share * (activation / peak), "synapse");
      }
      ranked = [...scores.values()].sort((a, b) => b.score - a.score);
    }
    const seeds = ranked.slice(0, 8);
    const bonus = new Map<string, number>();
    for (const s of seeds) {
      for (const nb of this.neighbors.get(s.node.id) ?? []) {
        // Not hub-damped: measured on the retrieval benchmark, damping pushed gold definitions down (MRR 0.825 → 0.799).
        const w = nb.type === "contains" ? 0.06 : 0.1;
        // The strongest seed counts, not their sum: in dense areas sums let neighbours outrank direct matches.
        bonus.set(nb.id, Math.max(bonus.get(nb.id) ?? 0, s.score * w));
      }
    }
    for (const [id, b] of bonus) {
      const h = scores.get(id);
      if (h) {
        h.score += b;
        if (!h.via.includes("graph")) h.via.push("graph");
      }
    }
    return [...scores.values()].sort((a, b) => b.score - a.score || (a.node.id < b.node.id ? -1 : 1)).slice(0, limit);
  }
}

/** Undirected adjacency for graph re-ranking; file-to-file imports are too broad for expansion. */
function adjacency(edges: GraphEdge[]): Map<string, { id: string; type: string }[]> {
  const m = new Map<string, { id: string; type: string }[]>();
  for (const e of edges) {
    if (e.type === "imports") continue;
    push(m, e.source, { id: e.target, type: e.type });
    push(m, e.target, { id: e.source, type: e.type });
  }
  return m;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
