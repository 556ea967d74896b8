import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Lua on real code: 9 modules of Penlight 1.13.1 (Debian's lua-penlight 1.13.1-3, /usr/share/lua/5.4/pl:
 * path, dir, file, utils, compat, types, class, List, tablex), with Debian's copyright file.
 */
const built = () => builtFixture("lua-penlight");


describe("Lua (Penlight)", () => {
  it("extracts module tables, functions and methods in every form with qualified names, signatures, LDoc and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(9);
    expect(result.unsupported).toEqual([]);
    // The returned local is the module table: a node, and the parent of its functions.
    expect(node("pl/path.lua::path")).toMatchObject({ type: "class", signature: "local path = {}", line_start: 33, line_end: 33 });
    expect(node("pl/path.lua").docstring).toMatch(/^Path manipulation and file queries\./);
    const splitext = node("pl/path.lua::path.splitext");
    expect(splitext).toMatchObject({ type: "method", qualified_name: "path.splitext", signature: "function path.splitext(P)", line_start: 277, line_end: 293, parent: "pl/path.lua::path" });
    expect(splitext.docstring).toMatch(/^given a path, return the root part and the extension part\./);
    // M:f is M.f; M.f = function(...) is a method too; local function f is a function of the file.
    expect(node("pl/List.lua::List.append")).toMatchObject({ type: "method", signature: "function List:append(i)", line_start: 91, line_end: 94, parent: "pl/List.lua::List" });
    expect(node("pl/path.lua::path.mkdir")).toMatchObject({ type: "method", signature: "path.mkdir = function(d)", line_start: 55, parent: "pl/path.lua::path" });
    expect(node("pl/path.lua::path.mkdir").docstring).toMatch(/^Creates a directory\./);
    expect(node("pl/List.lua::makelist")).toMatchObject({ type: "function", signature: "local function makelist (t,obj)", line_start: 41, line_end: 47, parent: "pl/List.lua" });
    expect(g.nodes.filter((n: any) => n.language === "lua" && n.type === "method").length).toBeGreaterThan(150);
  });

  it("resolves requires, module members, self and local calls across files", async () => {
    const { edge, g } = await built();
    // require 'pl.path' and require 'pl.utils': one edge each (the local f = utils.f bindings add none).
    expect(edge("pl/dir.lua", "pl/path.lua", "imports")).toBe(true);
    expect(edge("pl/dir.lua", "pl/utils.lua", "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "pl/path.lua" && e.type === "imports").map((e: any) => e.target)).toEqual(["pl/utils.lua"]);
    // path.normcase(...) with local path = require 'pl.path'; assert_string(...) with local assert_string = utils.assert_string.
    expect(edge("pl/dir.lua::dir.getfiles", "pl/path.lua::path.normcase")).toBe(true);
    expect(edge("pl/path.lua::path.splitext", "pl/utils.lua::utils.assert_string")).toBe(true);
    // self:insert(...) in List:put; path.abspath(...) in its own module; a bare call of a local function.
    expect(edge("pl/List.lua::List.put", "pl/List.lua::List.insert")).toBe(true);
    expect(edge("pl/path.lua::path.relpath", "pl/path.lua::path.abspath")).toBe(true);
    expect(edge("pl/List.lua::List.clone", "pl/List.lua::makelist")).toBe(true);
  });

  it("reads every form of function and require in a small project", async () => {
    const src = [
      "--- Greetings.",
      "local M = {}",
      'local fmt = require("util.fmt")',
      "",
      "-- Shouts a name.",
      "local shout = function(s) return fmt.upper(s) end",
      "",
      "function M:greet(name)",
      "  return self:wrap(shout(name))",
      "end",
      "",
      "M.wrap = function(self, s) return '<' .. s .. '>' end",
      "",
      "return M",
      "",
    ].join("\n");
    const fmt = "local fmt = {}\nfunction fmt.upper(s) return s:upper() end\nreturn fmt\n";
    const { g, node, edge } = await builtProject({ "greet.lua": src, "util/fmt/init.lua": fmt, "other.lua": "require 'greet'\nrequire('greet')\n" });
    expect(node("greet.lua::shout")).toMatchObject({ type: "function", signature: "local shout = function(s)", docstring: "Shouts a name.", line_start: 6 });
    expect(node("greet.lua::M.greet")).toMatchObject({ type: "method", signature: "function M:greet(name)", parent: "greet.lua::M" });
    expect(edge("greet.lua", "util/fmt/init.lua", "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "other.lua" && e.type === "imports").length).toBe(1);
    expect(edge("greet.lua::shout", "util/fmt/init.lua::fmt.upper")).toBe(true);
    expect(edge("greet.lua::M.greet", "greet.lua::M.wrap")).toBe(true);
    expect(edge("greet.lua::M.greet", "greet.lua::shout")).toBe(true);
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "split a file name into its root and extension", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain("pl/path.lua");
  });
});
