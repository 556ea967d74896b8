import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import type { LanguageSpec, ProjectView } from "./language.js";

/**
 * Zig. A file is itself a struct: its top-level functions are its members (`f` of `x.zig` is
 * `x.f()` after `const x = @import("x.zig")`). Containers assigned to a name (`const Foo = struct
 * {…}`, `union`, `opaque`: structs; `enum`: enums) hold their functions as methods (`Foo.init`),
 * nested ones qualified (`Foo.Inner.g`). A function returning `type` (`fn ArrayList(comptime T:
 * type) type { return struct {…} }`), Zig's generic type, is a class holding the functions of the
 * struct it returns. `test "…"` blocks are no nodes, nor is anything declared in them: their calls
 * count for the file.
 */
const QUERY = `
(variable_declaration . (identifier) @name [(struct_declaration) (union_declaration) (opaque_declaration)]) @def.struct
(variable_declaration . (identifier) @name (enum_declaration)) @def.enum
(function_declaration name: (identifier) @name type: (builtin_type) @ret (#eq? @ret "type")) @def.class
(function_declaration name: (identifier) @name type: (_) @ret (#not-eq? @ret "type")) @def.function
(test_declaration "test" @name) @def.local
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression object: (_) @call.receiver member: (identifier) @call.name)) @call
`;

/**
 * Every `@import("…")`: `const x = @import("x.zig")` binds x to the file, `const Foo =
 * @import("foo.zig").Foo` binds Foo to its name in it; anything else imports it unbound.
 */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const b of root.descendantsOfType("builtin_function")) {
    if (!b || b.namedChildren[0]?.text !== "@import") continue;
    const arg = b.namedChildren[1]?.namedChildren[0];
    const module = arg?.type === "string" ? arg.namedChildren.find((c) => c?.type === "string_content")?.text : undefined;
    if (!module) continue;
    const line = b.startPosition.row + 1;
    const member = b.parent?.type === "field_expression" && b.parent.childForFieldName("object")?.equals(b) ? b.parent : undefined;
    const decl = (member ?? b).parent;
    const named = decl?.type === "variable_declaration" && decl.namedChildren[0]?.type === "identifier" && decl.lastNamedChild?.equals(member ?? b);
    const bound = named && decl.namedChildren[0]!.text !== "_" ? decl.namedChildren[0]!.text : undefined; // `_ = @import(…)` binds nothing
    const name = member?.childForFieldName("member")?.text;
    if (bound && name) out.push({ module, names: [{ name, alias: bound }], line });
    else out.push({ module, names: [], alias: member ? undefined : bound, line });
  }
  return out;
}

/** `///` doc comments (not `////` ones) directly above a declaration, markers stripped. */
function docOf(def: TSNode): string {
  const lines: string[] = [];
  let prev = def.previousNamedSibling;
  let expectRow = def.startPosition.row;
  while (prev?.type === "comment" && /^\/\/\/(?!\/)/.test(prev.text) && prev.endPosition.row >= expectRow - 1) {
    lines.unshift(prev.text.replace(/^\/\/\/ ?/, "").trimEnd());
    expectRow = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  return lines.join("\n").trim();
}

/** The file's `//!` top-level doc comments. */
function moduleDoc(root: TSNode): string {
  const lines: string[] = [];
  for (const c of root.namedChildren) {
    if (c?.type !== "comment") break;
    if (c.text.startsWith("//!")) lines.push(c.text.replace(/^\/\/! ?/, "").trimEnd());
  }
  return lines.join("\n").trim();
}

/** A relative `@import("a/b.zig")` is that file beside the importer; a package (`std`, `builtin`) names none in the project. */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  if (!spec.endsWith(".zig")) return [];
  const file = path.posix.normalize(path.posix.join(path.posix.dirname(from.path), spec));
  return !file.startsWith("../") && project.has(file) ? [file] : [];
}

export const zig: LanguageSpec = {
  id: "zig",
  extensions: [".zig"],
  grammar: "@tree-sitter-grammars/tree-sitter-zig/tree-sitter-zig.wasm",
  query: QUERY,
  docstring: (def) => docOf(def),
  bases: () => [],
  imports: importsOf,
  moduleDoc,
  // `Self` is, by convention, `const Self = @This()`: the enclosing container (or file).
  selfNames: ["self", "Self"],
  // A container's declarations are in scope inside it: a bare `f()` in a method may be its sibling.
  implicitSelf: true,
  fileStruct: true,
  resolveImport,
};
