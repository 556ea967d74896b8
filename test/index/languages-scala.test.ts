import { describe, expect, it } from "vitest";
import { builtFixture } from "./fixture.js";

/**
 * Scala on real code: scala.sys.process of the Scala 2.11.12 standard library (the orig tarball of
 * Debian's source package scala, src/library/scala/sys/process, 8 files), with its licence.
 */
const built = () => builtFixture("scala-sys-process");

const SRC = "src/library/scala/sys/process";

describe("Scala (scala.sys.process)", () => {
  it("extracts classes, traits, objects, companions and defs with signatures, Scaladoc, packages and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(8);
    expect(result.unsupported).toEqual([]);
    expect(node(`${SRC}/ProcessIO.scala::ProcessIO`)).toMatchObject({ type: "class", line_start: 49, line_end: 68 });
    const withInput = node(`${SRC}/ProcessIO.scala::ProcessIO.withInput`);
    expect(withInput).toMatchObject({ type: "method", signature: "def withInput(write: OutputStream => Unit): ProcessIO", line_start: 58, line_end: 58 });
    expect(withInput.docstring).toMatch(/^Creates a new `ProcessIO` with a different handler for the process input\./);
    expect(node(`${SRC}/Process.scala::Process`)).toMatchObject({ type: "interface", signature: "trait Process", line_start: 33, line_end: 38 });
    // The object beside the trait is a node of its own; an object is a class.
    expect(node(`${SRC}/Process.scala::Process#2`)).toMatchObject({ type: "class", signature: "object Process extends ProcessImpl with ProcessCreation" });
    // Overloads apart; a def's `= body` is no part of its signature.
    expect(node(`${SRC}/Process.scala::ProcessCreation.apply#2`)).toMatchObject({ signature: "def apply(command: Seq[String]): ProcessBuilder" });
    // A companion object's defs join the trait: ProcessLogger.apply.
    expect(node(`${SRC}/ProcessLogger.scala::ProcessLogger.apply`)).toMatchObject({ type: "method", parent: `${SRC}/ProcessLogger.scala::ProcessLogger`, line_start: 81 });
    expect(node(`${SRC}/BasicIO.scala::BasicIO.Uncloseable`)).toMatchObject({ type: "interface", qualified_name: "BasicIO.Uncloseable" });
    expect(g.nodes.filter((n: any) => n.language === "scala" && n.type === "method").length).toBeGreaterThan(100);
  });

  it("resolves object imports, constructor, member and inherited calls across files", async () => {
    const { edge, g } = await built();
    // import BasicIO._ and import Process._: one edge each, to the object's file.
    expect(edge(`${SRC}/ProcessBuilderImpl.scala`, `${SRC}/BasicIO.scala`, "imports")).toBe(true);
    expect(edge(`${SRC}/ProcessBuilderImpl.scala`, `${SRC}/Process.scala`, "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === `${SRC}/ProcessBuilderImpl.scala` && e.type === "imports").length).toBe(2);
    // BasicIO.transferFully(...) from another file; ProcessIO(...) constructs the class of another file.
    expect(edge(`${SRC}/ProcessImpl.scala::ProcessImpl.PipeThread.runloop`, `${SRC}/BasicIO.scala::BasicIO.transferFully`)).toBe(true);
    expect(edge(`${SRC}/BasicIO.scala::BasicIO.apply`, `${SRC}/ProcessIO.scala::ProcessIO`)).toBe(true);
    expect(edge(`${SRC}/ProcessBuilderImpl.scala::ProcessBuilderImpl.Simple`, `${SRC}/ProcessBuilderImpl.scala::ProcessBuilderImpl.AbstractBuilder`, "inherits")).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "copy all bytes from an input stream to an output stream", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(`${SRC}/BasicIO.scala`);
  });
});
