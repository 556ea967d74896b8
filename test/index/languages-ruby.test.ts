import { describe, expect, it } from "vitest";
import { builtFixture } from "./fixture.js";

/**
 * Ruby on real code: seven files of Mustermann 3.0.0 (lib/mustermann.rb and six of lib/mustermann/),
 * from Debian's ruby-mustermann 3.0.0-2, with its copyright file.
 */
const built = () => builtFixture("ruby-mustermann");

describe("Ruby (Mustermann)", () => {
  it("extracts modules, classes and methods with qualified names, signatures, doc comments and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(7);
    expect(result.unsupported).toEqual([]);
    // A module holds methods (`def self.new`), so it is a container: Mustermann.new, Mustermann.Pattern.match.
    expect(node("lib/mustermann.rb::Mustermann")).toMatchObject({ type: "class", signature: "module Mustermann", docstring: expect.stringMatching(/^Namespace and main entry point for the Mustermann library/) });
    expect(node("lib/mustermann.rb::Mustermann.new")).toMatchObject({ type: "method", name: "new", signature: "def self.new(*input, type: DEFAULT_TYPE, operator: :|, **options)", parent: "lib/mustermann.rb::Mustermann", line_start: 62, line_end: 76 });
    expect(node("lib/mustermann.rb::Mustermann.new").docstring).toMatch(/^Creates a new pattern based on input/);
    expect(node("lib/mustermann/pattern.rb::Mustermann.Pattern.peek_size")).toMatchObject({ qualified_name: "Mustermann.Pattern.peek_size", signature: "def peek_size(string)", parent: "lib/mustermann/pattern.rb::Mustermann.Pattern", line_start: 139, line_end: 142 });
    expect(node("lib/mustermann/identity.rb::Mustermann.Identity")).toMatchObject({ signature: "class Identity < Pattern", docstring: expect.stringMatching(/^Matches strings that are identical to the pattern/) });
    // Operator methods are definitions too.
    expect(node("lib/mustermann/identity.rb::Mustermann.Identity.===")).toMatchObject({ type: "method", signature: "def ===(string)" });
    expect(g.nodes.filter((n: any) => n.language === "ruby" && n.type === "method").length).toBeGreaterThan(50);
  });

  it("resolves require to files, superclasses, inherited and constructor calls across files", async () => {
    const { edge } = await built();
    expect(edge("lib/mustermann.rb", "lib/mustermann/pattern.rb", "imports")).toBe(true); // require 'mustermann/pattern' from lib/
    expect(edge("lib/mustermann/pattern.rb", "lib/mustermann/simple_match.rb", "imports")).toBe(true);
    expect(edge("lib/mustermann/identity.rb::Mustermann.Identity", "lib/mustermann/pattern.rb::Mustermann.Pattern", "inherits")).toBe(true);
    // unescape(...) inside Identity is Pattern#unescape (its superclass, another file).
    expect(edge("lib/mustermann/identity.rb::Mustermann.Identity.===", "lib/mustermann/pattern.rb::Mustermann.Pattern.unescape")).toBe(true);
    // SimpleMatch.new(...) constructs the class; EqualityMap.new calls its own `def self.new`.
    expect(edge("lib/mustermann/pattern.rb::Mustermann.Pattern.match", "lib/mustermann/simple_match.rb::Mustermann.SimpleMatch")).toBe(true);
    expect(edge("lib/mustermann/pattern.rb::Mustermann.Pattern.new", "lib/mustermann/equality_map.rb::Mustermann.EqualityMap.new")).toBe(true);
    // key.hash on an untyped value is no call of Pattern#hash.
    expect(edge("lib/mustermann/equality_map.rb::Mustermann.EqualityMap.fetch", "lib/mustermann/pattern.rb::Mustermann.Pattern.hash")).toBe(false);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "match a pattern against the beginning of a string", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain("lib/mustermann/pattern.rb");
  });
});
