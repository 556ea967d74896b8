import { spawnSync } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { historyRepo } from "./history-repo.js";

// A real git repository where app/seed.py changed sixteen times with app/habit.py, then four times
// with app/lately.py, then once with app/incident.py (each pair alone in its commits: no second hop
// adds to any). Under a half-life of 2 of seed.py's own commits, the sixteen weigh 0.60 today and
// the incident 1: the incident is more current; seen in sixteen commits, the habit is the surer.
const CLI = path.resolve("dist/client/cli.js");
const SHIM = path.resolve("dist/client/mcp.js");
let p: ReturnType<typeof historyRepo>["project"];

beforeAll(() => {
  const repo = historyRepo();
  p = repo.project;
  p.write("codemem.toml", "[synapses]\nhistory_half_life = 2\n");
  repo.commit(["app/seed.py", "app/habit.py", "app/lately.py", "app/incident.py"]);
  for (let i = 0; i < 16; i++) repo.commit(["app/seed.py", "app/habit.py"]);
  for (let i = 0; i < 4; i++) repo.commit(["app/seed.py", "app/lately.py"]);
  repo.commit(["app/seed.py", "app/incident.py"]);
});
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 120_000 });

describe("co-change as an established habit", () => {
  it("a partner seen in more commits comes before one seen once, as current (CLI and MCP)", async () => {
    const b = cli("build", ".", "--history", "1000", "--json");
    expect(b.status, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).history).toMatchObject({ commits: 22, learned: 21 });

    // Before (the aged score alone): lately.py, incident.py, habit.py.
    const n = cli("neighbors", ".", "--file", "app/seed.py", "--json");
    expect(n.status, n.stderr).toBe(0);
    const viaCli = JSON.parse(n.stdout).neighbors as { file_path: string; commits: number; reason: string }[];
    const order = viaCli.map((x) => x.file_path);
    expect(order).toEqual(["app/lately.py", "app/habit.py", "app/incident.py"]);
    expect(viaCli.map((x) => [x.commits, x.reason])).toEqual([[4, "associated"], [16, "associated"], [1, "associated"]]);

    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
    try {
      const r = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: ["app/seed.py"] } });
      const viaMcp = (r.structuredContent as { neighbors: { file_path: string }[] }).neighbors.map((x) => x.file_path);
      expect(viaMcp).toEqual(order);
    } finally {
      await client.close();
    }
  });
});
