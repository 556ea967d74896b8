import { spawnSync } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { isTestPath, testedName } from "../../dist/daemon/index/test-code.js";
import { testPairs } from "../../dist/daemon/synapse/fill.js";
import { historyRepo } from "./history-repo.js";

// A real git repository: app/models.py changed with app/views.py three times, never with its test
// tests/test_models.py (added by the root commit, which teaches nothing); the latest commit changed
// app/late.py with app/other.py; tests/test_cache.py and app/cache.py never changed with anything.
const CLI = path.resolve("dist/client/cli.js");
const SHIM = path.resolve("dist/client/mcp.js");
let p: ReturnType<typeof historyRepo>["project"];
let commit: ReturnType<typeof historyRepo>["commit"];
type Neighbour = { file_path: string; reason: string; via: string; commits: number };

beforeAll(() => {
  ({ project: p, commit } = historyRepo());
  commit(["app/models.py", "app/views.py", "tests/test_models.py", "app/late.py", "app/other.py", "app/cache.py", "tests/test_cache.py"]);
  for (let i = 0; i < 3; i++) commit(["app/models.py", "app/views.py"]);
  commit(["app/late.py", "app/other.py"]);
});
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});

describe("when a file's associations run out", () => {
  it("its test by name comes next, then the files the project changed last (CLI and MCP)", async () => {
    const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 120_000 });
    const b = cli("build", ".", "--history", "1000", "--json");
    expect(b.status, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).history).toMatchObject({ commits: 5, learned: 4 });

    // Before: [views.py] alone (the test never changed with models.py; nothing else did).
    const n = cli("neighbors", ".", "--file", "app/models.py", "--json");
    expect(n.status, n.stderr).toBe(0);
    const viaCli = JSON.parse(n.stdout).neighbors as Neighbour[];
    expect(viaCli.map((x) => [x.file_path, x.reason])).toEqual([
      ["app/views.py", "associated"],
      ["tests/test_models.py", "test_pair"],
      ["app/late.py", "recent_change"],
      ["app/other.py", "recent_change"],
    ]);
    expect(viaCli[0].commits).toBe(3);
    expect(viaCli[1].via).toBe("app/models.py");
    // The learned associations still come first and fill a short list alone.
    const one = JSON.parse(cli("neighbors", ".", "--file", "app/models.py", "-k", "1", "--json").stdout).neighbors as Neighbour[];
    expect(one.map((x) => x.file_path)).toEqual(["app/views.py"]);

    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
    try {
      // A test without any history: the code it is named after, then what the project changes most
      // lately (models.py and views.py three commits of the last four, late.py and other.py the last).
      // Before: no neighbours at all.
      const r = await client.callTool({ name: "codemem_synaptic_neighbors", arguments: { node_ids: ["tests/test_cache.py"] } });
      const viaMcp = (r.structuredContent as { neighbors: Neighbour[] }).neighbors;
      expect(viaMcp.map((x) => [x.file_path, x.reason])).toEqual([
        ["app/cache.py", "test_pair"],
        ["app/models.py", "recent_change"],
        ["app/views.py", "recent_change"],
        ["app/late.py", "recent_change"],
        ["app/other.py", "recent_change"],
      ]);
    } finally {
      await client.close();
    }
  });

  it("test names pair by each language's convention, the nearest first", () => {
    expect(["pkg/foo_test.go", "test/x.test.ts", "spec/x_spec.rb", "tests/test_models.py", "src/FooTest.java", "tests/__init__.py", "lib/router.js"].map(testedName)).toEqual([
      "foo",
      "x",
      "x",
      "models",
      "Foo",
      undefined,
      undefined,
    ]);
    const files = ["pkg/a/util.go", "pkg/b/util_test.go", "pkg/a/util_test.go", "pkg/a/other_test.go", "src/x.ts", "test/x.test.ts", "tests/__init__.py", "requests/__init__.py"];
    expect(testPairs("pkg/a/util.go", files, isTestPath)).toEqual(["pkg/a/util_test.go", "pkg/b/util_test.go"]);
    expect(testPairs("test/x.test.ts", files, isTestPath)).toEqual(["src/x.ts"]);
    // A test directory's __init__ is not named as a test of anything.
    expect(testPairs("requests/__init__.py", files, isTestPath)).toEqual([]);
  });
});
