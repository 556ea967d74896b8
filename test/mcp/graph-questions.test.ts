import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { makeGraphRepo } from "../fixtures/graph-questions.js";

const SHIM = path.resolve("dist/client/mcp.js");
let p: ReturnType<typeof makeGraphRepo>;
let client: Client;

beforeAll(async () => {
  p = makeGraphRepo();
  client = new Client({ name: "codemem-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
  const b = await client.callTool({ name: "codemem_build", arguments: { history: 50 } });
  expect(b.isError).toBeFalsy();
});
afterAll(async () => {
  await client.close();
  await stopDaemon(p.root);
  p.cleanup();
});

const call = async (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const text = (r: Awaited<ReturnType<typeof call>>) => (r.content as { text: string }[])[0].text;

describe("codemem_trace and codemem_impact with the SDK's MCP client", () => {
  it("traces callers by depth as structured content", async () => {
    const r = await call("codemem_trace", { symbol: "Order.total" });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as { symbol: { at: string }; levels: { depth: number; entries: { at: string; name: string }[] }[] };
    expect(s.symbol.at).toBe("shop/models.py:13");
    expect(s.levels[0].entries.map((e) => e.name)).toEqual(["Order.checkout", "charge_card"]);
    expect(s.levels[1].entries.map((e) => e.at)).toEqual(["shop/payments.py:17", "tests/test_payments.py:4"]);
  });

  it("marks a caller reached through a dispatch candidate, in trace and impact", async () => {
    const t = await call("codemem_trace", { symbol: "Truck.cost" });
    expect(t.isError).toBeFalsy();
    const levels = (t.structuredContent as { levels: { entries: { name: string; dispatch?: boolean; confidence?: number }[] }[] }).levels;
    expect(levels[0].entries).toMatchObject([{ name: "quote", dispatch: true, confidence: 0.333 }]);
    // The declared member's caller is a direct one: no mark.
    const base = (await call("codemem_trace", { symbol: "Carrier.cost" })).structuredContent as typeof t.structuredContent & { levels: { entries: object[] }[] };
    expect(base.levels[0].entries[0]).not.toHaveProperty("dispatch");
    const i = (await call("codemem_impact", { symbols: ["Truck.cost"] })).structuredContent as { callers: object[] };
    expect(i.callers).toMatchObject([{ name: "quote", dispatch: true, confidence: 0.333 }]);
  });

  it("answers an ambiguous name and a bad ref as tool errors led by their stable codes", async () => {
    const amb = await call("codemem_trace", { symbol: "validate" });
    expect(amb.isError).toBe(true);
    expect(text(amb)).toMatch(/^SYMBOL_AMBIGUOUS: /);
    const ref = await call("codemem_impact", { diff: "no-such-ref" });
    expect(ref.isError).toBe(true);
    expect(text(ref)).toMatch(/^GIT_REF_INVALID: /);
    const none = await call("codemem_impact", {});
    expect(text(none)).toMatch(/^INVALID_ARGUMENT: /);
  });

  it("gives the impact of the working tree's diff: seeds, callers, tests", async () => {
    const file = path.join(p.root, "shop/models.py");
    const before = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, before.replace("return amount * 1.2", "return amount * 1.25"));
    try {
      const r = await call("codemem_impact", { diff: "HEAD" });
      expect(r.isError).toBeFalsy();
      const s = r.structuredContent as { seeds: { name: string }[]; callers: { name: string; depth: number }[]; tests: { file_path: string }[] };
      expect(s.seeds.map((x) => x.name)).toEqual(["apply_tax"]);
      expect(s.callers.filter((c) => c.depth === 1).map((c) => c.name).sort()).toEqual(["Order.total", "refund", "shop.payments"]); // payments imports the changed file
      expect(s.tests.map((t) => t.file_path).slice(0, 2)).toEqual(["tests/test_models.py", "tests/test_payments.py"]);
    } finally {
      fs.writeFileSync(file, before);
    }
  });
});
