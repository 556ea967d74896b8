import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { countTokens } from "../../dist/shared/tokens.js";
import { makeProject } from "../helpers.js";
import { GRAPH_PROJECT, makeGraphRepo } from "../fixtures/graph-questions.js";

const CLI = path.resolve("dist/client/cli.js");
let p: ReturnType<typeof makeGraphRepo>;
const cli = (args: string[], cwd = p.root) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8", timeout: 60_000 });
const json = (args: string[]) => {
  const r = cli([...args, "--json"]);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
};
/** The stable code of a failed command (`codemem: CODE: message` on stderr). */
const codeOf = (r: ReturnType<typeof cli>) => /^codemem: ([A-Z_]+):/m.exec(r.stderr)?.[1];

beforeAll(() => {
  p = makeGraphRepo();
  const b = cli(["build", ".", "--history", "50"]);
  expect(b.status, b.stderr).toBe(0);
});
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});

describe("codemem trace", () => {
  it("lists a symbol's callers by depth, each as path:line with its name and kind", () => {
    const t = json(["trace", ".", "apply_tax", "--depth", "3"]);
    expect(t.symbol).toMatchObject({ name: "apply_tax", type: "function", at: "shop/models.py:21" });
    const at = (d: number) => t.levels.find((l: { depth: number }) => l.depth === d).entries.map((e: { at: string }) => e.at);
    expect(at(1)).toEqual(["shop/models.py:13", "shop/payments.py:17", "tests/test_models.py:4"]);
    expect(at(2)).toEqual(["shop/models.py:16", "shop/payments.py:4", "tests/test_payments.py:8"]);
    expect(at(3)).toEqual(["tests/test_payments.py:4"]);
    expect(t.levels[1].entries.find((e: { name: string }) => e.name === "charge_card").via).toBe("shop/models.py::Order.total");
    // Depth is capped by what was asked: nothing beyond depth 1.
    expect(json(["trace", ".", "apply_tax", "--depth", "1"]).levels.map((l: { depth: number }) => l.depth)).toEqual([1]);
    expect(cli(["trace", ".", "apply_tax"]).stdout).toMatch(/depth 2:\n(.*\n)*  shop\/payments\.py:4  charge_card \(function\)/);
  });

  it("marks the run-time candidates of a call through a base class as dispatch, with their confidence", () => {
    const t = json(["trace", ".", "quote", "--direction", "callees"]);
    const entries = t.levels[0].entries.map((e: { name: string; dispatch?: boolean; confidence?: number }) => [e.name, e.dispatch ?? false, e.confidence ?? null]).sort();
    expect(entries).toEqual([
      ["Carrier.cost", false, null],
      ["Drone.cost", true, 0.333],
      ["Truck.cost", true, 0.333],
    ]);
    expect(json(["trace", ".", "Drone.cost"]).levels[0].entries).toMatchObject([{ name: "quote", dispatch: true, confidence: 0.333 }]);
    expect(cli(["trace", ".", "Drone.cost"]).stdout).toContain("quote (function) [dispatch 0.33]");
    expect(json(["impact", ".", "Drone.cost"]).callers).toMatchObject([{ name: "quote", depth: 1, dispatch: true, confidence: 0.333 }]);
  });

  it("lists callees with --direction callees", () => {
    const t = json(["trace", ".", "Order.checkout", "--direction", "callees"]);
    expect(t.levels[0].entries.map((e: { name: string }) => e.name).sort()).toEqual(["Entity.save", "Order.total"]);
    expect(t.levels[1].entries.map((e: { name: string }) => e.name).sort()).toEqual(["Entity.validate", "apply_tax"]);
  });

  it("refuses an ambiguous name with its candidates, takes path:name or an id, and refuses an unknown one", () => {
    const amb = cli(["trace", ".", "validate", "--json"]);
    expect(amb.status).toBe(2);
    expect(codeOf(amb)).toBe("SYMBOL_AMBIGUOUS");
    expect(amb.stderr).toContain("shop/models.py:Entity.validate");
    expect(amb.stderr).toContain("shop/payments.py:validate");
    expect(json(["trace", ".", "shop/payments.py:validate"]).symbol.at).toBe("shop/payments.py:13");
    expect(json(["trace", ".", "shop/models.py::Entity.validate"]).levels[0].entries[0].name).toBe("Entity.save");
    const missing = cli(["trace", ".", "no_such_symbol"]);
    expect([missing.status, codeOf(missing)]).toEqual([2, "SYMBOL_NOT_FOUND"]);
  });
});

describe("codemem impact", () => {
  it("for a symbol: callers weighted by depth and the tests reaching them, ranked", () => {
    const r = json(["impact", ".", "apply_tax"]);
    expect(r.seeds.map((s: { at: string }) => s.at)).toEqual(["shop/models.py:21"]);
    const score = (name: string) => r.callers.find((c: { name: string }) => c.name === name)?.score;
    expect(score("Order.total")).toBe(1);
    expect(score("charge_card")).toBe(0.5);
    // Test code is listed as tests, not as callers.
    expect(r.callers.some((c: { at: string }) => c.at.startsWith("tests/"))).toBe(false);
    expect(r.tests.map((t: { file_path: string }) => t.file_path).slice(0, 2)).toEqual(["tests/test_models.py", "tests/test_payments.py"]);
    expect(r.tokens).toBeLessThanOrEqual(1000);
  });

  it("for a file: its importers, the tests reaching it, and the tests that changed with it in git history", () => {
    const r = json(["impact", ".", "shop/payments.py"]);
    const tests = new Map(r.tests.map((t: { file_path: string; via: string }) => [t.file_path, t.via]));
    expect(tests.get("tests/test_payments.py")).toMatch(/calls/);
    // Neither imports nor calls payments: found by the history alone.
    expect(tests.get("tests/test_refunds.py")).toBe("co-change");
    expect(r.co_change.find((c: { file_path: string }) => c.file_path === "tests/test_refunds.py").commits).toBe(3);
  });

  it("keeps to the token budget (the whole answer, counted with o200k), saying how much it left out", () => {
    const full = json(["impact", ".", "apply_tax"]);
    expect(full.truncated).toBe(0);
    const r = json(["impact", ".", "apply_tax", "--budget", "170"]);
    expect(r.truncated).toBeGreaterThan(0);
    expect(countTokens(JSON.stringify(r))).toBeLessThanOrEqual(170);
    // What is kept is the head of each list.
    expect(r.tests[0]).toEqual(full.tests[0]);
    expect(r.callers).toEqual(full.callers.slice(0, r.callers.length));
  });

  it("with --diff: the working tree's changes since a ref, down to the changed definitions", () => {
    const head = fs.readFileSync(path.join(p.root, "shop/payments.py"), "utf8");
    p.write("shop/payments.py", head.replace("return amount > 0", "return amount > 1"));
    try {
      const r = json(["impact", ".", "--diff"]);
      expect(r.changed_files).toEqual(["shop/payments.py"]);
      expect(r.seeds.map((s: { name: string }) => s.name)).toEqual(["send"]);
      expect(r.callers.map((c: { name: string }) => c.name)).toEqual(["charge_card", "refund"]);
      // Against an older commit: the FEE constant added since is file-level code (the module), the test added a test.
      const older = json(["impact", ".", "--diff", "HEAD~3"]);
      expect(older.seeds.map((s: { name: string }) => s.name).sort()).toEqual(["send", "shop.payments", "test_fee_3"]);
      expect(older.changed_files).toEqual(["shop/payments.py", "tests/test_refunds.py"]);
    } finally {
      p.git("checkout", "-q", "--", "shop/payments.py");
    }
    expect(json(["impact", ".", "--diff", "HEAD"]).changed_files).toEqual([]);
  });

  it("answers bad input with stable codes: unknown ref, a ref shaped as an option, a path outside, nothing asked", () => {
    const bad = (args: string[]) => {
      const r = cli(["impact", ".", ...args]);
      return [r.status, codeOf(r)];
    };
    expect(bad(["--diff", "no-such-branch"])).toEqual([2, "GIT_REF_INVALID"]);
    expect(bad(["--diff=--output=/tmp/x"])).toEqual([2, "GIT_REF_INVALID"]);
    expect(bad(["../outside.py"])).toEqual([2, "PATH_OUTSIDE_PROJECT"]);
    expect(bad(["no_such_symbol"])).toEqual([2, "SYMBOL_NOT_FOUND"]);
    expect(bad([])).toEqual([2, "INVALID_ARGUMENT"]);
  });

  it("refuses --diff outside a git repository with NOT_A_GIT_REPO", async () => {
    const plain = makeProject(GRAPH_PROJECT, "codemem-nogit-");
    try {
      expect(cli(["build", "."], plain.root).status).toBe(0);
      const r = cli(["impact", ".", "--diff"], plain.root);
      expect([r.status, codeOf(r)]).toEqual([2, "NOT_A_GIT_REPO"]);
    } finally {
      await stopDaemon(plain.root);
      plain.cleanup();
    }
  });
});
