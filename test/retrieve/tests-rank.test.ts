import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { builtFixture, builtProject } from "../index/fixture.js";

// Go 1.19's container, errors, sort, strings and unicode/utf8 packages with their real *_test.go files.
const TREE = ["go", "go-tests"] as const;

// On the old ranking the test named like the question came first (TestMoveEmptyRing, wrapped.Unwrap).
const IMPLEMENTATION_QUESTIONS = [
  { q: "What happens when moving an empty ring?", impl: "container/ring/ring.go", test: "container/ring/ring_test.go" },
  { q: "What does unwrapping a wrapped error return?", impl: "errors/wrap.go", test: "errors/wrap_test.go" },
];

describe("tests in their place", () => {
  it("implementation ranks above its tests, which stay in the list marked is_test; the answer's code layer is implementation", async () => {
    const { engine, root } = await builtFixture(...TREE);
    for (const { q, impl, test } of IMPLEMENTATION_QUESTIONS) {
      const { results } = await engine.search({ project_path: root, query: q });
      expect(results[0], q).toMatchObject({ file_path: impl, is_test: false });
      const firstTest = results.findIndex((r) => r.is_test);
      expect(firstTest, q).toBeGreaterThan(results.findIndex((r) => r.file_path === impl));
      expect(results.map((r) => r.file_path), q).toContain(test);
      for (const r of results) expect(r.is_test, r.file_path).toBe(r.file_path.endsWith("_test.go"));

      const a = await engine.query({ project_path: root, question: q });
      expect(a.citations[0].file_path, q).toBe(impl);
      expect(a.citations.filter((c) => c.is_test), q).toEqual([]);
    }
  });

  it("a question about the tests gets the test first", async () => {
    const { engine, root } = await builtFixture(...TREE);
    for (const [q, test] of [
      ["Where is moving an empty ring tested?", "container/ring/ring_test.go"],
      ["the test for unwrapping a wrapped error", "errors/wrap_test.go"],
    ]) {
      const { results } = await engine.search({ project_path: root, query: q });
      expect(results[0], q).toMatchObject({ file_path: test, is_test: true });
      const a = await engine.query({ project_path: root, question: q });
      expect(a.citations[0], q).toMatchObject({ file_path: test, is_test: true });
    }
  });

  it("a pasted report asks for tests only when its first line does: its body's tests were done, not sought", async () => {
    const { engine, root } = await builtFixture(...TREE);
    const body = [
      "Moving a ring by zero or by a negative count walked the links the wrong way, and an empty ring",
      "made Move return nil instead of the ring itself. Next and Prev now stay consistent after Move.",
      "",
      "* Add tests for moving an empty ring and for moving by a negative count.",
      "* The tests now cover every length from zero to ten; run them with the race detector too.",
    ].join("\n");
    const files = async (subject: string) => (await engine.search({ project_path: root, query: `${subject}\n\n${body}`, group_by: "file" })).results.map((r) => r.file_path);
    // Before, the body's "tests" asked for them: ring_test.go came second, above the other packages' code.
    const fix = await files("container/ring: fix Move on an empty ring");
    expect(fix[0]).toBe("container/ring/ring.go");
    expect(fix.indexOf("container/ring/ring_test.go")).toBeGreaterThan(fix.indexOf("container/list/list.go"));
    const flaky = await files("container/ring: the tests for Move are flaky");
    expect(flaky.slice(0, 2)).toEqual(["container/ring/ring.go", "container/ring/ring_test.go"]);
  });

  it("a pasted report's body naming a test it changed does not lift the test; its first line naming one does (gson's testUriDeserialization)", async () => {
    const { engine, root } = await builtFixture(...TREE);
    const body = [
      "Moving a ring by zero or by a negative count walked the links the wrong way, and an empty ring",
      "made Move return nil instead of the ring itself. Next and Prev now stay consistent after Move.",
      "",
      "* address review feedback: compare lengths in TestMoveEmptyRing for consistency",
    ].join("\n");
    const files = async (subject: string) => (await engine.search({ project_path: root, query: `${subject}\n\n${body}`, group_by: "file" })).results.map((r) => r.file_path);
    // Before, the body's TestMoveEmptyRing was named code, exempt from the tests' demotion: ring_test.go came first.
    expect((await files("container/ring: fix Move on an empty ring"))[0]).toBe("container/ring/ring.go");
    expect((await files("container/ring: TestMoveEmptyRing fails on an empty ring"))[0]).toBe("container/ring/ring_test.go");
  });

  it("a question naming test code by identifier gets that code first", async () => {
    const { engine, root } = await builtFixture(...TREE);
    // On the old ranking each came second, below the function it tests (Move, Unwrap, Grow; makeN, a helper of ring_test.go, came below strings.makeSingleStringReplacer).
    for (const [q, file] of [
      ["TestMoveEmptyRing", "container/ring/ring_test.go"],
      ["TestUnwrap", "errors/wrap_test.go"],
      ["TestBuilderGrow", "strings/builder_test.go"],
      ["makeN", "container/ring/ring_test.go"],
    ]) {
      const { results } = await engine.search({ project_path: root, query: q });
      expect(results[0], q).toMatchObject({ file_path: file, is_test: true });
    }
  });

  it("a name that names the project's code and a test's namesake exempts only the project's code from the tests' demotion", async () => {
    // RestSharp kept a copy of SimpleJson.cs in its test project: "SimpleJson" named both, and the copy came first.
    const json = (extra: string) => `namespace Acme;

/// <summary>Small JSON reader and writer.${extra}</summary>
public static class SimpleJson {
    /// <summary>Parses JSON text into dictionaries, lists and numbers.</summary>
    public static object DeserializeObject(string json) { return Parse(json, 0); }
    private static object Parse(string json, int at) { return json.Length > at ? json[at] : null; }
}
`;
    const { engine, root } = await builtProject({
      "src/Acme/SimpleJson.cs": json(""),
      "test/Acme.Tests/SimpleJson.cs": json(" Parses decimal numbers in JSON text."),
      "test/Acme.Tests/ClientTests.cs": "namespace Acme.Tests;\n\npublic class ClientTests {\n    public void Gets() { Client.Get(\"x\"); }\n}\n",
      "src/Acme/Client.cs": "namespace Acme;\n\n/// <summary>Sends requests.</summary>\npublic static class Client {\n    public static string Get(string url) { return url; }\n}\n",
    });
    const q = "Upgrade SimpleJson to 0.26\n\nSimpleJson parsed decimal numbers of JSON text with the current culture.";
    const { results } = await engine.search({ project_path: root, query: q, group_by: "file" });
    expect(results[0]).toMatchObject({ file_path: "src/Acme/SimpleJson.cs", is_test: false });
    // A name only a test holds still names the test.
    const named = await engine.search({ project_path: root, query: "ClientTests", group_by: "file" });
    expect(named.results[0]).toMatchObject({ file_path: "test/Acme.Tests/ClientTests.cs", is_test: true });
  });

  it("[index] test_patterns in codemem.toml marks more test code, applied on the next question", async () => {
    const { engine, root } = await builtFixture(...TREE);
    const q = "What happens when moving an empty ring?";
    expect((await engine.search({ project_path: root, query: q })).results[0]).toMatchObject({ file_path: "container/ring/ring.go", is_test: false });
    fs.writeFileSync(path.join(root, "codemem.toml"), `[index]\ntest_patterns = ["container/ring/ring.go"]\n`);
    // As the daemon runs an operation: codemem.toml is read again when it changed.
    const { results } = (await engine.dispatch("search", { project_path: root, query: q })) as Awaited<ReturnType<typeof engine.search>>;
    expect(results.find((r) => r.file_path === "container/ring/ring.go")?.is_test).toBe(true);
  });

  it("is_test reaches an MCP client through the daemon (declared in the output schema)", async () => {
    const { engine, root } = await builtFixture(...TREE);
    await engine.close();
    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.resolve("dist/client/mcp.js"), root], stderr: "pipe" }));
    try {
      const s = await client.callTool({ name: "codemem_search", arguments: { project_path: root, query: "What happens when moving an empty ring?" } });
      const results = (s.structuredContent as { results: { file_path: string; is_test: boolean }[] }).results;
      expect(results.some((r) => r.is_test)).toBe(true);
      for (const r of results) expect(r.is_test, r.file_path).toBe(r.file_path.endsWith("_test.go"));
    } finally {
      await client.close();
      await stopDaemon(root);
    }
  });
});
