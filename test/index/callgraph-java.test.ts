import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { GraphResolver, resolveGraph } from "../../dist/daemon/index/resolve.js";

/** The resolved graph of a few Java files given inline (lines joined); `callees(s)` lists a definition's CALLS targets. */
async function graphOf(files: Record<string, string[]>) {
  const x = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, lines]) => x.extract(p, lines.join("\n") + "\n", languageForPath(p)!)));
  const { edges } = resolveGraph(extracts);
  const callees = (s: string) => edges.filter((e) => e.source === s && e.type === "calls").map((e) => e.target).sort();
  return { callees };
}

/** Two classes with methods of the same names: a call matched by name alone cannot tell them apart. */
const NODES = {
  "src/main/java/app/Node.java": ["package app;", "public class Node {", "  public Node parent() { return null; }", "  public String text() { return \"\"; }", "}"],
  "src/main/java/app/Token.java": ["package app;", "public class Token {", "  public Token parent() { return null; }", "  public String text() { return \"\"; }", "}"],
};
const N = "src/main/java/app/Node.java::Node";
const T = "src/main/java/app/Token.java::Token";

describe("Java receiver types", () => {
  it("typed locals, `var x = new C()`, parameters, catch and for-each variables, fields declared below, and return types type a receiver", async () => {
    const g = await graphOf({
      ...NODES,
      "src/main/java/app/Use.java": [
        "package app;",
        "public class Use {",
        "  void locals(Token t) {",
        "    Node n = make();",
        "    n.text();",
        "    var k = new Token();",
        "    k.parent().text();",
        "    t.text();",
        "    for (Node each : all) each.parent();",
        "    field.text();",
        "  }",
        "  Node make() { return null; }",
        "  private Token field;",
        "  private java.util.List<Node> all;",
        "}",
      ],
    });
    expect(g.callees("src/main/java/app/Use.java::Use.locals")).toEqual([`${N}.parent`, `${N}.text`, T, `${T}.parent`, `${T}.text`, "src/main/java/app/Use.java::Use.make"]);
  });

  it("a field inherited from a class in another file types a bare receiver; this.m() and super.m() reach the base; this(…) and super(…) are constructor calls", async () => {
    const g = await graphOf({
      ...NODES,
      "src/main/java/app/Base.java": ["package app;", "public class Base {", "  protected Node current;", "  public Base(int depth) {}", "  public void reset() {}", "}"],
      "src/main/java/app/Walker.java": [
        "package app;",
        "public class Walker extends Base {",
        "  public Walker() { this(1); }",
        "  public Walker(int depth) { super(depth); }",
        "  public void reset() { super.reset(); }",
        "  void step() {",
        "    current.parent();",
        "    this.reset();",
        "  }",
        "}",
      ],
    });
    const w = "src/main/java/app/Walker.java::Walker";
    expect(g.callees(`${w}.Walker`)).toEqual([w]);
    expect(g.callees(`${w}.Walker#2`)).toEqual(["src/main/java/app/Base.java::Base"]);
    expect(g.callees(`${w}.reset`)).toEqual(["src/main/java/app/Base.java::Base.reset"]);
    expect(g.callees(`${w}.step`)).toEqual([`${N}.parent`, `${w}.reset`]);
  });

  it("receivers of the JDK's types (java.lang's, imported ones) call nothing of the project, whatever their methods' names", async () => {
    const g = await graphOf({
      "src/main/java/app/Cart.java": ["package app;", "public class Cart {", "  public int charAt(int i) { return i; }", "  public void addItem(Object o) {}", "}"],
      "src/main/java/app/Use.java": [
        "package app;",
        "import java.util.List;",
        "public class Use {",
        "  void run(String s, List<Object> items, StringBuilder b) {",
        "    s.charAt(0);",
        "    items.addItem(s);",
        "    b.toString().charAt(1);",
        "  }",
        "}",
      ],
    });
    expect(g.callees("src/main/java/app/Use.java::Use.run")).toEqual([]);
  });

  it("builder chains across lines, nested types returned inside their class (`Builder`), `Outer.Inner` types and `((T) x)` casts", async () => {
    const g = await graphOf({
      ...NODES,
      "src/main/java/app/Spec.java": [
        "package app;",
        "public class Spec {",
        "  public static Builder builder() { return new Builder(); }",
        "  public static class Builder {",
        "    public Builder name(String n) { return this; }",
        "    public Spec build() { return null; }",
        "  }",
        "}",
      ],
      "src/main/java/app/Other.java": ["package app;", "public class Other {", "  public static class Builder {", "    public Other build() { return null; }", "  }", "}"],
      "src/main/java/app/Use.java": [
        "package app;",
        "public class Use {",
        "  void run(Object o, Spec.Builder b) {",
        "    Spec.builder()",
        "        .name(\"x\")",
        "        .build();",
        "    b.build();",
        "    ((Node) o).text();",
        "  }",
        "}",
      ],
    });
    const s = "src/main/java/app/Spec.java::Spec";
    expect(g.callees("src/main/java/app/Use.java::Use.run")).toEqual([`${N}.text`, `${s}.Builder.build`, `${s}.Builder.name`, `${s}.builder`]);
  });
});

describe("Java classes, imports and packages", () => {
  it("static calls, `import static a.b.C.m`, nested class imports, and a package's classes across its main and test trees", async () => {
    const g = await graphOf({
      "src/main/java/app/util/Check.java": ["package app.util;", "public class Check {", "  public static void notNull(Object o) {}", "  public static class Inner {", "    public void probe() {}", "  }", "}"],
      "src/main/java/app/util/Other.java": ["package app.util;", "public class Other {", "  public static void notNull(Object o) {}", "  public void probe() {}", "}"],
      "src/main/java/app/Parser.java": ["package app;", "public class Parser {", "  public static Parser html() { return new Parser(); }", "  public void probe() {}", "}"],
      "src/test/java/app/ParserTest.java": [
        "package app;",
        "import static app.util.Check.notNull;",
        "import app.util.Check.Inner;",
        "import app.util.Check;",
        "public class ParserTest {",
        "  void run(Inner in) {",
        "    notNull(in);",
        "    Check.notNull(in);",
        "    in.probe();",
        "    Parser.html().probe();",
        "  }",
        "}",
      ],
    });
    const c = "src/main/java/app/util/Check.java::Check";
    expect(g.callees("src/test/java/app/ParserTest.java::ParserTest.run")).toEqual(["src/main/java/app/Parser.java::Parser.html", "src/main/java/app/Parser.java::Parser.probe", `${c}.Inner.probe`, `${c}.notNull`]);
  });
});

describe("Java overloads", () => {
  const PARSE = [
    "package app;",
    "import java.io.File;",
    "import java.io.Writer;",
    "public class Jsoup {",
    "  public static Doc parse(String html) { return null; }",
    "  public static Doc parse(File file) { return null; }",
    "  public static Doc parse(String html, String base) { return null; }",
    "  public static Doc parse(String html, Parser p) { return null; }",
    "  public static void write(Appendable out) {}",
    "  public static void write(java.nio.file.Path path) {}",
    "  public static void add(Doc... docs) {}",
    "  public static void add(int at, Doc... docs) {}",
    "  public static void take(Node n) {}",
    "  public static void take(Element e) {}",
    "}",
  ];
  const J = "src/main/java/app/Jsoup.java::Jsoup";
  const TYPES = {
    "src/main/java/app/Doc.java": ["package app;", "public class Doc {}"],
    "src/main/java/app/Parser.java": ["package app;", "public class Parser {", "  public Parser settings(int s) { return this; }", "  public int settings() { return 0; }", "}"],
    "src/main/java/app/Node.java": ["package app;", "public class Node {}"],
    "src/main/java/app/Element.java": ["package app;", "public class Element extends Node {}"],
    "src/main/java/app/Text.java": ["package app;", "public class Text extends Node {}"],
  };

  it("a call links to the overloads of its argument count only (arguments of unknown type: a lambda's parameters), varargs taking any number from theirs", async () => {
    const g = await graphOf({
      ...TYPES,
      "src/main/java/app/Jsoup.java": PARSE,
      "src/main/java/app/Use.java": ["package app;", "public class Use {", "  void run() {", "    pairs.forEach((a, b) -> Jsoup.parse(a, b));", "    Jsoup.add();", "  }", "}"],
    });
    expect(g.callees("src/main/java/app/Use.java::Use.run")).toEqual([`${J}.add`, `${J}.parse#3`, `${J}.parse#4`]);
  });

  it("overloads of one count are told apart by their arguments: literals, declared types, JDK types' supertypes, the project's inheritance, a chained call's own overload", async () => {
    const g = await graphOf({
      ...TYPES,
      "src/main/java/app/Jsoup.java": PARSE,
      "src/main/java/app/Use.java": [
        "package app;",
        "import java.io.File;",
        "import java.io.Writer;",
        "public class Use {",
        "  void run(File f, Writer w, Text t, Element e, Doc d) {",
        "    Jsoup.parse(\"<p>\");",
        "    Jsoup.parse(f);",
        "    Jsoup.parse(\"<p>\", new Parser().settings(1));",
        "    Jsoup.write(w);",
        "    Jsoup.take(t);",
        "    Jsoup.take(e);",
        "    Jsoup.add(2, d);",
        "  }",
        "}",
      ],
    });
    expect(g.callees("src/main/java/app/Use.java::Use.run")).toEqual([
      `${J}.add#2`,
      `${J}.parse`,
      `${J}.parse#2`,
      `${J}.parse#4`,
      `${J}.take`,
      `${J}.take#2`,
      `${J}.write`,
      "src/main/java/app/Parser.java::Parser",
      "src/main/java/app/Parser.java::Parser.settings",
    ]);
  });
});

describe("Java typing, incrementally", () => {
  it("an update re-resolves the callers its overloads, bases, nested types, static imports and other source roots answer, as a full resolution would", async () => {
    const extractor = new Extractor();
    const files = new Map<string, string[]>([
      ["src/main/java/app/Doc.java", ["package app;", "public class Doc {}"]],
      ["src/main/java/app/Out.java", ["package app;", "public class Out {}"]],
      ["src/main/java/app/Jsoup.java", ["package app;", "public class Jsoup {", "  public static void parse(String s) {}", "  public static void write(Appendable a) {}", "  public static void write(java.nio.file.Path p) {}", "}"]],
      ["src/main/java/app/Spec.java", ["package app;", "public class Spec {", "  public static Builder builder() { return null; }", "  public static class Builder {", "    public Builder name(String n) { return this; }", "  }", "}"]],
      ["src/main/java/app/util/Check.java", ["package app.util;", "public class Check {", "  public static void notNull(Object o) {}", "}"]],
      [
        "src/test/java/app/UseTest.java",
        ["package app;", "import static app.util.Check.notNull;", "public class UseTest {", "  void run(Doc d, Out o) {", "    Jsoup.parse(d);", "    Jsoup.write(o);", "    Spec.builder().name(\"x\");", "    notNull(d);", "    Helper.go();", "  }", "}"],
      ],
    ]);
    const steps: [string, string[] | undefined][] = [
      ["src/main/java/app/Jsoup.java", ["package app;", "public class Jsoup {", "  public static void parse(String s) {}", "  public static void parse(Doc d) {}", "  public static void write(Appendable a) {}", "  public static void write(java.nio.file.Path p) {}", "}"]],
      ["src/main/java/app/Out.java", ["package app;", "public class Out implements Appendable {}"]],
      ["src/main/java/app/Helper.java", ["package app;", "public class Helper {", "  public static void go() {}", "}"]],
      ["src/main/java/app/util/Check.java", ["package app.util;", "public class Check {", "  public static void notEmpty(Object o) {}", "}"]],
      ["src/main/java/app/Spec.java", ["package app;", "public class Spec {", "  public static Builder builder() { return null; }", "  public static class Builder {", "    public Builder rename(String n) { return this; }", "  }", "}"]],
      ["src/main/java/app/Helper.java", undefined],
    ];
    const extract = (p: string) => extractor.extract(p, files.get(p)!.join("\n") + "\n", languageForPath(p)!);
    const resolver = new GraphResolver();
    resolver.update(await Promise.all([...files.keys()].map(extract)), []);
    const edgeKey = (e: { source: string; target: string; type: string }) => `${e.source}\u0000${e.target}`;
    const calls = () => new Set(resolver.edges().filter((e) => e.type === "calls").map(edgeKey));
    const seen: Set<string>[] = [calls()];
    for (const [p, lines] of steps) {
      if (lines) files.set(p, lines);
      else files.delete(p);
      resolver.update(lines ? [await extract(p)] : [], lines ? [] : [p]);
      const full = resolveGraph(await Promise.all([...files.keys()].map(extract)));
      expect(calls()).toEqual(new Set(full.edges.filter((e) => e.type === "calls").map(edgeKey)));
      seen.push(calls());
    }
    const run = "src/test/java/app/UseTest.java::UseTest.run";
    const has = (i: number, target: string) => seen[i].has(`${run}\u0000${target}`);
    // Each step moved a call: the new overload, the base outside the project, the class in the main tree, the static import, the nested type's method.
    expect([has(0, "src/main/java/app/Jsoup.java::Jsoup.parse#2"), has(1, "src/main/java/app/Jsoup.java::Jsoup.parse#2")]).toEqual([false, true]);
    expect([has(1, "src/main/java/app/Jsoup.java::Jsoup.write"), has(2, "src/main/java/app/Jsoup.java::Jsoup.write")]).toEqual([false, true]);
    expect([has(2, "src/main/java/app/Helper.java::Helper.go"), has(3, "src/main/java/app/Helper.java::Helper.go")]).toEqual([false, true]);
    expect([has(3, "src/main/java/app/util/Check.java::Check.notNull"), has(4, "src/main/java/app/util/Check.java::Check.notNull")]).toEqual([true, false]);
    expect([has(4, "src/main/java/app/Spec.java::Spec.Builder.name"), has(5, "src/main/java/app/Spec.java::Spec.Builder.name")]).toEqual([true, false]);
    expect(has(6, "src/main/java/app/Helper.java::Helper.go")).toBe(false);
  });
});
