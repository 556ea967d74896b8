import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";
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

/** Scala 3's indentation syntax and given instances (written for this test). */
const SCALA3 = `package demo.json

trait Reader[T]:
  def read(s: String): T

object Readers:
  /** Reads a leaf through its parent type's reader. */
  inline given superTypeReader[T, V >: T](using r: Reader[V]): Reader[T] =
    new Reader[T] { def read(s: String): T = r.read(s).asInstanceOf[T] }

  given intReader: Reader[Int] with
    def read(s: String): Int = s.toInt

  given Reader[Boolean] = (s: String) => s == "true"

  def parse[T](s: String)(using r: Reader[T]): T = r.read(s)
`;

describe("Scala 3", () => {
  it("a named given is a definition (a class when it has members), and an indented body ends on its own last line", async () => {
    const ex = await new Extractor().extract("src/Readers.scala", SCALA3, languageForPath("src/Readers.scala")!);
    const { nodes } = resolveGraph([ex]);
    const node = (q: string) => nodes.find((n) => n.qualified_name === q);
    expect(node("Readers.superTypeReader")).toMatchObject({ type: "method", line_start: 8, line_end: 9, docstring: "Reads a leaf through its parent type's reader." });
    expect(node("Readers.intReader")).toMatchObject({ type: "class", line_start: 11, line_end: 12 });
    expect(node("Readers.intReader.read")).toMatchObject({ type: "method", parent: "src/Readers.scala::Readers.intReader" });
    // The block of `trait Reader[T]:` ended where `object Readers` starts.
    expect(node("Reader")).toMatchObject({ line_start: 3, line_end: 4 });
    expect(node("Readers")).toMatchObject({ line_start: 6, line_end: 16 });
    // An anonymous given has no name to be found by.
    expect(nodes.filter((n) => n.file_path === "src/Readers.scala" && n.type !== "module").map((n) => n.qualified_name).sort()).toEqual(
      ["Reader", "Reader.read", "Readers", "Readers.intReader", "Readers.intReader.read", "Readers.parse", "Readers.superTypeReader"],
    );
  });
});

/** Type-class instances as upickle's Readers writes them (written for this test). */
const INSTANCES = `package demo.json

trait Readers {
  implicit val StringReader: Reader[String] = new SimpleReader[String] {
    override def visitString(s: CharSequence, index: Int) = s.toString
  }
  implicit val IntReader: Reader[Int] = new NumericReader[Int] {
    override def visitString(s: CharSequence, index: Int) = s.toString.toInt
    override def visitInt32(d: Int, index: Int) = d
  }
  val plain = new StringBuilder(16)
}
`;

describe("Scala anonymous classes", () => {
  it("a val holding an anonymous class is a class named by it, extending what it creates, with its defs as members", async () => {
    const ex = await new Extractor().extract("src/Readers.scala", INSTANCES, languageForPath("src/Readers.scala")!);
    const { nodes } = resolveGraph([ex]);
    const defs = nodes.filter((n) => n.type !== "module").map((n) => n.qualified_name);
    // Before, their defs were the trait's: Readers.visitString twice, Readers.visitInt32.
    expect(defs).toEqual(["Readers", "Readers.StringReader", "Readers.StringReader.visitString", "Readers.IntReader", "Readers.IntReader.visitString", "Readers.IntReader.visitInt32"]);
    expect(nodes.find((n) => n.qualified_name === "Readers.IntReader")).toMatchObject({ type: "class", line_start: 7, line_end: 10, parent: "src/Readers.scala::Readers" });
    expect(ex.defs.find((d) => d.qualifiedName === "Readers.IntReader")?.bases).toEqual(["NumericReader"]);
  });
});
