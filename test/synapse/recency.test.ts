import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { historyRepo } from "./history-repo.js";

// A real git repository where app/seed.py changed with app/old.py eight times, then with thirty
// other files one at a time, then with app/new.py three times: old.py has more shared commits,
// new.py is what seed.py changes with lately.
const CLI = path.resolve("dist/client/cli.js");
const SHIM = path.resolve("dist/client/mcp.js");
const FILLERS = Array.from({ length: 30 }, (_, i) => `app/part${i}.py`);
let p: ReturnType<typeof historyRepo>["project"];
let commit: ReturnType<typeof historyRepo>["commit"];

beforeAll(() => {
  ({ project: p, commit } = historyRepo());
  commit(["app/seed.py", "app/old.py", "app/new.py", ...FILLERS]);
  for (let i = 0; i < 8; i++) commit(["app/seed.py", "app/old.py"]);
  for (const f of FILLERS) commit(["app/seed.py", f]);
  for (let i = 0; i < 3; i++) commit(["app/seed.py", "app/new.py"]);
});
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 120_000 });
const neighboursOf = (file: string) => {
  const n = cli("neighbors", ".", "--file", file, "--json");
  expect(n.status, n.stderr).toBe(0);
  return JSON.parse(n.stdout).neighbors as { file_path: string; commits: number }[];
};

describe("co-change ages with the file's own commits", () => {
  it("what a file changed with lately comes before what it changed with more often long ago (CLI and MCP); the half-life is [synapses] history_half_life", async () => {
    const b = cli("build", ".", "--history", "1000", "--json");
    expect(b.status, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).history).toMatchObject({ commits: 42, learned: 41 });

    // Default half-life (20 of seed.py's commits): the eight old commits are 33 to 40 of them ago.
    // Before (evidence aged by 0.995 per commit of the project): [old.py, new.py, ...].
    const viaCli = neighboursOf("app/seed.py");
    expect(viaCli.slice(0, 2).map((x) => x.file_path)).toEqual(["app/new.py", "app/old.py"]);
    expect(viaCli.slice(0, 2).map((x) => x.commits)).toEqual([3, 8]);

    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
    try {
      const r = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: ["app/seed.py"] } });
      const viaMcp = (r.structuredContent as { neighbors: { file_path: string }[] }).neighbors;
      expect(viaMcp.slice(0, 2).map((x) => x.file_path)).toEqual(["app/new.py", "app/old.py"]);
      // old.py changed with nothing since: for it, seed.py is as current as ever.
      const fromOld = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: ["app/old.py"], depth: 1 } });
      const associated = (fromOld.structuredContent as { neighbors: { file_path: string; reason: string }[] }).neighbors.filter((x) => x.reason === "associated");
      expect(associated.map((x) => x.file_path)).toEqual(["app/seed.py"]);
    } finally {
      await client.close();
    }

    // A long half-life keeps the old evidence: more shared commits win again. The next build reads
    // the history again by itself (in the background): what was learned under 20 means nothing now.
    fs.writeFileSync(path.join(p.root, "codemem.toml"), "[synapses]\nhistory_half_life = 100000\n");
    try {
      const again = cli("build", ".", "--json");
      expect(again.status, again.stderr).toBe(0);
      const deadline = Date.now() + 60_000; // only catches a hang
      let order: string[] = [];
      while (Date.now() < deadline) {
        order = neighboursOf("app/seed.py").slice(0, 2).map((x) => x.file_path);
        if (order[0] === "app/old.py") break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(order).toEqual(["app/old.py", "app/new.py"]);

      fs.writeFileSync(path.join(p.root, "codemem.toml"), "[synapses]\nhistory_half_life = 0\n");
      const bad = cli("build", ".", "--json");
      expect(bad.status).not.toBe(0);
      expect(bad.stdout + bad.stderr).toContain("CONFIG_INVALID");
    } finally {
      fs.rmSync(path.join(p.root, "codemem.toml"));
    }
  });
});
