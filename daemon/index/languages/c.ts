import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { withoutDeclarationMacros } from "./c-macros.js";
import { bareTypeName, fileComment, leadingComment, nearestTo, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * A function's declarator around its name: plain, returning a pointer (one or two levels) or (C++) a
 * reference; `also`, more declarators of the same definition kind in the same alternation.
 */
function declarators(name: string, reference = true, also: string[] = []): string {
  const fn = `(function_declarator declarator: ${name})`;
  return `[${fn} (pointer_declarator declarator: ${fn}) (pointer_declarator declarator: (pointer_declarator declarator: ${fn}))${reference ? ` (reference_declarator ${fn})` : ""}${also.map((a) => ` ${a}`).join("")}]`;
}

const C_SHARED = `
(struct_specifier name: (type_identifier) @name body: (_)) @def.struct
(union_specifier name: (type_identifier) @name body: (_)) @def.struct
(enum_specifier name: (type_identifier) @name body: (_)) @def.enum
(type_definition type: [(struct_specifier body: (_)) (union_specifier body: (_)) (enum_specifier body: (_))] declarator: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.function
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression argument: (_) @call.receiver field: (field_identifier) @call.name)) @call
(preproc_include) @import
(preproc_call) @import
`;

/** A prototype: a function declared here and defined elsewhere (`@decl` on its name). */
const PROTOTYPE = `(declaration declarator: ${declarators("(identifier) @decl", false)})`;

const C_QUERY = `
(function_definition declarator: ${declarators("(identifier) @name", false)}) @def.function
${PROTOTYPE}
${C_SHARED}`;

const MEMBER_NAME = "[(identifier) (destructor_name) (operator_name)]";
/** MEMBER_NAME's alternatives each captured, to stand among others in one alternation (a nested one lost all but its first). */
const MEMBER_NAMES = "(identifier) @name (destructor_name) @name (operator_name) @name";

/**
 * A definition's declarators, one pattern per kind: the C++ grammar makes each pattern costly to
 * compile (every parse worker and build thread compiles the query once), and the six patterns these
 * were took 297 of the query's 438 ms, the two 174 (same captures on leveldb, coreutils and the test trees).
 */
const CPP_QUERY = `
(function_definition declarator: ${declarators(`[(identifier) (field_identifier) (operator_name) (destructor_name)] @name`, true, ["(operator_cast) @name"])}) @def.function
(function_definition declarator: ${declarators(`(qualified_identifier name: [${MEMBER_NAMES} (qualified_identifier name: ${MEMBER_NAME} @name)])`, true, [`(qualified_identifier name: [(operator_cast) @name (qualified_identifier name: (operator_cast) @name)])`])}) @def.method
(class_specifier name: (type_identifier) @name body: (_)) @def.class
(namespace_definition name: [(namespace_identifier) (nested_namespace_specifier)] @name) @def.scope
(call_expression function: (qualified_identifier scope: (_) @call.receiver name: (identifier) @call.name)) @call
(call_expression function: (template_function name: (identifier) @call.name)) @call
(new_expression type: (type_identifier) @call.name) @call
${PROTOTYPE}
${C_SHARED}`;

/** The comment above a definition, or above the template or declaration holding it. */
function docstring(def: TSNode): string {
  let holder = def;
  while (holder.parent && (holder.parent.type === "template_declaration" || (holder.parent.type === "declaration" && holder.type !== "function_definition"))) holder = holder.parent;
  return leadingComment(holder);
}

/**
 * `#include "x.h"` and `#include <x.h>`, wherever they stand (inside `#ifdef` too); the system form
 * keeps its brackets. Objective-C's `#import` is no directive of these grammars: it parses as a
 * `preproc_call` whose argument is the path. The query captures both (`@import`).
 */
function importsOf(_root: TSNode, captured: TSNode[]): RawImport[] {
  const out: RawImport[] = [];
  for (const n of captured) {
    if (n.type === "preproc_include") {
      const p = n.childForFieldName("path");
      if (!p) continue;
      const module = p.type === "system_lib_string" ? p.text : p.text.replace(/^"|"$/g, "");
      if (module) out.push({ module, names: [], line: n.startPosition.row + 1 });
    } else if (n.childForFieldName("directive")?.text === "#import") {
      const arg = n.childForFieldName("argument")?.text.trim() ?? "";
      const m = arg.match(/^"([^"]+)"|^(<[^>]+>)/);
      if (m) out.push({ module: m[1] ?? m[2], names: [], line: n.startPosition.row + 1 });
    }
  }
  return out.sort((a, b) => a.line - b.line);
}


/** `Foo::bar` defined outside its class: the class is the scope right before the name (`ns::Foo::bar` → Foo). */
function receiverType(def: TSNode): string | undefined {
  if (def.type !== "function_definition") return undefined;
  // A conversion operator's name is the declarator itself (`Foo::operator bool`), no function_declarator around it.
  let d = def.childForFieldName("declarator");
  while (d && d.type !== "function_declarator" && d.type !== "qualified_identifier") d = d.childForFieldName("declarator") ?? d.namedChildren.find((c) => c?.type.endsWith("declarator")) ?? null;
  let q = d?.type === "qualified_identifier" ? d : d?.childForFieldName("declarator");
  if (q?.type !== "qualified_identifier") return undefined;
  let scope: TSNode | null = null;
  while (q?.type === "qualified_identifier") {
    scope = q.childForFieldName("scope");
    q = q.childForFieldName("name");
  }
  return scope ? bareTypeName(scope.text) : undefined;
}

function bases(def: TSNode): string[] {
  const clause = def.namedChildren.find((c) => c?.type === "base_class_clause");
  if (!clause) return [];
  return clause.namedChildren.filter((c): c is TSNode => !!c && c.type !== "access_specifier" && c.type !== "virtual").map((c) => bareTypeName(c.text));
}

/**
 * `"x.h"`: beside the including file first, then any project file ending with the path (an include
 * directory: `-Iinclude`), the nearest to the including file when several do; `<x.h>` only by the
 * latter (a system header is in no project, a project's own may be).
 */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  const system = spec.startsWith("<");
  const rel = spec.replace(/^<|>$/g, "");
  if (!system) {
    const beside = path.posix.normalize(path.posix.join(path.posix.dirname(from.path), rel));
    if (!beside.startsWith("../") && project.has(beside)) return [beside];
  }
  const suffix = path.posix.normalize(rel).replace(/^(\.\.?\/)+/, "");
  return nearestTo(from.path, project.filesEndingWith(suffix));
}

const common = { docstring, bases, imports: importsOf, moduleDoc: (root: TSNode) => fileComment(root), family: "c", globImports: true, resolveImport };

/**
 * C: tree-sitter-c's grammar (C code may use C++ keywords as names). Headers (`.h`) are read as C++:
 * its grammar parses C declarations too, and C++ headers need it. No Objective-C grammar ships with
 * our dependencies, so Objective-C (`.m`) is read as C and Objective-C++ (`.mm`) as C++: their C
 * functions, structs, enums, typedefs, calls and `#import`s are indexed; `@interface` and
 * `@implementation` blocks and their methods are not (the grammar skips them as errors).
 */
export const c: LanguageSpec = {
  id: "c",
  extensions: [".c", ".m"],
  grammar: "tree-sitter-c/tree-sitter-c.wasm",
  query: C_QUERY,
  ...common,
  selfNames: [],
};

/**
 * Export and inline macros wrap C++'s declarations (a library's API): blanked in a file that reads as
 * C++. A C header (read with this grammar too) is left as it is: in C they cost a second parse of many
 * files (coreutils' headers and sources: 11-15 % more CPU) and named no definition more.
 */
function withoutCppMacros(source: string): string {
  return /\b(?:class|namespace|template)\b/.test(source) ? withoutDeclarationMacros(source) : source;
}

/** A conversion operator is named by its target type (`operator const char*`), without its parameters and qualifiers. */
function definitionName(name: TSNode): string {
  if (name.type !== "operator_cast") return name.text;
  const end = name.descendantsOfType("abstract_function_declarator")[0]?.childForFieldName("parameters")?.startIndex ?? name.endIndex;
  return name.text.slice(0, end - name.startIndex).replace(/\s+/g, " ").trim();
}

export const cpp: LanguageSpec = {
  id: "cpp",
  extensions: [".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl", ".tcc", ".h", ".mm"],
  grammar: "tree-sitter-cpp.wasm",
  query: CPP_QUERY,
  ...common,
  lenientSource: withoutCppMacros,
  lenientPartly: true,
  definitionName,
  receiverType,
  selfNames: ["this"],
  implicitSelf: true,
};
