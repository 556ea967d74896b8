import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { SynapseStore } from "../../dist/daemon/synapse/store.js";
import { waitFor } from "../daemon/helpers.js";
import { makeProject, PY_PROJECT } from "../helpers.js";

// Same index, same question, same history → the same answer (issue 39, "Answers must hold still").

type Result = { id: string; via: string[] };
const ranking = (r: { results: Result[] }) => r.results.map((x) => `${x.id} ${[...x.via].sort().join("+")}`);

describe("asking again gives the same answer", () => {
  let p: ReturnType<typeof makeProject>;
  let engine: ProjectEngine;
  beforeAll(async () => {
    p = makeProject(PY_PROJECT);
    engine = await ProjectEngine.open(p.root); // side effects on: as in the daemon
    await engine.build({ project_path: p.root });
  });
  afterAll(async () => {
    await engine.close();
    p.cleanup();
  });

  it("three passes of the same questions give identical rankings, with nothing recalled from the earlier answers", async () => {
    const questions = ["card charge and gateway retries", "order total with tax", "refund an order"];
    const passes: string[][][] = [];
    for (let pass = 0; pass < 3; pass++) {
      const answers: string[][] = [];
      for (const q of questions) {
        answers.push(ranking((await engine.dispatch("search", { project_path: p.root, query: q, limit: 8 })) as { results: Result[] }));
        const a = (await engine.dispatch("query", { project_path: p.root, question: q })) as { citations: { node_id: string }[] };
        answers.push(a.citations.map((c) => c.node_id));
      }
      passes.push(answers);
    }
    expect(passes[1]).toEqual(passes[0]);
    expect(passes[2]).toEqual(passes[0]);
    expect(passes.flat(2).some((r) => r.includes("synapse"))).toBe(false);
  });

  it("work in code still teaches: an outline opened associates its file's symbols", async () => {
    const before = engine.synapses().stats(1).edges;
    await engine.dispatch("skeleton", { project_path: p.root, file_path: "shop/payments.py" });
    expect(engine.synapses().stats(1).edges).toBeGreaterThan(before);
  });

  it("edges an answer's list taught before are dropped once; those learned from work stay", () => {
    const file = path.join(p.root, ".codemem/old-synapses.db");
    const s = SynapseStore.open(file);
    s.reinforce(["shop/models.py::Order", "shop/payments.py::charge_card"], { source: "tool:query" });
    s.reinforce(["shop/models.py::Order", "shop/models.py::Order.total"], { source: "tool:search" });
    s.reinforce(["shop/payments.py", "shop/payments.py::refund"], { source: "hook:post_tool_use" });
    s.reinforce(["shop/models.py", "shop/payments.py"], { source: "tool:skeleton" });
    s.close();
    // A store written before answers stopped teaching: its marker absent.
    const db = new Database(file);
    db.prepare("DELETE FROM synapse_meta WHERE key = 'answers_unlearned'").run();
    db.close();
    const again = SynapseStore.open(file);
    try {
      expect(again.strongest(10).map((e) => `${e.a}|${e.b}`).sort()).toEqual(["shop/models.py|shop/payments.py", "shop/payments.py|shop/payments.py::refund"]);
      expect(again.neighbors(["shop/models.py::Order"], { depth: 2 })).toEqual([]);
    } finally {
      again.close();
    }
  });
});

describe("ties break by a stable key, not by the order rows arrive in", () => {
  let p: ReturnType<typeof makeProject>;
  let clock = Date.parse("2026-01-01T00:00:00Z");
  const git = (...args: string[]) => {
    const at = new Date((clock += 3_600_000)).toISOString();
    execFileSync("git", ["-C", p.root, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", ...args], { env: { ...process.env, GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at } });
  };
  const mod = (name: string, rev: number) => `"""Module ${name}."""\n\n\ndef ${name}_step(x):\n    return x + ${rev}\n`;
  beforeAll(() => {
    p = makeProject({ "app/m.py": `"""Ledger."""\n\n\ndef reconcile_ledger_entries(entries):\n    """Reconcile the ledger entries against the bank statement."""\n    return sorted(entries)\n` });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("commit", "-q", "-m", "initial");
    // Four partners, each changed with m.py in the same five commits: tied to the last digit.
    for (let rev = 1; rev <= 5; rev++) {
      p.write("app/m.py", fs.readFileSync(path.join(p.root, "app/m.py"), "utf8") + `\n# rev ${rev}\n`);
      for (const f of ["a", "b", "y", "z"]) p.write(`app/${f}.py`, mod(f, rev));
      git("add", "-A");
      git("commit", "-q", "-m", `rev ${rev}`);
    }
  });
  afterAll(() => p.cleanup());

  it("the co-change partners a query names are the first by path among equals", async () => {
    const e = await ProjectEngine.open(p.root);
    try {
      await e.build({ project_path: p.root, history: 100 });
      const a = await e.query({ project_path: p.root, question: "reconcile the ledger entries against the bank statement", budget: 600 });
      expect(a.citations[0].file_path).toBe("app/m.py");
      expect(a.context).toContain("(usually changed with app/a.py (5 commits), app/b.py (5), app/y.py (5))");
    } finally {
      await e.close();
    }
  });
});

describe("the daemon that built the vectors answers with them", () => {
  let p: ReturnType<typeof makeProject>;
  beforeAll(() => {
    p = makeProject(PY_PROJECT);
  });
  afterAll(() => p.cleanup());

  it("the first answer after its build's vectors are written is not lexical-only, and equals a warm engine's", async () => {
    const daemon = await ProjectEngine.open(p.root, { daemon: true, sideEffects: false }); // as the daemon opens it
    let first: Awaited<ReturnType<ProjectEngine["search"]>>;
    try {
      const built = await daemon.build({ project_path: p.root });
      // A whole-tree build answers before its vectors are written (issue 37), and says so: an answer
      // then is lexical and graph, marked `filling` (or `warming` while a reader loads them). Once its
      // stats show none, the vectors serve at once.
      if (built.filling?.length) {
        const during = await daemon.search({ project_path: p.root, query: "charge the customer's card", limit: 8 });
        // Its words are always warm (the answer waited for them); only the vectors it cannot use yet may still load.
        expect((during.freshness.warming ?? []).filter((w: string) => w !== "vector search")).toEqual([]);
        if (!during.freshness.filling && !during.freshness.warming) expect(during.results.some((r) => r.via.includes("vector"))).toBe(true);
      }
      await waitFor("the build's fill", async () => !(await daemon.stats({ project_path: p.root })).freshness.filling, 120_000, 50);
      first = await daemon.search({ project_path: p.root, query: "charge the customer's card", limit: 8 });
    } finally {
      await daemon.close();
    }
    expect(first.freshness.filling ?? []).toEqual([]);
    expect(first.freshness.warming ?? []).toEqual([]);
    expect(first.results.some((r) => r.via.includes("vector"))).toBe(true);
    const warm = await ProjectEngine.open(p.root, { sideEffects: false }); // opens its reader whole
    try {
      const again = await warm.search({ project_path: p.root, query: "charge the customer's card", limit: 8 });
      expect(ranking(again)).toEqual(ranking(first));
    } finally {
      await warm.close();
    }
  });
});
