/**
 * The synapse store, `.codemem/synapses.db`: Hebbian associations between graph node ids, learned
 * from use (DESIGN.md §5, docs/synapses.md).
 *
 * Parameters (the reference values of the original, kept; see docs/synapses.md for why):
 * - learning rate 0.15: w ← min(1, w + 0.15·(1 − w)); a new edge starts at 0.15 and after n
 *   co-activations w = 1 − 0.85ⁿ (5 → 0.56, 10 → 0.80, 20 → 0.96).
 * - LTP at the 5th co-activation: the edge becomes long-term and decays more slowly.
 * - tick = 1 hour of wall-clock time; decay ×0.98 per tick (half-life ~34 h, a fresh 0.15 edge is
 *   pruned after ~5.6 idle days), ×0.995 for LTP edges (half-life ~139 h ≈ 5.8 days; a 1.0 LTP
 *   edge survives ~38 idle days).
 * - prune below 0.01.
 * - at most 12 distinct nodes per event (first ones win) ⇒ at most 66 pairs: bounds the write path.
 * - recall: seeds at 1.0, each hop × weight × 0.6 / √degree(source), depth ≤ 2; only the 32 most
 *   activated depth-1 nodes are expanded to depth 2 (keeps hub seeds within the latency target).
 *
 * Every edge is stored once with a < b (JS string order); the primary key (a, b) serves lookups by
 * a and the index on b lookups by b, so neighbor lookups are two index seeks.
 * Several processes may open the file: WAL, busy_timeout 5000, and every write is one IMMEDIATE
 * transaction whose updates are read-modify-write inside SQL, so no update is ever lost.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

export interface SynapseParams {
  /** w ← w + lr·(1 − w), capped at 1. */
  learningRate: number;
  /** Co-activation count at which an edge becomes long-term (LTP). */
  ltpThreshold: number;
  /** Weight factor per tick for ordinary edges. */
  decay: number;
  /** Weight factor per tick for LTP edges. */
  ltpDecay: number;
  /** Edges whose weight falls below this are deleted. */
  pruneBelow: number;
  /** Length of one decay tick in milliseconds of wall-clock time. */
  tickMs: number;
  /** Distinct nodes kept per reinforcement event (pairs = n·(n−1)/2). */
  maxNodesPerEvent: number;
  /** Activation multiplier per hop. */
  hopDamping: number;
  /** Depth-1 nodes expanded to depth 2, most activated first. */
  frontier: number;
}

export const SYNAPSE_PARAMS: Readonly<SynapseParams> = Object.freeze({
  learningRate: 0.15,
  ltpThreshold: 5,
  decay: 0.98,
  ltpDecay: 0.995,
  pruneBelow: 0.01,
  tickMs: 60 * 60 * 1000,
  maxNodesPerEvent: 12,
  hopDamping: 0.6,
  frontier: 32,
});

export interface SynapseNeighbor {
  id: string;
  activation: number;
  /** Shortest hop count from a seed at which the node was reached. */
  depth: number;
  /** The node whose contribution to this activation was the largest (a seed for depth 1). */
  via: string;
}

export interface SynapseStats {
  edges: number;
  ltp_edges: number;
  total_weight: number;
  nodes: number;
  top_hubs: { id: string; degree: number; strength: number }[];
  /** ISO time of the last decay that applied at least one tick, or null. */
  last_decay_at: string | null;
}

export interface SynapseEdge {
  a: string;
  b: string;
  weight: number;
  count: number;
  ltp: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS synapses (
  a       TEXT    NOT NULL,
  b       TEXT    NOT NULL,
  weight  REAL    NOT NULL,
  count   INTEGER NOT NULL,
  ltp     INTEGER NOT NULL DEFAULT 0,
  last_at INTEGER NOT NULL,           -- ms epoch of the last co-activation
  source  TEXT,                       -- who reinforced it last (tool, watch, hook, …)
  PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS synapses_by_b ON synapses(b);
CREATE TABLE IF NOT EXISTS synapse_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

// The whole update is inside SQL: concurrent writers serialize on the write lock and each sees the
// other's committed weight, so nothing is lost. Unqualified columns in DO UPDATE are the old row.
const SQL_REINFORCE = `
INSERT INTO synapses (a, b, weight, count, ltp, last_at, source)
VALUES (@a, @b, min(1.0, @lr), 1, CASE WHEN 1 >= @ltpAt THEN 1 ELSE 0 END, @now, @source)
ON CONFLICT (a, b) DO UPDATE SET
  weight  = min(1.0, weight + @lr * (1.0 - weight)),
  count   = count + 1,
  ltp     = CASE WHEN count + 1 >= @ltpAt THEN 1 ELSE ltp END,
  last_at = max(last_at, excluded.last_at),
  source  = coalesce(excluded.source, source)`;

const SQL_DECAY = `UPDATE synapses SET weight = weight * CASE WHEN ltp = 1 THEN @ltpFactor ELSE @factor END`;
const SQL_PRUNE = `DELETE FROM synapses WHERE weight < @threshold`;
const SQL_EDGES_OF = `
SELECT b AS id, weight FROM synapses WHERE a = ?
UNION ALL
SELECT a AS id, weight FROM synapses WHERE b = ?`;
const SQL_HUBS = `
SELECT id, count(*) AS degree, sum(weight) AS strength FROM (
  SELECT a AS id, weight FROM synapses UNION ALL SELECT b AS id, weight FROM synapses
) GROUP BY id ORDER BY strength DESC, degree DESC, id LIMIT ?`;

// Meta keys: the decay clock (ms; wall-clock ticks are counted from it) and the time of the last
// applied decay (ms; reported by stats). They differ because a manual tick does not move the clock.
const META_CLOCK = "decay_clock";
const META_LAST_DECAY = "last_decay_at";

/** Canonical pair order, used everywhere an edge is written or read. */
function ordered(x: string, y: string): [string, string] {
  return x < y ? [x, y] : [y, x];
}

export class SynapseStore {
  readonly params: Readonly<SynapseParams>;
  private readonly stmts;

  private constructor(
    private readonly db: Database.Database,
    params: Readonly<SynapseParams>,
  ) {
    this.params = params;
    this.stmts = {
      reinforce: db.prepare(SQL_REINFORCE),
      decay: db.prepare(SQL_DECAY),
      prune: db.prepare(SQL_PRUNE),
      edgesOf: db.prepare<[string, string], { id: string; weight: number }>(SQL_EDGES_OF),
      getMeta: db.prepare<[string], { value: string }>(`SELECT value FROM synapse_meta WHERE key = ?`),
      setMeta: db.prepare(`INSERT INTO synapse_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
      initMeta: db.prepare(`INSERT INTO synapse_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`),
      counts: db.prepare<[], { edges: number; ltp_edges: number; total_weight: number | null }>(
        `SELECT count(*) AS edges, coalesce(sum(ltp), 0) AS ltp_edges, sum(weight) AS total_weight FROM synapses`,
      ),
      nodes: db.prepare<[], { nodes: number }>(
        `SELECT count(*) AS nodes FROM (SELECT a AS id FROM synapses UNION SELECT b FROM synapses)`,
      ),
      hubs: db.prepare<[number], { id: string; degree: number; strength: number }>(SQL_HUBS),
      strongest: db.prepare<[number], { a: string; b: string; weight: number; count: number; ltp: number }>(
        `SELECT a, b, weight, count, ltp FROM synapses ORDER BY weight DESC, count DESC, a, b LIMIT ?`,
      ),
    };
  }

  /** Opens (creating if needed) the store at `file`; `params` overrides defaults for this process. */
  static open(file: string, params: Partial<SynapseParams> = {}): SynapseStore {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const db = new Database(file);
    db.pragma("busy_timeout = 5000");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec(SCHEMA);
    return new SynapseStore(db, Object.freeze({ ...SYNAPSE_PARAMS, ...params }));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Hebbian co-activation of every pair among the first 12 distinct ids; one transaction. */
  reinforce(nodeIds: string[], opts: { source?: string; now?: number } = {}): { pairs: number } {
    const ids: string[] = [];
    const seen = new Set<string>();
    for (const id of nodeIds) {
      if (typeof id !== "string" || id === "" || seen.has(id)) continue;
      seen.add(id);
      ids.push(id);
      if (ids.length >= this.params.maxNodesPerEvent) break;
    }
    if (ids.length < 2) return { pairs: 0 };
    const now = opts.now ?? Date.now();
    const base = { lr: this.params.learningRate, ltpAt: this.params.ltpThreshold, now, source: opts.source ?? null };
    let pairs = 0;
    this.db
      .transaction(() => {
        // The decay clock starts with the first memory, not with the file.
        this.stmts.initMeta.run(META_CLOCK, String(now));
        for (let i = 0; i < ids.length; i++) {
          for (let j = i + 1; j < ids.length; j++) {
            const [a, b] = ordered(ids[i], ids[j]);
            this.stmts.reinforce.run({ ...base, a, b });
            pairs++;
          }
        }
      })
      .immediate();
    return { pairs };
  }

  /**
   * Decays every edge by factor^ticks and prunes weak ones. Wall-clock mode (no `ticks`): ticks =
   * floor((now − clock) / tickMs) and the clock advances by whole ticks only, so repeated calls with
   * the same `now` are no-ops and frequent calls never lose the remainder. Explicit `ticks` (a manual
   * tick) decays on top of wall-clock time and leaves the clock alone.
   */
  decay(opts: { now?: number; ticks?: number } = {}): { ticks: number; decayed: number; pruned: number } {
    const now = opts.now ?? Date.now();
    if (opts.ticks !== undefined && (!Number.isInteger(opts.ticks) || opts.ticks < 0)) {
      throw new RangeError(`decay ticks must be a non-negative integer; got ${opts.ticks}.`);
    }
    return this.db
      .transaction(() => {
        let ticks: number;
        if (opts.ticks !== undefined) {
          ticks = opts.ticks;
        } else {
          const clock = this.stmts.getMeta.get(META_CLOCK);
          if (!clock) {
            this.stmts.setMeta.run(META_CLOCK, String(now));
            return { ticks: 0, decayed: 0, pruned: 0 };
          }
          const since = Number(clock.value);
          ticks = Math.max(0, Math.floor((now - since) / this.params.tickMs));
          if (ticks > 0) this.stmts.setMeta.run(META_CLOCK, String(since + ticks * this.params.tickMs));
        }
        if (ticks === 0) return { ticks: 0, decayed: 0, pruned: 0 };
        const decayed = this.stmts.decay.run({
          factor: Math.pow(this.params.decay, ticks),
          ltpFactor: Math.pow(this.params.ltpDecay, ticks),
        }).changes;
        const pruned = this.stmts.prune.run({ threshold: this.params.pruneBelow }).changes;
        this.stmts.setMeta.run(META_LAST_DECAY, String(now));
        return { ticks, decayed, pruned };
      })
      .immediate();
  }

  /**
   * Spreading activation from `seeds` (each at 1.0): a hop from u to v adds
   * activation(u) · weight(u,v) · hop / √degree(u); contributions from all paths are summed, seeds
   * are never intermediates nor results. Returns the top `k` non-seed nodes.
   */
  neighbors(seeds: string[], opts: { depth?: 1 | 2; k?: number; hop?: number } = {}): SynapseNeighbor[] {
    const depth = opts.depth ?? 2;
    const k = opts.k ?? 10;
    const hop = opts.hop ?? this.params.hopDamping;
    const seedSet = new Set(seeds.filter((s) => typeof s === "string" && s !== ""));
    if (seedSet.size === 0 || k <= 0) return [];

    type Acc = { activation: number; depth: number; via: string; best: number };
    const acc = new Map<string, Acc>();
    const spread = (from: string, fromActivation: number, atDepth: number): void => {
      const edges = this.stmts.edgesOf.all(from, from);
      if (edges.length === 0) return;
      const scale = (fromActivation * hop) / Math.sqrt(edges.length);
      for (const e of edges) {
        if (seedSet.has(e.id)) continue;
        const add = scale * e.weight;
        const cur = acc.get(e.id);
        if (!cur) {
          acc.set(e.id, { activation: add, depth: atDepth, via: from, best: add });
        } else {
          cur.activation += add;
          if (atDepth < cur.depth) cur.depth = atDepth;
          if (add > cur.best) {
            cur.best = add;
            cur.via = from;
          }
        }
      }
    };

    for (const s of seedSet) spread(s, 1.0, 1);
    if (depth === 2) {
      // Expand the depth-1 layer as it stood after the first hop, strongest first.
      const layer = [...acc.entries()]
        .map(([id, a]) => ({ id, activation: a.activation }))
        .sort((x, y) => y.activation - x.activation || (x.id < y.id ? -1 : 1))
        .slice(0, this.params.frontier);
      for (const n of layer) spread(n.id, n.activation, 2);
    }
    return [...acc.entries()]
      .map(([id, a]) => ({ id, activation: a.activation, depth: a.depth, via: a.via }))
      .sort((x, y) => y.activation - x.activation || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
      .slice(0, k);
  }

  /** Totals, and the hubs ranked by strength (sum of incident weights). */
  stats(topHubs = 10): SynapseStats {
    const c = this.stmts.counts.get()!;
    const last = this.stmts.getMeta.get(META_LAST_DECAY);
    return {
      edges: c.edges,
      ltp_edges: c.ltp_edges,
      total_weight: c.total_weight ?? 0,
      nodes: this.stmts.nodes.get()!.nodes,
      top_hubs: topHubs > 0 ? this.stmts.hubs.all(topHubs) : [],
      last_decay_at: last ? new Date(Number(last.value)).toISOString() : null,
    };
  }

  /** The `limit` heaviest edges. */
  strongest(limit: number): SynapseEdge[] {
    return this.stmts.strongest.all(Math.max(0, Math.floor(limit))).map((r) => ({
      a: r.a,
      b: r.b,
      weight: r.weight,
      count: r.count,
      ltp: r.ltp === 1,
    }));
  }
}
