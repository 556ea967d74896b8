import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { QUESTION_MAX_CHARS } from "../../dist/shared/operations.js";
import { builtFixture } from "../index/fixture.js";
import { expectCode } from "../helpers.js";

// Go 1.19's bufio, container, errors, sort, strings, text and unicode packages.
const TREE = "go";

/** A bug report's prose about scanning, buffering and sorting text: it pulls toward bufio and sort, never strings/replace.go. */
const PROSE = [
  "We read a large log file line by line with a buffered scanner and split each token on whitespace before sorting the lines.",
  "When a line is longer than the buffer the scanner stops with an error about the token being too long, and the reader is left half consumed.",
  "After that we sort the collected lines with a custom less function and search the sorted slice for the first line with a given prefix.",
  "The builder that collects the output grows its buffer many times, and reading runes from the reader with unread afterwards behaves oddly.",
  "None of this happens with short inputs; with inputs of several megabytes the scanner, the sort and the search all take much longer than expected.",
].join(" ");

function longReport(bytes: number, evidence = ""): string {
  let text = "";
  while (text.length < bytes / 2) text += `${PROSE}\n\n`;
  text += evidence;
  while (text.length < bytes) text += `${PROSE}\n\n`;
  return text.slice(0, bytes);
}

describe("long questions", () => {
  it("a 64 KB question is answered by search, query and recursive_query; beyond the limit the refusal is INVALID_ARGUMENT", async () => {
    const { engine, root } = await builtFixture(TREE);
    const q = longReport(64 * 1024);
    const s = await engine.search({ project_path: root, query: q });
    expect(s.results.length).toBeGreaterThan(0);
    expect((await engine.query({ project_path: root, question: q })).citations.length).toBeGreaterThan(0);
    expect((await engine.recursive_query({ project_path: root, question: q })).citations.length).toBeGreaterThan(0);
    await expectCode(engine.search({ project_path: root, query: "x".repeat(QUESTION_MAX_CHARS + 1) }), "INVALID_ARGUMENT");
    await expectCode(engine.query({ project_path: root, question: "x".repeat(QUESTION_MAX_CHARS + 1) }), "INVALID_ARGUMENT");
    // The refusal names the limit, so a caller knows how much to send.
    await engine.search({ project_path: root, query: "x".repeat(QUESTION_MAX_CHARS + 1) }).catch((err) => expect(err.message).toContain(String(QUESTION_MAX_CHARS)));
  });

  it("a path or a stack-trace frame inside long prose ranks its file first", async () => {
    const { engine, root } = await builtFixture(TREE);
    const cases = [
      // A Go panic's frame, from an installation whose prefix is not the project's.
      ["panic: runtime error\n\ngoroutine 1 [running]:\nstrings.(*Replacer).Replace(...)\n\t/usr/lib/go-1.19/src/strings/replace.go:97 +0x3c\nmain.main()\n\t/home/me/app/main.go:12 +0x1d\n\n", "strings/replace.go"],
      // A path named in passing.
      ["\n\nThe odd part seems to be in container/ring/ring.go, not in our code.\n\n", "container/ring/ring.go"],
    ] as const;
    for (const [evidence, file] of cases) {
      const q = longReport(16 * 1024, evidence);
      const { results } = await engine.search({ project_path: root, query: q, group_by: "file" });
      expect(results[0].file_path, evidence).toBe(file);
    }
    // The frame's line names the definition around it.
    const { results } = await engine.search({ project_path: root, query: longReport(16 * 1024, cases[0][0]) });
    expect(results.slice(0, 3).map((r) => r.qualified_name)).toContain("Replacer.Replace");
  });

  it("group_by file gives distinct files, each with its best node first and its next best nodes", async () => {
    const { engine, root } = await builtFixture(TREE);
    const q = "How does the ring buffer move and link its elements?";
    const nodes = (await engine.search({ project_path: root, query: q, limit: 10 })).results;
    const files = (await engine.search({ project_path: root, query: q, limit: 10, group_by: "file" })).results;
    expect(new Set(nodes.map((r) => r.file_path)).size).toBeLessThan(10);
    expect(files).toHaveLength(10);
    expect(new Set(files.map((r) => r.file_path)).size).toBe(10);
    for (let i = 1; i < files.length; i++) expect(files[i].score).toBeLessThanOrEqual(files[i - 1].score);
    expect(files[0].file_path).toBe(nodes[0].file_path);
    for (const f of files) for (const a of f.also ?? []) expect(a.score).toBeLessThanOrEqual(f.score);
    expect(files[0].also?.length).toBeGreaterThan(0);
  });

  it("a 64 KB question and group_by reach the daemon through a real MCP client", async () => {
    const { root } = await builtFixture(TREE);
    const client = new Client({ name: "codemem-test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.resolve("dist/client/mcp.js"), root], stderr: "pipe" }));
    try {
      // A daemon answers while it still loads (after its start, and again after its catch-up build
      // swaps the reader), lexically and without identifier mentions, and says so in
      // freshness.warming. This test is about the long question: it judges the first warm answer.
      const q = longReport(64 * 1024, "\n\nIt fails in container/ring/ring.go.\n\n");
      let s = await client.callTool({ name: "codemem_search", arguments: { project_path: root, query: q, group_by: "file" } });
      for (let i = 0; i < 100 && (s.structuredContent as any)?.freshness?.warming?.length; i++) {
        await new Promise((r) => setTimeout(r, 200));
        s = await client.callTool({ name: "codemem_search", arguments: { project_path: root, query: q, group_by: "file" } });
      }
      expect((s.structuredContent as any)?.freshness?.warming ?? []).toEqual([]);
      expect(s.isError, JSON.stringify(s).slice(0, 400)).toBeFalsy();
      const top = (s.structuredContent as any).results.slice(0, 3).map((r: any) => `${r.file_path} ${r.score} ${r.via}`);
      expect((s.structuredContent as any).results[0].file_path, JSON.stringify(top)).toBe("container/ring/ring.go");
    } finally {
      await client.close();
      await stopDaemon(root);
    }
  }, 60_000);
});
