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
 * - recall: seeds at 1.0, each hop × weight × 0.6 / √degree(source), depth ≤ 2, the second hop
 *   / √max(degree(source), degree(target)) (a hub gathers nothing back from every partner it has);
 *   equal activations rank the node with fewer associations first. Bounded work: each
 *   node spreads along its 32 strongest edges only, and only the 16 most activated depth-1 nodes
 *   are expanded to depth 2 — at most 19 index range scans of 32 rows for 3 seeds, hubs included.
 *
 * Every edge is stored once with a < b (JS string order); indexes on (a, weight) and (b, weight)
 * make "strongest edges of x" two index seeks, whichever side x is on.
 * Several processes may open the file: WAL, busy_timeout 5000, and every write is one IMMEDIATE
 * transaction whose updates are read-modify-write inside SQL, so no update is ever lost.
 */
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { DEFAULTS } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";
import { prepareFile, SQLITE_SIDECARS } from "../../shared/own-files.js";

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
  /** Strongest edges followed out of each node during spreading activation. */
  fanout: number;
  /**
   * Factor by which a file's co-change evidence ages per commit of its own history (historyDecayOf
   * of `[synapses] history_half_life`): a partner it last changed with many of its commits ago fades,
   * one it changed with lately weighs fully, however busy the rest of the project was meanwhile.
   */
  historyDecay: number;
  /**
   * Factor by which all co-change evidence ages per commit of the project (`[synapses]
   * history_project_half_life`): a pair neither file has changed in since the code moved on fades.
   */
  historyProjectDecay: number;
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
  frontier: 16,
  fanout: 32,
  historyDecay: historyDecayOf(DEFAULTS.synapses.historyHalfLife),
  historyProjectDecay: historyDecayOf(DEFAULTS.synapses.historyProjectHalfLife),
});

/** How co-change evidence ages: factors per commit of a file (`file`) and of the project (`project`). */
export interface HistoryAgeing {
  file: number;
  project: number;
}

/** The ageing factor per commit for a half-life in commits. */
export function historyDecayOf(halfLife: number): number {
  return Math.pow(0.5, 1 / halfLife);
}

/** How an ageing is recorded with what it taught (exact: the factors as JSON numbers). */
function ageingKey(a: HistoryAgeing): string {
  return JSON.stringify([a.file, a.project, HISTORY_FORMAT]);
}

// 2: the files of the latest learned commits are kept (history_latest); a store learned before has
// none, and reads its history again once.
const HISTORY_FORMAT = 2;
// The latest learned commits kept, and the half-life (in learned commits) of a change's heat: at
// 100 commits, 0.5^10 ≈ 0.001, less than any tie it could break (docs/synapses.md).
const LATEST_KEPT = 100;
const LATEST_HALF_LIFE = 10;

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

/** A node table `nodes` (id, degree) kept in step with the pairs of `edges` by triggers. */
function degrees(edges: string, nodes: string): string {
  return `CREATE TABLE IF NOT EXISTS ${nodes} (id TEXT PRIMARY KEY, degree INTEGER NOT NULL) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS ${edges}_node_add AFTER INSERT ON ${edges} BEGIN
  INSERT INTO ${nodes} (id, degree) VALUES (NEW.a, 1) ON CONFLICT (id) DO UPDATE SET degree = degree + 1;
  INSERT INTO ${nodes} (id, degree) VALUES (NEW.b, 1) ON CONFLICT (id) DO UPDATE SET degree = degree + 1;
END;
CREATE TRIGGER IF NOT EXISTS ${edges}_node_remove AFTER DELETE ON ${edges} BEGIN
  UPDATE ${nodes} SET degree = degree - 1 WHERE id IN (OLD.a, OLD.b);
  DELETE FROM ${nodes} WHERE id IN (OLD.a, OLD.b) AND degree <= 0;
END;`;
}

// One row per edge (a < b). The weight-ordered indexes serve "strongest edges of node x" from both
// sides as two ordered index range scans merged with a LIMIT, so a hub costs no more than a leaf;
// synapse_nodes keeps each node's degree (for hub damping) in step through triggers, which fire
// only when an edge is created or pruned, never on a weight update.
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
CREATE INDEX IF NOT EXISTS synapses_a_weight ON synapses(a, weight);
CREATE INDEX IF NOT EXISTS synapses_b_weight ON synapses(b, weight);
${degrees("synapses", "synapse_nodes")}
CREATE TABLE IF NOT EXISTS synapse_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
-- Co-change learned from the repository's history, beside (not inside) the session synapses: it ages
-- with each file's own commits and with the project's, not with wall-clock time. Seen from a,
-- score_a = Σ over the commits that changed both files of share · g^(tick_a − base_a) · G^(clock − base),
-- share = 1 / (files in the commit − 1), g = 1 / historyDecay, tick_a a's learned commits up to that
-- one, G = 1 / historyProjectDecay, clock the project's commits read; its value today is
-- score_a · age_a · project age (cochange_clocks, synapse_meta): multiplies at read time, no UPDATE
-- of the pairs per commit.
CREATE TABLE IF NOT EXISTS cochange (
  a       TEXT    NOT NULL,
  b       TEXT    NOT NULL,
  score_a REAL    NOT NULL,           -- the evidence as a's history ages it
  score_b REAL    NOT NULL,           -- and as b's does
  commits INTEGER NOT NULL,           -- commits that changed both
  last_at INTEGER NOT NULL,           -- ms epoch of the latest such commit
  PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cochange_a_score ON cochange(a, score_a);
CREATE INDEX IF NOT EXISTS cochange_b_score ON cochange(b, score_b);
${degrees("cochange", "cochange_nodes")}
-- Each file's history clock: its learned commits (tick), the tick its scores are relative to, and
-- age = historyDecay^(tick − base), the factor that turns a stored score into today's value.
CREATE TABLE IF NOT EXISTS cochange_clocks (
  id    TEXT    PRIMARY KEY,
  tick  INTEGER NOT NULL,
  base  INTEGER NOT NULL,
  age   REAL    NOT NULL
) WITHOUT ROWID;
-- What was active when (the last activation of each node): the working set of the sessions under way,
-- read as the focus of recall. Rows a week old are dropped by decay.
CREATE TABLE IF NOT EXISTS activity (id TEXT PRIMARY KEY, at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS activity_at ON activity(at);
-- The files of the latest learned commits (LATEST_KEPT of them), seq counting learned commits: what
-- the project works on lately (recentlyChanged).
CREATE TABLE IF NOT EXISTS history_latest (
  seq     INTEGER NOT NULL,
  id      TEXT    NOT NULL,
  PRIMARY KEY (seq, id)
) WITHOUT ROWID;
-- Every commit read once (a second replay adds nothing); bulk commits are recorded, not learned.
CREATE TABLE IF NOT EXISTS history_commits (
  sha     TEXT    PRIMARY KEY,
  at      INTEGER NOT NULL,
  files   INTEGER NOT NULL,           -- project files the commit changed
  learned INTEGER NOT NULL            -- 0: skipped as bulk or with fewer than two indexed files
) WITHOUT ROWID;
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

const SQL_COCHANGE = `
INSERT INTO cochange (a, b, score_a, score_b, commits, last_at) VALUES (@a, @b, @incA, @incB, 1, @at)
ON CONFLICT (a, b) DO UPDATE SET score_a = score_a + @incA, score_b = score_b + @incB, commits = commits + 1, last_at = max(last_at, excluded.last_at)`;
// One more learned commit of a file: its tick advances and its scores age by one step.
const SQL_TICK = `
INSERT INTO cochange_clocks (id, tick, base, age) VALUES (@id, 1, 0, @decay)
ON CONFLICT (id) DO UPDATE SET tick = tick + 1, age = age * @decay
RETURNING tick, base`;

const SQL_DECAY = `UPDATE synapses SET weight = weight * CASE WHEN ltp = 1 THEN @ltpFactor ELSE @factor END`;
const SQL_PRUNE = `DELETE FROM synapses WHERE weight < @threshold`;
/**
 * The strongest pairs of node @id in `table` (stored once with a < b), with the columns `columns`
 * names seen from @id's side, ordered by `order` (ties by id, so a cut at the limit is the same
 * every time): two ordered index range scans merged under a LIMIT, whichever side @id is on.
 */
const pairsOf = (table: string, order: string, columns: (side: "a" | "b") => string) => `
SELECT * FROM (
  SELECT b AS id, ${columns("a")} FROM ${table} WHERE a = @id
  UNION ALL
  SELECT a AS id, ${columns("b")} FROM ${table} WHERE b = @id
) ORDER BY ${order} DESC, id LIMIT @limit`;
const SQL_HUBS = `
SELECT id, count(*) AS degree, sum(weight) AS strength FROM (
  SELECT a AS id, weight FROM synapses UNION ALL SELECT b AS id, weight FROM synapses
) GROUP BY id ORDER BY strength DESC, degree DESC, id LIMIT ?`;

// Meta keys: the decay clock (ms; wall-clock ticks are counted from it) and the time of the last
// applied decay (ms; reported by stats). They differ because a manual tick does not move the clock.
const META_CLOCK = "decay_clock";
const META_LAST_DECAY = "last_decay_at";
const ACTIVITY_KEPT_MS = 7 * 24 * 3600 * 1000;
// The newest commit history replay has read, and the ageing factor its scores were learned with.
const META_HISTORY_HEAD = "history_head";
const META_HISTORY_DECAY = "history_decay";
// The project's history clock: commits read (ticks), the tick scores are relative to, and the age
// factor historyProjectDecay^(clock − base) that reads them as of today.
const META_HISTORY_CLOCK = "history_clock";
const META_HISTORY_BASE = "history_base";
const META_HISTORY_AGE = "history_age";
// Scores grow as g^(tick − base); a file's are rescaled before they pass e^100.
const HISTORY_RESCALE_LOG = 100;

/**
 * Sources of the edges learned from answers' lists before answers stopped teaching (engine.ts,
 * REINFORCING): evidence the ranking made itself, which recall fed back into the next answer.
 */
const ANSWER_SOURCES = ["tool:query", "tool:search", "tool:recursive_query", "tool:synaptic_neighbors"];
const META_ANSWERS_UNLEARNED = "answers_unlearned";

/**
 * Once per store: drops the edges an answer's list reinforced last. An edge also used in code before
 * that goes with them (only the last source is recorded); use teaches it again.
 */
function unlearnAnswers(db: Database.Database): void {
  if (db.prepare(`SELECT 1 FROM synapse_meta WHERE key = ?`).get(META_ANSWERS_UNLEARNED)) return;
  db.transaction(() => {
    const { changes } = db.prepare(`DELETE FROM synapses WHERE source IN (${ANSWER_SOURCES.map(() => "?").join(", ")})`).run(...ANSWER_SOURCES);
    db.prepare(`INSERT INTO synapse_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`).run(META_ANSWERS_UNLEARNED, String(changes));
  }).immediate();
}

/**
 * A store written before co-change aged by each file's own commits (one score per pair, aged by the
 * project's commits) forgets its history once; the next build reads it again (replayHistory).
 */
function forgetOldHistory(db: Database.Database): void {
  const columns = db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('cochange')`).all();
  if (!columns.some((c) => c.name === "score")) return;
  db.transaction(() => {
    db.exec(`DROP TABLE cochange; DELETE FROM cochange_nodes; DELETE FROM history_commits;
      DELETE FROM synapse_meta WHERE key IN ('${META_HISTORY_CLOCK}', '${META_HISTORY_BASE}', '${META_HISTORY_HEAD}')`);
  }).immediate();
}

/** A commit as history replay hands it to the store: the node ids (files) it changed together. */
export interface LearnedCommit {
  sha: string;
  at: number;
  /** Project files the commit changed (bulk is judged on this count). */
  files: number;
  /** Indexed node ids among them, in any order; fewer than two teach nothing. */
  ids: string[];
}

/** What one neighbour's association rests on. */
export interface SynapseEvidence {
  /** Co-activations in sessions (tool calls, hooks, watch batches). */
  co_activations: number;
  /** Commits of the project's history that changed both. */
  commits: number;
  /** ISO time of the latest co-activation or shared commit. */
  last_at: string | null;
}

/** Canonical pair order, used everywhere an edge is written or read. */
function ordered(x: string, y: string): [string, string] {
  return x < y ? [x, y] : [y, x];
}

export class SynapseStore {
  readonly params: Readonly<SynapseParams>;
  private readonly stmts;
  private writesSinceCheckpoint = 0;
  private checkpointScheduled = false;

  private constructor(
    private readonly db: Database.Database,
    params: Readonly<SynapseParams>,
  ) {
    this.params = params;
    this.stmts = {
      reinforce: db.prepare(SQL_REINFORCE),
      decay: db.prepare(SQL_DECAY),
      prune: db.prepare(SQL_PRUNE),
      strongestOf: db.prepare<{ id: string; limit: number }, { id: string; weight: number }>(pairsOf("synapses", "weight", () => "weight")),
      degree: db.prepare<[string], { degree: number }>(`SELECT degree FROM synapse_nodes WHERE id = ?`),
      getMeta: db.prepare<[string], { value: string }>(`SELECT value FROM synapse_meta WHERE key = ?`),
      setMeta: db.prepare(`INSERT INTO synapse_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
      touch: db.prepare(`INSERT INTO activity (id, at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET at = max(at, excluded.at)`),
      recent: db.prepare<[number, number], { id: string; at: number }>(`SELECT id, at FROM activity WHERE at >= ? ORDER BY at DESC, id LIMIT ?`),
      forgetActivity: db.prepare(`DELETE FROM activity WHERE at < ?`),
      deleteMeta: db.prepare(`DELETE FROM synapse_meta WHERE key = ?`),
      initMeta: db.prepare(`INSERT INTO synapse_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`),
      counts: db.prepare<[], { edges: number; ltp_edges: number; total_weight: number | null }>(
        `SELECT count(*) AS edges, coalesce(sum(ltp), 0) AS ltp_edges, sum(weight) AS total_weight FROM synapses`,
      ),
      nodes: db.prepare<[], { nodes: number }>(`SELECT count(*) AS nodes FROM synapse_nodes`),
      hubs: db.prepare<[number], { id: string; degree: number; strength: number }>(SQL_HUBS),
      cochange: db.prepare(SQL_COCHANGE),
      // score: the pair as @id's history ages it; other: as the partner's does.
      cochangeOf: db.prepare<{ id: string; limit: number }, { id: string; score: number; other: number; commits: number }>(
        pairsOf("cochange", "score", (side) => `score_${side} AS score, score_${side === "a" ? "b" : "a"} AS other, commits`),
      ),
      // A pair's strength is the larger of its two files' views.
      strongestCoChange: db.prepare<[number], { a: string; b: string; score: number; commits: number }>(
        `SELECT c.a, c.b, max(c.score_a * ca.age, c.score_b * cb.age) AS score, c.commits FROM cochange c
         JOIN cochange_clocks ca ON ca.id = c.a JOIN cochange_clocks cb ON cb.id = c.b ORDER BY score DESC, c.a, c.b LIMIT ?`,
      ),
      tick: db.prepare<{ id: string; decay: number }, { tick: number; base: number }>(SQL_TICK),
      ageOf: db.prepare<[string], { age: number }>(`SELECT age FROM cochange_clocks WHERE id = ?`),
      cochangeDegree: db.prepare<[string], { degree: number }>(`SELECT degree FROM cochange_nodes WHERE id = ?`),
      degrees: db.prepare<{ id: string }, { degree: number }>(
        `SELECT coalesce((SELECT degree FROM synapse_nodes WHERE id = @id), 0) + coalesce((SELECT degree FROM cochange_nodes WHERE id = @id), 0) AS degree`,
      ),
      commitSeen: db.prepare(`INSERT INTO history_commits (sha, at, files, learned) VALUES (?, ?, ?, ?) ON CONFLICT (sha) DO NOTHING`),
      rescale: db.prepare<{ id: string; factor: number }>(
        `UPDATE cochange SET score_a = CASE WHEN a = @id THEN score_a * @factor ELSE score_a END,
           score_b = CASE WHEN b = @id THEN score_b * @factor ELSE score_b END WHERE a = @id OR b = @id`,
      ),
      rebase: db.prepare(`UPDATE cochange_clocks SET base = tick, age = 1 WHERE id = ?`),
      rescaleAll: db.prepare<{ factor: number }>(`UPDATE cochange SET score_a = score_a * @factor, score_b = score_b * @factor`),
      pairEvidence: db.prepare<{ a: string; b: string }, { count: number | null; s_at: number | null; commits: number | null; h_at: number | null }>(
        `SELECT s.count AS count, s.last_at AS s_at, c.commits AS commits, c.last_at AS h_at
         FROM (SELECT 1) LEFT JOIN synapses s ON s.a = @a AND s.b = @b LEFT JOIN cochange c ON c.a = @a AND c.b = @b`,
      ),
      historyCounts: db.prepare<[], { commits: number; learned: number }>(`SELECT count(*) AS commits, coalesce(sum(learned), 0) AS learned FROM history_commits`),
      cochangeCount: db.prepare<[], { edges: number }>(`SELECT count(*) AS edges FROM cochange`),
      latestSeq: db.prepare<[], { seq: number }>(`SELECT coalesce(max(seq), 0) AS seq FROM history_latest`),
      addLatest: db.prepare(`INSERT INTO history_latest (seq, id) VALUES (?, ?) ON CONFLICT DO NOTHING`),
      trimLatest: db.prepare(`DELETE FROM history_latest WHERE seq <= ?`),
      latest: db.prepare<[], { seq: number; id: string }>(`SELECT seq, id FROM history_latest`),
      strongest: db.prepare<[number], { a: string; b: string; weight: number; count: number; ltp: number }>(
        `SELECT a, b, weight, count, ltp FROM synapses ORDER BY weight DESC, count DESC, a, b LIMIT ?`,
      ),
    };
  }

  /** Opens (creating if needed) the store at `file`; `params` overrides defaults for this process. */
  static open(file: string, params: Partial<SynapseParams> = {}): SynapseStore {
    prepareFile(file, SQLITE_SIDECARS);
    let db: Database.Database | undefined;
    try {
      db = new Database(file);
      db.pragma("busy_timeout = 5000");
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.pragma("cache_size = -16384"); // 16 MiB: a 100k-edge store with its indexes stays in memory
      // Checkpoints run deferred, off the reinforce call (see afterWrite); SQLite's own automatic
      // checkpoint stays only as a backstop for a process that never yields, at 64 MiB of WAL.
      db.pragma("wal_autocheckpoint = 16384");
      forgetOldHistory(db);
      db.exec(SCHEMA);
      unlearnAnswers(db);
    } catch (err) {
      db?.close();
      throw new CodememError(
        "INDEX_CORRUPT",
        `The synapse store ${file} is unreadable (${(err as Error).message}); move it aside or delete it to start the learned associations over (the code index is not affected).`,
        { file },
      );
    }
    return new SynapseStore(db, Object.freeze({ ...SYNAPSE_PARAMS, ...params }));
  }

  close(): void {
    if (!this.db.open) return;
    if (this.writesSinceCheckpoint > 0) this.checkpoint();
    this.db.close();
  }

  /** Copies committed WAL frames into the database file without blocking other connections. */
  checkpoint(): void {
    this.writesSinceCheckpoint = 0;
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
    } catch {
      // Busy or closed: the next checkpoint (or SQLite's backstop) catches up.
    }
  }

  /**
   * A reinforce event dirties ~70 pages (3 b-trees × 28 pairs), so SQLite's default checkpoint
   * (every 1000 pages) would land inside every ~14th call and cost it tens of milliseconds of
   * copying and fsync. We checkpoint every 16 writes instead, on the next turn of the event loop,
   * after the caller has its answer.
   */
  private afterWrite(): void {
    if (++this.writesSinceCheckpoint < 16 || this.checkpointScheduled) return;
    this.checkpointScheduled = true;
    setImmediate(() => {
      this.checkpointScheduled = false;
      if (this.db.open) this.checkpoint();
    }).unref();
  }

  /**
   * Hebbian co-activation of every pair among the first 12 distinct ids; one transaction. Unless
   * `active` is false, the ids are also stamped as active now (the focus of recall).
   */
  reinforce(nodeIds: string[], opts: { source?: string; now?: number; active?: boolean } = {}): { pairs: number } {
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
        // Work in code (an outline opened, an edit, a save) marks it active; an answer's list does not.
        if (opts.active !== false) for (const id of ids) this.stmts.touch.run(id, now);
        for (let i = 0; i < ids.length; i++) {
          for (let j = i + 1; j < ids.length; j++) {
            const [a, b] = ordered(ids[i], ids[j]);
            this.stmts.reinforce.run({ ...base, a, b });
            pairs++;
          }
        }
      })
      .immediate();
    this.afterWrite();
    return { pairs };
  }

  /**
   * Learns commits of the project's history, oldest first: each commit not seen before is one tick
   * of the project's clock; one that changed between 2 and `maxFiles` project files adds to every
   * pair of its n indexed files a share 1/(n − 1) of a co-change (a pair changed alone together
   * weighs most), and is one more tick of each of those files' clocks: evidence ages with each
   * file's own commits and with the project's. Commits already recorded are skipped: replaying
   * again adds nothing.
   */
  learnHistory(commits: LearnedCommit[], opts: { maxFiles: number; head?: string; ageing?: HistoryAgeing }): { commits: number; learned: number; pairs: number } {
    let seen = 0;
    let learned = 0;
    let pairs = 0;
    const ageing = opts.ageing ?? this.ageing();
    const rescaleAt = (decay: number) => HISTORY_RESCALE_LOG / Math.log(1 / decay); // no ageing (1): never
    this.db
      .transaction(() => {
        this.stmts.initMeta.run(META_HISTORY_DECAY, ageingKey(ageing));
        let clock = Number(this.stmts.getMeta.get(META_HISTORY_CLOCK)?.value ?? 0);
        let base = Number(this.stmts.getMeta.get(META_HISTORY_BASE)?.value ?? 0);
        let seq = this.stmts.latestSeq.get()!.seq;
        for (const c of commits) {
          const ids = [...new Set(c.ids.filter((id) => typeof id === "string" && id !== ""))];
          const learn = ids.length >= 2 && c.files <= opts.maxFiles;
          if (this.stmts.commitSeen.run(c.sha, c.at, c.files, learn ? 1 : 0).changes === 0) continue;
          seen++;
          clock++;
          if (clock - base > rescaleAt(ageing.project)) {
            this.stmts.rescaleAll.run({ factor: Math.pow(ageing.project, clock - base) });
            base = clock;
          }
          if (!learn) continue;
          learned++;
          seq++;
          for (const id of ids) this.stmts.addLatest.run(seq, id);
          const project = Math.pow(1 / ageing.project, clock - base) / (ids.length - 1);
          const inc = new Map<string, number>();
          for (const id of ids) inc.set(id, this.tickOf(id, ageing.file, rescaleAt(ageing.file)) * project);
          for (let i = 0; i < ids.length; i++) {
            for (let j = i + 1; j < ids.length; j++) {
              const [a, b] = ordered(ids[i], ids[j]);
              this.stmts.cochange.run({ a, b, incA: inc.get(a)!, incB: inc.get(b)!, at: c.at });
              pairs++;
            }
          }
        }
        this.stmts.trimLatest.run(seq - LATEST_KEPT);
        this.stmts.setMeta.run(META_HISTORY_CLOCK, String(clock));
        this.stmts.setMeta.run(META_HISTORY_BASE, String(base));
        this.stmts.setMeta.run(META_HISTORY_AGE, String(Math.pow(ageing.project, clock - base)));
        if (opts.head) this.stmts.setMeta.run(META_HISTORY_HEAD, opts.head);
      })
      .immediate();
    if (seen > 0) {
      this.writesSinceCheckpoint = 15;
      this.afterWrite();
    }
    return { commits: seen, learned, pairs };
  }

  /** Advances a file's history clock by one commit; g^(tick − base), what its new evidence is worth in its stored scores. */
  private tickOf(id: string, decay: number, rescaleAt: number): number {
    let { tick, base } = this.stmts.tick.get({ id, decay })!;
    if (tick - base > rescaleAt) {
      this.stmts.rescale.run({ id, factor: Math.pow(decay, tick - base) });
      this.stmts.rebase.run(id);
      base = tick;
    }
    return Math.pow(1 / decay, tick - base);
  }

  /**
   * Whether what was learned from history was aged as `ageing` says (or nothing was): scores
   * learned with other half-lives mean nothing under these, and are read again.
   */
  historyFits(ageing = this.ageing()): boolean {
    const learned = this.stmts.getMeta.get(META_HISTORY_DECAY)?.value;
    return learned === undefined || learned === ageingKey(ageing);
  }

  /** The store's own history ageing (its parameters). */
  private ageing(): HistoryAgeing {
    return { file: this.params.historyDecay, project: this.params.historyProjectDecay };
  }

  /** Drops everything learned from history (the session synapses stay). */
  forgetHistory(): void {
    this.db
      .transaction(() => {
        this.db.exec(`DELETE FROM cochange; DELETE FROM cochange_nodes; DELETE FROM cochange_clocks; DELETE FROM history_commits; DELETE FROM history_latest`);
        for (const key of [META_HISTORY_HEAD, META_HISTORY_DECAY, META_HISTORY_CLOCK, META_HISTORY_BASE, META_HISTORY_AGE]) this.stmts.deleteMeta.run(key);
      })
      .immediate();
  }

  /** The newest commit history replay has read (HEAD at the time), if any. */
  historyHead(): string | undefined {
    return this.stmts.getMeta.get(META_HISTORY_HEAD)?.value;
  }

  /** Commits read, commits learned from, co-change pairs. */
  historyStats(): { commits: number; learned: number; edges: number } {
    return { ...this.stmts.historyCounts.get()!, ...this.stmts.cochangeCount.get()! };
  }

  /**
   * Co-change weight today as `id`'s history ages it: commits changed together count as
   * co-activations of the Hebbian rule, w = 1 − (1 − lr)^s, s the aged score (a pair changed alone
   * together twice, lately: 1 − 0.85² = 0.28).
   */
  private historyWeight(id: string): (score: number) => number {
    const age = this.ageOf(id) * this.projectAge();
    const keep = 1 - this.params.learningRate;
    return (score) => 1 - Math.pow(keep, score * age);
  }

  /** The factor that ages a file's stored co-change scores to today's value (1 before its first commit). */
  private ageOf(id: string): number {
    return this.stmts.ageOf.get(id)?.age ?? 1;
  }

  /** The factor that ages every stored co-change score by the project's commits since. */
  private projectAge(): number {
    return Number(this.stmts.getMeta.get(META_HISTORY_AGE)?.value ?? 1);
  }

  /**
   * The strongest associations of `id`, sessions and history together: a pair known both ways
   * weighs 1 − (1 − w_session)(1 − w_history); its degree is the sum of both degrees. w_history is
   * the pair as `id`'s history ages it, or given `ages`, the weaker of that and its partner's view
   * (each partner's age factor read once per recall through `ages`).
   */
  private edgesOf(id: string, ages?: Map<string, number>): { degree: number; edges: { id: string; weight: number }[] } {
    const sessions = this.stmts.degree.get(id)?.degree ?? 0;
    const history = this.stmts.cochangeDegree.get(id)?.degree ?? 0;
    const degree = sessions + history;
    if (degree === 0) return { degree, edges: [] };
    const limit = this.params.fanout;
    const merged = new Map<string, number>();
    // A side without edges is not read (its query costs as much as one with a few rows).
    if (sessions > 0) {
      for (const e of this.stmts.strongestOf.all({ id, limit })) merged.set(e.id, e.weight);
    }
    if (history > 0) {
      const toWeight = this.historyWeight(id);
      const keep = 1 - this.params.learningRate;
      const project = this.projectAge();
      for (const e of this.stmts.cochangeOf.all({ id, limit })) {
        let w = toWeight(e.score);
        if (ages) {
          let age = ages.get(e.id);
          if (age === undefined) ages.set(e.id, (age = this.ageOf(e.id)));
          w = Math.min(w, 1 - Math.pow(keep, e.other * age * project));
        }
        merged.set(e.id, 1 - (1 - (merged.get(e.id) ?? 0)) * (1 - w));
      }
    }
    const edges = [...merged.entries()].map(([n, weight]) => ({ id: n, weight })).sort((x, y) => y.weight - x.weight || (x.id < y.id ? -1 : 1));
    return { degree, edges: edges.slice(0, limit) };
  }

  /**
   * A node's associations, sessions and history together (its hub damping), read once per recall:
   * the same read as a column of every edge row cost a 3-seed recall on flask's history 4.9 → 7.8 ms.
   */
  private degreeIn(cache: Map<string, number>, id: string): number {
    let d = cache.get(id);
    if (d === undefined) cache.set(id, (d = this.stmts.degrees.get({ id })!.degree));
    return d;
  }

  /**
   * Files that usually change with `id` by the history: at least `minCommits` shared commits and an
   * aged weight of at least `minWeight`, strongest first.
   */
  historyPartners(id: string, opts: { limit: number; minCommits: number; minWeight: number }): { id: string; commits: number; weight: number }[] {
    const toWeight = this.historyWeight(id);
    return this.stmts.cochangeOf
      .all({ id, limit: opts.limit * 4 })
      .map((r) => ({ id: r.id, commits: r.commits, weight: toWeight(r.score) }))
      .filter((r) => r.commits >= opts.minCommits && r.weight >= opts.minWeight)
      .slice(0, opts.limit);
  }

  /**
   * The files the project changes most lately, up to `limit`: each of the latest learned commits
   * counts `0.5^(age / LATEST_HALF_LIFE)` for its files, age in learned commits since; ties, the
   * file changed last, then by id.
   */
  recentlyChanged(limit: number): string[] {
    const rows = this.stmts.latest.all();
    const now = rows.reduce((m, r) => Math.max(m, r.seq), 0);
    const heat = new Map<string, { score: number; last: number }>();
    for (const r of rows) {
      const h = heat.get(r.id) ?? { score: 0, last: 0 };
      h.score += Math.pow(0.5, (now - r.seq) / LATEST_HALF_LIFE);
      h.last = Math.max(h.last, r.seq);
      heat.set(r.id, h);
    }
    return [...heat.entries()]
      .sort(([x, a], [y, b]) => b.score - a.score || b.last - a.last || (x < y ? -1 : x > y ? 1 : 0))
      .slice(0, Math.max(0, limit))
      .map(([id]) => id);
  }

  /** Nodes active since `since` (ms), the most recent first, with the time of their last activation. */
  recentActivity(since: number, limit: number): { id: string; at: number }[] {
    return this.stmts.recent.all(since, limit);
  }

  /** What the association between two nodes rests on (sessions, commits, when last). */
  evidence(x: string, y: string): SynapseEvidence {
    const [a, b] = ordered(x, y);
    const r = this.stmts.pairEvidence.get({ a, b });
    const last = Math.max(r?.s_at ?? 0, r?.h_at ?? 0);
    return { co_activations: r?.count ?? 0, commits: r?.commits ?? 0, last_at: last > 0 ? new Date(last).toISOString() : null };
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
    const result = this.db
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
        this.stmts.forgetActivity.run(now - ACTIVITY_KEPT_MS);
        this.stmts.setMeta.run(META_LAST_DECAY, String(now));
        return { ticks, decayed, pruned };
      })
      .immediate();
    if (result.ticks > 0) {
      // A decay rewrites every edge: checkpoint soon rather than after 16 more writes.
      this.writesSinceCheckpoint = 15;
      this.afterWrite();
    }
    return result;
  }

  /**
   * Spreading activation from `seeds` (each at 1.0): a hop from u to v adds
   * activation(u) · weight(u,v) · hop / √degree(u), the second hop / √max(degree(u), degree(v));
   * contributions from all paths are summed, seeds are never intermediates nor results. Returns the
   * top `k` non-seed nodes; equal activations, the node with fewer associations first.
   */
  neighbors(seeds: string[], opts: { depth?: 1 | 2; k?: number; hop?: number } = {}): SynapseNeighbor[] {
    // One read transaction for the up to ~85 small reads of a recall: each read alone takes and drops
    // the WAL's read lock. With the empty sides skipped (edgesOf), a recall of 21 nodes on every search
    // went from 2.3 to 1.0 ms.
    return this.db.transaction(() => this.spreadFrom(seeds, opts)).deferred();
  }

  private spreadFrom(seeds: string[], opts: { depth?: 1 | 2; k?: number; hop?: number }): SynapseNeighbor[] {
    const depth = opts.depth ?? 2;
    const k = opts.k ?? 10;
    const hop = opts.hop ?? this.params.hopDamping;
    const seedSet = new Set(seeds.filter((s) => typeof s === "string" && s !== ""));
    if (seedSet.size === 0 || k <= 0) return [];

    type Acc = { activation: number; depth: number; via: string; best: number };
    const acc = new Map<string, Acc>();
    const degrees = new Map<string, number>();
    const ages = new Map<string, number>();
    const spread = (from: string, fromActivation: number, atDepth: number): void => {
      // Only the strongest edges of a node spread: each one left out adds less than any kept one.
      // The first hop is the seed's history: what it changed with lately. Beyond it a link is as
      // current as the weaker of its ends says: a hub's partners have aged for the hub (it has
      // changed with everything since), so the hub does not gather back from each of them.
      const { degree, edges } = this.edgesOf(from, atDepth === 2 ? ages : undefined);
      if (degree === 0) return;
      degrees.set(from, degree);
      const scale = (fromActivation * hop) / Math.sqrt(degree);
      for (const e of edges) {
        if (seedSet.has(e.id)) continue;
        // A hub (a package's __init__, the main test module) changes with every partner of the seed:
        // damped by the source only, each of them would hand it back activation, and it would outrank
        // the partner that changes with the seed alone (issue 39). On the second hop the larger
        // degree of the two damps.
        const target = atDepth === 2 ? this.degreeIn(degrees, e.id) : 0;
        const add = scale * e.weight * (target > degree ? Math.sqrt(degree / target) : 1);
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
    // Equal evidence: the node with fewer associations is the one specific to the seeds.
    return [...acc.entries()]
      .sort(([x, a], [y, b]) => b.activation - a.activation || this.degreeIn(degrees, x) - this.degreeIn(degrees, y) || (x < y ? -1 : x > y ? 1 : 0))
      .slice(0, k)
      .map(([id, a]) => ({ id, activation: a.activation, depth: a.depth, via: a.via }));
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

  /** The `limit` strongest co-change pairs of the history, with their weight today. */
  strongestCoChange(limit: number): { a: string; b: string; weight: number; commits: number }[] {
    const keep = 1 - this.params.learningRate;
    const project = this.projectAge();
    return this.stmts.strongestCoChange.all(Math.max(0, Math.floor(limit))).map((r) => ({ a: r.a, b: r.b, weight: 1 - Math.pow(keep, r.score * project), commits: r.commits }));
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
