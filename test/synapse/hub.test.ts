import { spawnSync } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { historyRepo } from "./history-repo.js";

// A real git repository where app/registry.py is changed by every commit (a hub, as a package's
// __init__ or a test module is) and app/cart.py always changes with app/pricing.py (and the hub).
const CLI = path.resolve("dist/client/cli.js");
const SHIM = path.resolve("dist/client/mcp.js");
let p: ReturnType<typeof historyRepo>["project"];
let commit: ReturnType<typeof historyRepo>["commit"];

beforeAll(() => {
  ({ project: p, commit } = historyRepo());
  const others = ["app/orders.py", "app/users.py", "app/mail.py", "app/search.py", "app/auth.py", "app/admin.py"];
  commit(["app/registry.py", "app/cart.py", "app/pricing.py", ...others]);
  for (let round = 1; round <= 3; round++) {
    commit(["app/registry.py", "app/cart.py", "app/pricing.py"]);
    for (const o of others) commit(["app/registry.py", o]);
  }
});
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});

describe("co-change neighbours through the product are specific, not hubs", () => {
  it("a file's partner that always changes with it comes before the file every commit touches (CLI and MCP)", async () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 120_000 });
    const b = cli("build", ".", "--history", "1000", "--json");
    expect(b.status, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).history).toMatchObject({ commits: 22, learned: 21 }); // the root commit teaches nothing

    const n = cli("neighbors", ".", "--file", "app/cart.py", "--json");
    expect(n.status, n.stderr).toBe(0);
    const viaCli = JSON.parse(n.stdout).neighbors.map((x: { file_path: string }) => x.file_path);
    // Both changed with cart.py in its three commits; the hub also with everything else.
    // Before: [registry, pricing, ...] (the hub gathered activation back from every partner).
    expect(viaCli.slice(0, 2)).toEqual(["app/pricing.py", "app/registry.py"]);

    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
    try {
      const r = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: ["app/pricing.py"] } });
      const viaMcp = (r.structuredContent as { neighbors: { file_path: string; commits: number }[] }).neighbors;
      expect(viaMcp.slice(0, 2).map((x) => x.file_path)).toEqual(["app/cart.py", "app/registry.py"]);
      expect(viaMcp[0].commits).toBe(3);

      // A symbol (what a query's hits are) seeds its file too: the history is between files.
      // Before: no neighbours at all.
      const bySymbol = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: ["app/cart.py::cart_step"] } });
      const sym = bySymbol.structuredContent as { seeds: string[]; neighbors: { file_path: string }[] };
      expect(sym.seeds).toEqual(["app/cart.py::cart_step", "app/cart.py"]);
      expect(sym.neighbors.slice(0, 2).map((x) => x.file_path)).toEqual(["app/pricing.py", "app/registry.py"]);
    } finally {
      await client.close();
    }
  });
});
