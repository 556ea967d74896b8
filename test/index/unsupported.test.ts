import { spawnSync } from "node:child_process";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject } from "../helpers.js";

const CLI = path.resolve("dist/client/cli.js");
const SHIM = path.resolve("dist/client/mcp.js");

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** An app's sources in Erlang and Perl (not read), an image, and Erlang files that are ignored or in a vendored directory. */
const APP = {
  "App/AppDelegate.erl": "#import \"AppDelegate.h\"\n@implementation AppDelegate\n@end\n",
  "App/ViewController.erl": "#import \"ViewController.h\"\n@implementation ViewController\n@end\n",
  "App/Helpers.erl": "@implementation Helpers\n@end\n",
  "App/Bridge.pl": "#import \"Bridge.h\"\n@implementation Bridge\n@end\n",
  "App/logo.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
  "App/notes.txt": "not code\n",
  ".gitignore": "generated/\n",
  "generated/Model.erl": "@implementation Model\n@end\n",
  "vendor/Lib.erl": "@implementation Lib\n@end\n",
};

describe("files of languages codemem does not read", () => {
  it("are counted by extension in the build result, stats and the empty-index answer, which no longer blames .gitignore", async () => {
    const p = makeProject(APP);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(p.cleanup, () => engine.close());
    const b = await engine.build({ project_path: p.root });
    expect(b.files_indexed).toBe(0);
    // Ignored and vendored files are not counted, and neither are images or text.
    expect(b.unsupported).toEqual([
      { extension: ".erl", language: "Erlang", files: 3 },
      { extension: ".pl", language: "Perl", files: 1 },
    ]);
    expect((await engine.stats({ project_path: p.root })).unsupported).toEqual(b.unsupported);
    const q = await engine.query({ project_path: p.root, question: "where is the view controller" });
    expect(q.context).toContain("no source files indexed");
    expect(q.context).toContain("3 .erl files: Erlang is not indexed; 1 .pl file: Perl is not indexed");
    expect(q.context).not.toContain(".gitignore");

    // A later build (a Python file added, an Erlang one removed) counts again.
    p.write("tools/gen.py", "def gen():\n    return 1\n");
    p.remove("App/Helpers.erl");
    const again = await engine.build({ project_path: p.root });
    expect(again.files_indexed).toBe(1);
    expect(again.unsupported).toEqual([
      { extension: ".erl", language: "Erlang", files: 2 },
      { extension: ".pl", language: "Perl", files: 1 },
    ]);
    expect((await engine.stats({ project_path: p.root })).unsupported).toEqual(again.unsupported);
  });

  it("a project with nothing indexable and nothing unsupported still points at the exclusion rules", async () => {
    const p = makeProject({ "README.txt": "hello\n", ".gitignore": "src/\n", "src/main.py": "def main():\n    pass\n" });
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(p.cleanup, () => engine.close());
    const b = await engine.build({ project_path: p.root });
    expect(b.unsupported).toEqual([]);
    const q = await engine.query({ project_path: p.root, question: "main" });
    expect(q.context).toContain("check .gitignore and exclude_patterns");
  });

  it("are shown by `codemem build` and `codemem stats` and in the MCP stats tool", async () => {
    const p = makeProject(APP);
    cleanups.push(p.cleanup, () => stopDaemon(p.root));
    const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 60_000 });
    const build = cli(["build", p.root]);
    expect(build.status).toBe(0);
    expect(build.stdout).toContain("not indexed: 3 .erl files: Erlang is not indexed; 1 .pl file: Perl is not indexed");
    const stats = cli(["stats", p.root]);
    expect(stats.status).toBe(0);
    expect(stats.stdout).toMatch(/not indexed +3 \.erl files: Erlang is not indexed; 1 \.pl file: Perl is not indexed/);

    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
    cleanups.push(() => client.close());
    const st = await client.callTool({ name: "codemem_stats", arguments: { project_path: p.root } });
    expect(st.isError).toBeFalsy();
    expect((st.structuredContent as any).unsupported).toEqual([
      { extension: ".erl", language: "Erlang", files: 3 },
      { extension: ".pl", language: "Perl", files: 1 },
    ]);
  });
});
