import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { cleanComment, LICENCE, nearestTo, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Lua. Functions in every form: `function f`, `local function f`, `local f = function`, and the
 * fields of a table, `function M.f`, `function M:f` and `M.f = function`, which are methods of `M`
 * (qualified `M.f`; `M:f` is `M.f` too). The module table, the local a file returns (`local M = {}`
 * … `return M`), is a class node and the file's package: `mod.f()` after `local mod = require("x")`
 * finds `f` among the methods of x's module table. Functions nested in a function are not nodes
 * (their calls count for the enclosing one).
 */
const QUERY = `
(function_declaration name: (identifier) @name) @def.function
(function_declaration name: (dot_index_expression field: (identifier) @name)) @def.method
(function_declaration name: (method_index_expression method: (identifier) @name)) @def.method
(variable_declaration (assignment_statement (variable_list . name: (identifier) @name .) (expression_list . value: (function_definition) .))) @def.function
(assignment_statement (variable_list . name: (dot_index_expression field: (identifier) @name) .) (expression_list . value: (function_definition) .)) @def.method
(chunk (variable_declaration (assignment_statement (variable_list . name: (identifier) @name))) @def.class (return_statement (expression_list . (identifier) @ret .)) (#eq? @name @ret))
(function_call name: (identifier) @call.name) @call
(function_call name: (dot_index_expression table: (_) @call.receiver field: (identifier) @call.name)) @call
(function_call name: (method_index_expression table: (_) @call.receiver method: (identifier) @call.name)) @call
`;

/** The table a field function belongs to: `M` of `function M.f`, `function M:f`, `M.f = function`. */
function receiverType(def: TSNode): string | undefined {
  const name =
    def.type === "function_declaration" ? def.childForFieldName("name") : def.type === "assignment_statement" ? def.namedChildren[0]?.namedChildren[0] : undefined;
  if (name?.type !== "dot_index_expression" && name?.type !== "method_index_expression") return undefined;
  return name.childForFieldName("table")?.text;
}

/**
 * `require("a.b")`, `require "a.b"`, `require('a.b')` anywhere in the file; `local x = require(...)`
 * binds x to the module, and a file-level `local f = x.f` binds f to its member.
 */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const call of root.descendantsOfType("function_call")) {
    if (!call || call.childForFieldName("name")?.text !== "require") continue;
    const arg = call.childForFieldName("arguments")?.namedChildren[0];
    if (arg?.type !== "string") continue;
    const module = arg.namedChildren.find((c) => c?.type === "string_content")?.text ?? "";
    if (!module) continue;
    let alias: string | undefined;
    const list = call.parent;
    const assign = list?.type === "expression_list" ? list.parent : undefined;
    if (assign?.type === "assignment_statement" && list!.namedChildren.length === 1) {
      const vars = assign.namedChildren[0];
      if (vars?.type === "variable_list" && vars.namedChildren.length === 1 && vars.namedChildren[0]?.type === "identifier") alias = vars.namedChildren[0].text;
    }
    out.push({ module, names: [], alias, line: call.startPosition.row + 1 });
  }
  // `local assert_string, raise = utils.assert_string, utils.raise` at file level, utils a required module: names of it.
  const modules = new Map(out.flatMap((i) => (i.alias ? [[i.alias, i.module] as const] : [])));
  for (const decl of root.namedChildren) {
    const assign = decl?.type === "variable_declaration" ? decl.namedChildren[0] : undefined;
    if (assign?.type !== "assignment_statement") continue;
    const vars = assign.namedChildren[0]?.namedChildren ?? [];
    const values = assign.namedChildren[1]?.namedChildren ?? [];
    vars.forEach((v, i) => {
      const val = values[i];
      if (v?.type !== "identifier" || val?.type !== "dot_index_expression") return;
      const module = modules.get(val.childForFieldName("table")?.text ?? "");
      const field = val.childForFieldName("field");
      if (module && field?.type === "identifier") out.push({ module, names: [{ name: field.text, alias: v.text }], line: val.startPosition.row + 1 });
    });
  }
  return out;
}

/** `--`, `---` and `--[[ … ]]` markers stripped; LDoc tags kept. */
function cleanLua(text: string): string {
  return cleanComment(
    text
      .split("\n")
      .map((l) => l.replace(/^\s*--\[=*\[-*\s?/, "").replace(/\s*-*\]=*\]\s*$/, "").replace(/^\s*--+\s?/, ""))
      .join("\n"),
  );
}

/** The comment lines directly above a definition (a local's comment sits above its declaration). */
function docOf(def: TSNode): string {
  const holder = def.parent?.type === "variable_declaration" ? def.parent : def;
  const lines: string[] = [];
  let prev = holder.previousNamedSibling;
  let expectRow = holder.startPosition.row;
  while (prev?.type === "comment" && prev.endPosition.row >= expectRow - 1) {
    lines.unshift(prev.text);
    expectRow = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  return cleanLua(lines.join("\n"));
}

/** The file's first comment block that is no licence and not glued to the definition after it. */
function moduleDoc(root: TSNode): string {
  let c: TSNode | null | undefined = root.namedChildren[0];
  while (c?.type === "comment") {
    const lines = [c.text];
    let last: TSNode = c;
    while (last.nextNamedSibling?.type === "comment" && last.nextNamedSibling.startPosition.row === last.endPosition.row + 1) {
      last = last.nextNamedSibling;
      lines.push(last.text);
    }
    const text = lines.join("\n");
    const next: TSNode | null = last.nextNamedSibling;
    if (!LICENCE.test(text) && !/^#!/.test(text)) return next && next.type !== "comment" && next.startPosition.row <= last.endPosition.row + 1 ? "" : cleanLua(text);
    c = next;
  }
  return "";
}

/** The module table: the local the file returns at its end (`return M`). */
function packageName(root: TSNode): string | undefined {
  const ret = root.namedChildren.find((c) => c?.type === "return_statement");
  const e = ret?.namedChildren[0]?.namedChildren;
  return e?.length === 1 && e[0]?.type === "identifier" ? e[0].text : undefined;
}

/** `a.b` is a/b.lua or a/b/init.lua: from the project root, else the nearest by path suffix. */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  if (!/^[A-Za-z0-9_.-]+$/.test(spec) || spec.startsWith(".") || spec.endsWith(".")) return [];
  const base = spec.split(".").join("/");
  for (const f of [`${base}.lua`, `${base}/init.lua`]) if (project.has(f)) return [f];
  for (const f of [`${base}.lua`, `${base}/init.lua`]) {
    const hits = project.filesEndingWith(f);
    if (hits.length) return nearestTo(from.path, hits);
  }
  return [];
}

export const lua: LanguageSpec = {
  id: "lua",
  extensions: [".lua"],
  interpreters: ["lua", "luajit"],
  grammar: "@tree-sitter-grammars/tree-sitter-lua/tree-sitter-lua.wasm",
  query: QUERY,
  docstring: (def) => docOf(def),
  bases: () => [],
  imports: importsOf,
  receiverType,
  packageName,
  moduleDoc,
  selfNames: ["self"],
  moduleTable: true,
  resolveImport,
};
