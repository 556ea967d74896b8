import { describe, it, expect, beforeEach, afterEach } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SynapseStore, SYNAPSE_PARAMS } from "../../dist/daemon/synapse/store.js";

const HOUR = 3600_000;
const T0 = Date.UTC(2025, 0, 1, 9, 0, 0);
/** Weight after n reinforcements of a new edge: 1 − (1 − lr)^n. */
const w = (n: number, lr = SYNAPSE_PARAMS.learningRate) => 1 - Math.pow(1 - lr, n);

let dir: string;
let store: InstanceType<typeof SynapseStore>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "codemem-synapse-"));
  store = SynapseStore.open(join(dir, ".codemem", "synapses.db"));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function edge(a: string, b: string) {
  const [x, y] = a < b ? [a, b] : [b, a];
  return store.strongest(100_000).find((e) => e.a === x && e.b === y);
}

function times(n: number, ids: string[], now = T0) {
  for (let i = 0; i < n; i++) store.reinforce(ids, { now });
}

describe("reinforcement", () => {
  it("strengthens every pair of an event with w += lr·(1−w), stored once in canonical order", () => {
    expect(store.reinforce(["m.py::b", "m.py::a", "m.py::c"], { now: T0, source: "tool_call" })).toEqual({ pairs: 3 });
    expect(store.reinforce(["m.py::a", "m.py::b"], { now: T0 })).toEqual({ pairs: 1 });
    const ab = edge("m.py::b", "m.py::a")!;
    expect(ab.a).toBe("m.py::a");
    expect(ab.b).toBe("m.py::b");
    expect(ab.count).toBe(2);
    expect(ab.weight).toBeCloseTo(w(2), 12);
    expect(edge("m.py::a", "m.py::c")!.weight).toBeCloseTo(w(1), 12);
    expect(store.stats().edges).toBe(3);
  });

  it("dedupes ids and keeps at most 12 nodes (first ones win), so at most 66 pairs per event", () => {
    const ids = Array.from({ length: 30 }, (_, i) => `n${String(i).padStart(2, "0")}`);
    const withDupes = [ids[0], ids[0], ...ids];
    expect(store.reinforce(withDupes, { now: T0 })).toEqual({ pairs: 66 });
    const s = store.stats(100);
    expect(s.edges).toBe(66);
    expect(s.nodes).toBe(12);
    const kept = new Set(s.top_hubs.map((h: { id: string }) => h.id));
    expect(kept).toEqual(new Set(ids.slice(0, 12)));
    expect(s.top_hubs.every((h: { degree: number }) => h.degree === 11)).toBe(true);
  });

  it("ignores events with fewer than two distinct nodes", () => {
    expect(store.reinforce([], { now: T0 })).toEqual({ pairs: 0 });
    expect(store.reinforce(["a", "a", ""], { now: T0 })).toEqual({ pairs: 0 });
    expect(store.stats().edges).toBe(0);
  });

  it("saturates at 1.0", () => {
    times(300, ["a", "b"]);
    expect(edge("a", "b")!.weight).toBeLessThanOrEqual(1);
    expect(edge("a", "b")!.weight).toBeCloseTo(1, 12);
  });
});

describe("LTP", () => {
  it("promotes an edge to long-term at its 5th co-activation, not before", () => {
    times(4, ["a", "b"]);
    expect(edge("a", "b")!.ltp).toBe(false);
    expect(store.stats().ltp_edges).toBe(0);
    times(1, ["a", "b"]);
    expect(edge("a", "b")).toMatchObject({ count: 5, ltp: true });
    expect(store.stats().ltp_edges).toBe(1);
  });
});

describe("decay over simulated time", () => {
  it("decays ordinary edges ×0.98 and LTP edges ×0.995 per hour, counted by wall clock", () => {
    times(1, ["a", "b"]);
    times(5, ["c", "d"]);
    const r = store.decay({ now: T0 + 10 * HOUR });
    expect(r).toEqual({ ticks: 10, decayed: 2, pruned: 0 });
    expect(edge("a", "b")!.weight).toBeCloseTo(w(1) * Math.pow(0.98, 10), 12);
    expect(edge("c", "d")!.weight).toBeCloseTo(w(5) * Math.pow(0.995, 10), 12);
    expect(store.stats().last_decay_at).toBe(new Date(T0 + 10 * HOUR).toISOString());
  });

  it("is idempotent for the same now and keeps the sub-tick remainder", () => {
    times(1, ["a", "b"]);
    expect(store.decay({ now: T0 + 2.5 * HOUR }).ticks).toBe(2);
    expect(store.decay({ now: T0 + 2.5 * HOUR })).toEqual({ ticks: 0, decayed: 0, pruned: 0 });
    expect(store.decay({ now: T0 + 2.9 * HOUR }).ticks).toBe(0);
    // The half hour left over from the first call is not lost.
    expect(store.decay({ now: T0 + 3 * HOUR }).ticks).toBe(1);
    expect(store.decay({ now: T0 + 3.99 * HOUR }).ticks).toBe(0);
    expect(store.decay({ now: T0 + 7 * HOUR }).ticks).toBe(4);
    expect(edge("a", "b")!.weight).toBeCloseTo(w(1) * Math.pow(0.98, 7), 12);
    // Time going backwards (clock skew between processes) never un-decays.
    expect(store.decay({ now: T0 }).ticks).toBe(0);
  });

  it("starts the clock with the first memory; a store without one does not tick", () => {
    expect(store.decay({ now: T0 })).toEqual({ ticks: 0, decayed: 0, pruned: 0 });
    expect(store.decay({ now: T0 + 5 * HOUR }).ticks).toBe(5);
    expect(store.stats().last_decay_at).toBe(new Date(T0 + 5 * HOUR).toISOString());
  });

  it("a manual tick decays once and leaves the wall clock alone", () => {
    times(1, ["a", "b"]);
    expect(store.decay({ ticks: 1, now: T0 + 0.5 * HOUR })).toEqual({ ticks: 1, decayed: 1, pruned: 0 });
    expect(edge("a", "b")!.weight).toBeCloseTo(w(1) * 0.98, 12);
    expect(store.decay({ now: T0 + 1 * HOUR }).ticks).toBe(1);
    expect(edge("a", "b")!.weight).toBeCloseTo(w(1) * 0.98 * 0.98, 12);
    expect(() => store.decay({ ticks: -1 })).toThrow(RangeError);
  });

  it("prunes edges that fall below 0.01; LTP edges outlive ordinary ones", () => {
    times(1, ["a", "b"]); // 0.15
    times(5, ["c", "d"]); // LTP, 0.556
    // First tick count at which 0.15·0.98^t < 0.01.
    let t = 0;
    while (w(1) * Math.pow(0.98, t) >= 0.01) t++;
    expect(store.decay({ now: T0 + (t - 1) * HOUR })).toMatchObject({ ticks: t - 1, pruned: 0 });
    expect(edge("a", "b")).toBeDefined();
    expect(store.decay({ now: T0 + t * HOUR })).toEqual({ ticks: 1, decayed: 2, pruned: 1 });
    expect(edge("a", "b")).toBeUndefined();
    expect(edge("c", "d")!.weight).toBeCloseTo(w(5) * Math.pow(0.995, t), 10);
    let u = 0;
    while (w(5) * Math.pow(0.995, u) >= 0.01) u++;
    expect(store.decay({ now: T0 + u * HOUR }).pruned).toBe(1);
    expect(store.stats()).toMatchObject({ edges: 0, ltp_edges: 0, nodes: 0, total_weight: 0 });
  });

  it("reinforcing a decayed edge raises it from its decayed weight", () => {
    times(1, ["a", "b"]);
    store.decay({ now: T0 + 10 * HOUR });
    store.reinforce(["a", "b"], { now: T0 + 10 * HOUR });
    const d = w(1) * Math.pow(0.98, 10);
    expect(edge("a", "b")!.weight).toBeCloseTo(d + 0.15 * (1 - d), 12);
  });
});

describe("spreading activation", () => {
  // Known graph (weights by reinforcement count n: w(n) = 1 − 0.85ⁿ):
  //   S–A ×4, S–B ×2, S–C ×1, A–D ×3, A–E ×1, B–D ×1, B–X1..X8 ×1 (B is a hub of degree 10).
  function build() {
    times(4, ["S", "A"]);
    times(2, ["S", "B"]);
    times(1, ["S", "C"]);
    times(3, ["A", "D"]);
    times(1, ["A", "E"]);
    times(1, ["B", "D"]);
    for (let i = 1; i <= 8; i++) times(1, ["B", `X${i}`]);
  }
  const h = 0.6;
  const aA = (1 * h * w(4)) / Math.sqrt(3);
  const aB = (1 * h * w(2)) / Math.sqrt(3);
  const aC = (1 * h * w(1)) / Math.sqrt(3);
  // A (degree 3: S, D, E) and B (degree 10) spread to depth 2.
  const aD = (aA * h * w(3)) / Math.sqrt(3) + (aB * h * w(1)) / Math.sqrt(10);
  const aE = (aA * h * w(1)) / Math.sqrt(3);
  const aX = (aB * h * w(1)) / Math.sqrt(10);

  it("ranks depth-1 and depth-2 nodes by damped, hub-damped, summed activation", () => {
    build();
    const got = store.neighbors(["S"], { depth: 2, k: 20 });
    expect(got.map((n: { id: string }) => n.id)).toEqual(["A", "B", "C", "D", "E", "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X8"]);
    const by = Object.fromEntries(got.map((n: { id: string }) => [n.id, n]));
    expect(by.A).toMatchObject({ depth: 1, via: "S" });
    expect(by.A.activation).toBeCloseTo(aA, 12);
    expect(by.B.activation).toBeCloseTo(aB, 12);
    expect(by.C.activation).toBeCloseTo(aC, 12);
    expect(by.D).toMatchObject({ depth: 2, via: "A" });
    expect(by.D.activation).toBeCloseTo(aD, 12);
    expect(by.E.activation).toBeCloseTo(aE, 12);
    expect(by.X1).toMatchObject({ depth: 2, via: "B" });
    expect(by.X1.activation).toBeCloseTo(aX, 12);
  });

  it("hub damping: a neighbor reached through a hub gets less than one reached through a quiet node", () => {
    build();
    const got = store.neighbors(["S"], { k: 20 });
    const by = Object.fromEntries(got.map((n: { id: string; activation: number }) => [n.id, n.activation]));
    // E hangs off A with the same edge weight as X1 off B; A is the stronger, quieter parent.
    expect(by.E / by.X1).toBeCloseTo((aA / Math.sqrt(3)) / (aB / Math.sqrt(10)), 9);
    expect(by.E).toBeGreaterThan(by.X1);
  });

  it("respects depth 1, k, custom hop damping, and never returns seeds", () => {
    build();
    expect(store.neighbors(["S"], { depth: 1 }).map((n: { id: string }) => n.id)).toEqual(["A", "B", "C"]);
    expect(store.neighbors(["S"], { k: 2 }).map((n: { id: string }) => n.id)).toEqual(["A", "B"]);
    const half = store.neighbors(["S"], { depth: 1, hop: 0.5 });
    expect(half[0].activation).toBeCloseTo((0.5 * w(4)) / Math.sqrt(3), 12);
    const two = store.neighbors(["S", "A"], { k: 50 });
    expect(two.some((n: { id: string }) => n.id === "S" || n.id === "A")).toBe(false);
    // With A a seed, D is reached at depth 1 from A directly.
    expect(two.find((n: { id: string }) => n.id === "D")).toMatchObject({ depth: 1, via: "A" });
    expect(store.neighbors(["nowhere"])).toEqual([]);
    expect(store.neighbors([])).toEqual([]);
  });
});

describe("bounded spreading through hubs", () => {
  it("a hub spreads along its 32 strongest edges but is damped by its full degree", () => {
    times(1, ["S", "H"]);
    // H–Y0..Y39: Y0..Y7 reinforced twice (stronger), the rest once.
    for (let i = 0; i < 40; i++) times(i < 8 ? 2 : 1, ["H", `Y${String(i).padStart(2, "0")}`]);
    const got = store.neighbors(["S"], { k: 100 });
    const aH = (0.6 * w(1)) / Math.sqrt(1);
    expect(got[0]).toMatchObject({ id: "H", depth: 1 });
    expect(got[0].activation).toBeCloseTo(aH, 12);
    const ys = got.slice(1);
    // H's edge back to S ties with Y08..Y39 (weight w(1)); ties go by id, so it takes one of the 32.
    expect(ys).toHaveLength(SYNAPSE_PARAMS.fanout - 1);
    // Degree of H is 41 (S and 40 Ys) even though only 32 edges were read.
    expect(ys[0].activation).toBeCloseTo((aH * 0.6 * w(2)) / Math.sqrt(41), 12);
    expect(ys.slice(0, 8).map((n: { id: string }) => n.id)).toEqual(["Y00", "Y01", "Y02", "Y03", "Y04", "Y05", "Y06", "Y07"]);
    expect(ys[8].activation).toBeCloseTo((aH * 0.6 * w(1)) / Math.sqrt(41), 12);
    expect(store.stats(1).top_hubs[0]).toMatchObject({ id: "H", degree: 41 });
  });
});

describe("stats and strongest", () => {
  it("reports totals, hubs by strength and the heaviest edges", () => {
    times(5, ["a", "b"]);
    times(1, ["a", "c"]);
    times(1, ["a", "d"]);
    const s = store.stats(2);
    expect(s.edges).toBe(3);
    expect(s.ltp_edges).toBe(1);
    expect(s.nodes).toBe(4);
    expect(s.total_weight).toBeCloseTo(w(5) + 2 * w(1), 12);
    expect(s.top_hubs).toHaveLength(2);
    expect(s.top_hubs[0]).toMatchObject({ id: "a", degree: 3 });
    expect(s.top_hubs[0].strength).toBeCloseTo(w(5) + 2 * w(1), 12);
    expect(s.top_hubs[1]).toMatchObject({ id: "b", degree: 1 });
    expect(s.last_decay_at).toBeNull();
    const top = store.strongest(2);
    expect(top).toHaveLength(2);
    expect(top[0]).toMatchObject({ a: "a", b: "b", count: 5, ltp: true });
    expect(top[1]).toMatchObject({ a: "a", b: "c", count: 1, ltp: false });
  });
});

describe("co-change history ages with each file's own commits", () => {
  const commit = (sha: string, ids: string[]) => ({ sha, at: T0, files: ids.length, ids });
  const partners = (s: InstanceType<typeof SynapseStore>, id: string) => s.historyPartners(id, { limit: 10, minCommits: 1, minWeight: 0 });

  it("a pair weighs as each file's history ages it, and as the project's does: a file that changed since sees it older than one that did not", () => {
    const lam = SYNAPSE_PARAMS.historyDecay;
    const P = SYNAPSE_PARAMS.historyProjectDecay;
    store.learnHistory([commit("c1", ["s", "o"]), commit("c2", ["s", "o"]), commit("c3", ["s", "n"]), commit("c4", ["x", "y"])], { maxFiles: 30 });
    // s changed three times: with o one and two of its commits ago (two and three of the project's), with n in its latest.
    const fromS = partners(store, "s");
    expect(fromS.map((p) => p.id)).toEqual(["o", "n"]);
    expect(fromS[0].weight).toBeCloseTo(w(lam * P ** 2 + lam ** 2 * P ** 3), 12);
    expect(fromS[1].weight).toBeCloseTo(w(P), 12);
    // o changed with nothing since: its latest commit with s is its latest commit.
    expect(partners(store, "o")[0].weight).toBeCloseTo(w(P ** 2 + lam * P ** 3), 12);
    // The canvas's strongest pairs take the larger view.
    expect(store.strongestCoChange(2)[0]).toMatchObject({ a: "o", b: "s", commits: 2 });
    expect(store.strongestCoChange(2)[0].weight).toBeCloseTo(w(P ** 2 + lam * P ** 3), 12);
  });

  it("scores are rescaled before they overflow: 2,000 commits of one file at a half-life of one commit stay exact", () => {
    const fast = SynapseStore.open(join(dir, "fast.db"), { historyDecay: 0.5, historyProjectDecay: 1 });
    try {
      fast.learnHistory(Array.from({ length: 2000 }, (_, i) => commit(`x${i}`, ["s", `f${i % 2}`])), { maxFiles: 30 });
      fast.learnHistory([commit("last", ["s", "n"])], { maxFiles: 30 });
      // f1 was in s's commits 1, 3, 5, … ago: Σ 0.5^(2k+1) = 2/3; f0 in 2, 4, …: 1/3; n: 1.
      const got = partners(fast, "s");
      expect(got.map((p) => p.id)).toEqual(["n", "f1", "f0"]);
      expect(got[1].weight).toBeCloseTo(w(2 / 3), 9);
      expect(got[2].weight).toBeCloseTo(w(1 / 3), 9);
      expect(fast.historyFits({ file: 0.5, project: 1 })).toBe(true);
      expect(fast.historyFits({ file: 0.5, project: SYNAPSE_PARAMS.historyProjectDecay })).toBe(false); // another half-life reads history again
      expect(fast.historyFits({ file: SYNAPSE_PARAMS.historyDecay, project: 1 })).toBe(false);
    } finally {
      fast.close();
    }
  });

  it("the project's clock is rescaled too: 2,000 commits at a project half-life of one commit stay exact", () => {
    const fast = SynapseStore.open(join(dir, "fast.db"), { historyDecay: 1, historyProjectDecay: 0.5 });
    try {
      fast.learnHistory(Array.from({ length: 2000 }, (_, i) => commit(`x${i}`, ["a", "b"])), { maxFiles: 30 });
      fast.learnHistory([commit("last", ["a", "c"])], { maxFiles: 30 });
      const got = partners(fast, "a");
      expect(got.map((p) => p.id)).toEqual(["b", "c"]);
      expect(got[0].weight).toBeCloseTo(w(1), 9); // Σ 0.5^k, k = 1…2000
      expect(got[1].weight).toBeCloseTo(w(1), 9);
      expect(partners(fast, "c")[0].weight).toBeCloseTo(w(1), 9);
    } finally {
      fast.close();
    }
  });

  it("a store whose co-change aged by the project's commits forgets it once; the next build reads the history again", async () => {
    const file = join(dir, "old.db");
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(file);
    db.exec(`CREATE TABLE synapse_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE cochange (a TEXT NOT NULL, b TEXT NOT NULL, score REAL NOT NULL, commits INTEGER NOT NULL, last_at INTEGER NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;
      CREATE TABLE cochange_nodes (id TEXT PRIMARY KEY, degree INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE history_commits (sha TEXT PRIMARY KEY, at INTEGER NOT NULL, files INTEGER NOT NULL, learned INTEGER NOT NULL) WITHOUT ROWID;
      INSERT INTO cochange VALUES ('a', 'b', 3.0, 3, 0); INSERT INTO cochange_nodes VALUES ('a', 1), ('b', 1);
      INSERT INTO history_commits VALUES ('c1', 0, 2, 1);
      INSERT INTO synapse_meta VALUES ('history_head', 'c1'), ('history_clock', '1'), ('history_base', '0')`);
    db.close();
    const s = SynapseStore.open(file);
    try {
      expect(s.historyHead()).toBeUndefined();
      expect(s.historyStats()).toEqual({ commits: 0, learned: 0, edges: 0 });
      s.learnHistory([commit("c1", ["a", "b"])], { maxFiles: 30 });
      expect(partners(s, "a")).toEqual([{ id: "b", commits: 1, weight: w(1) }]);
    } finally {
      s.close();
    }
  });
});
