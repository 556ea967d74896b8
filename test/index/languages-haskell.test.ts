import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Haskell on real code: the xml 1.3.14 library (Text.XML.Light and its six modules, from the orig
 * tarball of Debian's source package haskell-xml 1.3.14-11), with its licence; and a small project
 * over it for the import forms xml lacks (qualified, aliased, hiding).
 */
const FIXTURE = "haskell-xml";
const built = () => builtFixture(FIXTURE);
const L = "Text/XML/Light";

describe("Haskell (xml)", () => {
  it("extracts functions (signature and equations as one node), types, classes and instances with Haddock and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(7);
    expect(result.unsupported).toEqual([]);
    const findChildren = node(`${L}/Proc.hs::findChildren`);
    expect(findChildren).toMatchObject({ type: "function", signature: "findChildren :: QName -> Element -> [Element]", line_start: 39, line_end: 40, parent: `${L}/Proc.hs` });
    expect(findChildren.docstring).toBe("Find all immediate children with the given name.");
    // Four equations, a blank line and a where clause: one node from the signature on.
    expect(node(`${L}/Lexer.hs::tokens'`)).toMatchObject({ type: "function", signature: "tokens' :: LString -> [Token]", line_start: 75, line_end: 93 });
    expect(g.nodes.filter((n: any) => n.id.startsWith(`${L}/Lexer.hs::tokens'`))).toHaveLength(1);
    expect(node(`${L}/Types.hs::QName`)).toMatchObject({ type: "struct", signature: "data QName = QName { qName :: String, qURI :: Maybe String, qPrefix :: Maybe String }", line_start: 57, line_end: 61, docstring: "XML qualified names" });
    expect(node(`${L}/Types.hs::Line`)).toMatchObject({ type: "type", signature: "type Line = Integer", docstring: "A line is an Integer" });
    // A type class holds its methods; an instance's methods join the instance's type.
    expect(node(`${L}/Lexer.hs::XmlSource`)).toMatchObject({ type: "interface", signature: "class XmlSource s", line_start: 15, line_end: 16 });
    expect(node(`${L}/Lexer.hs::XmlSource.uncons`)).toMatchObject({ type: "method", signature: "uncons :: s -> Maybe (Char,s)", parent: `${L}/Lexer.hs::XmlSource` });
    expect(node(`${L}/Types.hs::QName.compare`)).toMatchObject({ type: "method", line_start: 68, line_end: 73, parent: `${L}/Types.hs::QName` });
    expect(node(`${L}.hs::Node`).docstring).toMatch(/^A smart element constructor which uses the type of its argument/);
    // Module header fields are no description; what follows them is.
    expect(node(`${L}/Cursor.hs`).docstring).toMatch(/^XML cursors for working XML content withing the context of\nan XML document\./);
  });

  it("resolves imports and calls across modules, and instances as bases", async () => {
    const { edge, g } = await built();
    // import A.B, import A.B (x): one edge per file and module; Data.List is no file of the project.
    expect(edge(`${L}/Input.hs`, `${L}/Output.hs`, "imports")).toBe(true);
    expect(edge(`${L}/Input.hs`, `${L}/Lexer.hs`, "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === `${L}/Input.hs` && e.type === "imports").length).toBe(4);
    // tokens through `import Text.XML.Light.Lexer`, tagEnd through `import Text.XML.Light.Output(tagEnd)`.
    expect(edge(`${L}/Input.hs::parseXML`, `${L}/Lexer.hs::tokens`)).toBe(true);
    expect(edge(`${L}/Input.hs::nodes`, `${L}/Output.hs::tagEnd`)).toBe(true);
    // `f $ x` and `f . g` apply f: ppTopElement = ppcTopElement defaultConfigPP; tokens = tokens' . linenumber 1.
    expect(edge(`${L}/Lexer.hs::tokens`, `${L}/Lexer.hs::tokens'`)).toBe(true);
    expect(edge(`${L}/Lexer.hs::tokens`, `${L}/Lexer.hs::linenumber`)).toBe(true);
    expect(edge(`${L}/Lexer.hs::Scanner`, `${L}/Lexer.hs::XmlSource`, "inherits")).toBe(true);
  });

  it("resolves qualified imports by alias only and hiding imports; instances of applied types", async () => {
    const fx = path.resolve("test/fixtures/trees", FIXTURE, L);
    const files: Record<string, string> = {};
    for (const f of ["Proc.hs", "Types.hs", "Output.hs"]) files[`src/${L}/${f}`] = fs.readFileSync(path.join(fx, f), "utf8");
    files["app/Local.hs"] = [
      "module Local where",
      "",
      "findChildren :: Int -> [Int]",
      "findChildren n = [n]",
      "",
      "data Pair a b = Pair a b",
      "",
      "instance Semigroup (Pair a b) where",
      "  Pair a b <> Pair _ _ = Pair a b",
      "",
      "swap :: Pair a b -> Pair b a",
      "swap (Pair a b) = Pair b a",
      "-- ^ The pair the other way round.",
      "",
    ].join("\n");
    files["app/Main.hs"] = [
      "module Main where",
      "import qualified Text.XML.Light.Proc as P",
      "import qualified Text.XML.Light.Output",
      "import Text.XML.Light.Types hiding (blank_cdata)",
      "import Local",
      "",
      "-- | The children of a blank element, shown.",
      "shown :: [String]",
      "shown = Text.XML.Light.Output.showElement blank_element : map show (P.findChildren (QName \"item\" Nothing Nothing) blank_element)",
      "",
      "main = print (findChildren 1) >> mapM_ putStrLn shown",
      "",
    ].join("\n");
    const { edge, node, g } = await builtProject(files);
    expect(node("app/Main.hs::shown")).toMatchObject({ signature: "shown :: [String]", docstring: "The children of a blank element, shown.", line_start: 8, line_end: 9 });
    expect(edge("app/Main.hs::shown", `src/${L}/Proc.hs::findChildren`)).toBe(true);
    expect(edge("app/Main.hs::shown", `src/${L}/Output.hs::showElement`)).toBe(true);
    // A constructor applied is a call of its type (through the import hiding one name).
    expect(edge("app/Main.hs::shown", `src/${L}/Types.hs::QName`)).toBe(true);
    // An instance of a type applied to arguments joins the type.
    expect(node("app/Local.hs::Pair.<>")).toMatchObject({ type: "method", parent: "app/Local.hs::Pair", line_start: 9 });
    // A `-- ^` Haddock after the last equation documents the function.
    expect(node("app/Local.hs::swap")).toMatchObject({ signature: "swap :: Pair a b -> Pair b a", docstring: "The pair the other way round.", line_start: 11, line_end: 12 });
    // A qualified import binds no bare names: findChildren is Local's.
    expect(edge("app/Main.hs::main", "app/Local.hs::findChildren")).toBe(true);
    expect(edge("app/Main.hs::main", `src/${L}/Proc.hs::findChildren`)).toBe(false);
    expect(g.edges.filter((e: any) => e.source === "app/Main.hs" && e.type === "imports").map((e: any) => e.target).sort()).toEqual([
      "app/Local.hs",
      `src/${L}/Output.hs`,
      `src/${L}/Proc.hs`,
      `src/${L}/Types.hs`,
    ]);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "move the cursor to the first child of the current element", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain(`${L}/Cursor.hs`);
  });
});
