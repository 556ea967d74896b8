import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject, PY_PROJECT } from "../helpers.js";

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

const edges = () => engine.synapses().stats(5).edges;
const weight = (a: string, b: string) =>
  engine.synapses().strongest(1000).find((e) => (e.a === a && e.b === b) || (e.a === b && e.b === a))?.weight ?? 0;

describe("every source reinforces the shared synapse store", () => {
  it("an outline opened associates the file's symbols; an answer's list associates nothing (recall made it)", async () => {
    const before = edges();
    await engine.dispatch("query", { project_path: p.root, question: "card charge and gateway retries" });
    await engine.dispatch("search", { project_path: p.root, query: "card charge" });
    expect(edges()).toBe(before);
    await engine.dispatch("skeleton", { project_path: p.root, file_path: "shop/payments.py" });
    expect(edges()).toBeGreaterThan(before);
    expect(weight("shop/payments.py::charge_card", "shop/payments.py::refund")).toBeGreaterThan(0);
  });

  it("benchmarks leave the store untouched", async () => {
    const before = JSON.stringify(engine.synapses().strongest(1000));
    await engine.dispatch("benchmark", { project_path: p.root, limit: 2 });
    expect(JSON.stringify(engine.synapses().strongest(1000))).toBe(before);
  });

  it("a watch batch associates the files that changed together", async () => {
    expect(weight("shop/models.py", "shop/payments.py")).toBe(0);
    await engine.recordWatchBatch(["shop/models.py", "shop/payments.py"]);
    expect(weight("shop/models.py", "shop/payments.py")).toBeGreaterThan(0);
    const ev = fs.readFileSync(path.join(p.root, ".codemem/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(ev.some((e) => e.kind === "watch_batch" && e.files.includes("shop/models.py"))).toBe(true);
  });

  it("a hook event associates the files it touched, or one file with its symbols", async () => {
    const two = (await engine.dispatch("hook_event", { project_path: p.root, event: "git_commit", files: ["shop/__init__.py", path.join(p.root, "shop/models.py"), "/etc/passwd"] })) as { nodes: number };
    expect(two.nodes).toBe(2); // the file outside the project is ignored
    expect(weight("shop/__init__.py", "shop/models.py")).toBeGreaterThan(0);
    const one = (await engine.dispatch("hook_event", { project_path: p.root, event: "post_tool_use", tool: "Edit", files: ["shop/payments.py"] })) as { reinforced_pairs: number };
    expect(one.reinforced_pairs).toBeGreaterThan(0);
    expect(weight("shop/payments.py", "shop/payments.py::refund")).toBeGreaterThan(0);
  });

  it("recall can be switched off and never grows the answer", async () => {
    const q = { project_path: p.root, question: "order total" };
    const withRecall = (await engine.dispatch("search", { project_path: p.root, query: "order total", limit: 5 })) as { results: unknown[] };
    expect(withRecall.results.length).toBeLessThanOrEqual(5);
    const a = (await engine.dispatch("query", { ...q, budget: 400 })) as { tokens: number };
    expect(a.tokens).toBeLessThanOrEqual(400);
    fs.writeFileSync(path.join(p.root, "codemem.toml"), "[query]\nsynapse_recall = false\n");
    const off = await ProjectEngine.open(p.root, { sideEffects: false });
    const r = await off.search({ project_path: p.root, query: "order total", limit: 10 });
    expect(r.results.every((x) => !x.via.includes("synapse"))).toBe(true);
    await off.close();
    fs.rmSync(path.join(p.root, "codemem.toml"));
  });
});

describe("an unreadable synapse store", () => {
  it("does not stop answers or hooks; the synapse tools name the file and the fix; a fresh store works again", async () => {
    const q = makeProject(PY_PROJECT);
    const e = await ProjectEngine.open(q.root);
    try {
      await e.build({ project_path: q.root });
      fs.mkdirSync(path.join(q.root, ".codemem"), { recursive: true });
      fs.writeFileSync(path.join(q.root, ".codemem/synapses.db"), "not a database, a broken copy");
      const a = (await e.dispatch("query", { project_path: q.root, question: "card charge and gateway retries" })) as { citations: unknown[] };
      expect(a.citations.length).toBeGreaterThan(0);
      expect(((await e.dispatch("search", { project_path: q.root, query: "charge card" })) as { results: unknown[] }).results.length).toBeGreaterThan(0);
      expect(await e.dispatch("hook_event", { project_path: q.root, event: "post_tool_use", files: ["shop/models.py", "shop/payments.py"] })).toMatchObject({ reinforced_pairs: 0 });
      await expect(e.dispatch("synapse_stats", { project_path: q.root })).rejects.toMatchObject({ code: "INDEX_CORRUPT", message: expect.stringContaining(".codemem/synapses.db is unreadable") });
      // The damaged file is the user's to move aside; then learning starts over.
      fs.rmSync(path.join(q.root, ".codemem/synapses.db"));
      await e.dispatch("skeleton", { project_path: q.root, file_path: "shop/payments.py" });
      expect(((await e.dispatch("synapse_stats", { project_path: q.root })) as { edges: number }).edges).toBeGreaterThan(0);
    } finally {
      await e.close();
      q.cleanup();
    }
  });
});
