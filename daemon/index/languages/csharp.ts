import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, cleanComment, fileComment, leadingComment, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Accessors that do work: a call, `new X(…)` or a control statement (`if (`, `foreach (`), i.e. a word
 * or `>` before `(`. Accessors that only read or write state (`get { return _x ?? Default; }`,
 * `set { _x = value; }`) make the property state, like an auto-property; so do the operators written
 * like calls, `default(T)`, `typeof(T)`, `nameof(x)`, `sizeof(T)`, `checked(…)` (Json.NET's attributes
 * hold dozens of `get { return _x ?? default(T); }`, which otherwise outranked the code using them).
 */
const WORK = "(^|[^A-Za-z0-9_])(?!(default|typeof|nameof|sizeof|checked|unchecked) *[(])[A-Za-z0-9_]+ *[(]|> *[(]";

/**
 * C#. As in Java, names are qualified by their types (`BsonWriter.Flush`) and the namespace is the
 * file's package: `using N;` makes the types of namespace N visible, and types of one directory
 * (one namespace, by convention) see each other. Properties and indexers (named `this`) whose
 * accessors do work (see WORK) are methods; an auto-property (`{ get; set; }`) or one whose accessors
 * only read and write fields is state, like a field: it stays part of its type. Delegates are types.
 * Typed locals and fields (`var p = new DateTimeParser()`, `private readonly BsonBinaryWriter _writer;`)
 * give calls on them their type as receiver (`p.Parse()` → `DateTimeParser.Parse`).
 * The grammar is tree-sitter-c-sharp's own (0.23.5): @vscode/tree-sitter-wasm's fails on C# 12 (`?? []`,
 * primary constructors), 55 of Polly's 797 files against 4, and a file that still fails with its #if lines
 * blanked keeps the tree #if broke.
 */
/** A named type as written (`X`, `X<T>`, `N.X<T>`), its last name captured. */
const TYPE = "[(identifier) @local.type (generic_name (identifier) @local.type) (qualified_name name: [(identifier) @local.type (generic_name (identifier) @local.type)])]";

const QUERY = `
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(property_declaration name: (identifier) @name accessors: (accessor_list) @work (#match? @work "${WORK}")) @def.method
(indexer_declaration "this" @name accessors: (accessor_list) @work (#match? @work "${WORK}")) @def.method
(delegate_declaration name: (identifier) @name) @def.type
(variable_declaration type: ${TYPE} (variable_declarator name: (identifier) @local.name))
(variable_declaration type: (implicit_type) (variable_declarator name: (identifier) @local.name (object_creation_expression type: ${TYPE})))
(invocation_expression function: [(identifier) @call.name (generic_name (identifier) @call.name)]) @call
(invocation_expression function: (member_access_expression expression: _ @call.receiver name: [(identifier) @call.name (generic_name (identifier) @call.name)]) (#not-eq? @call.receiver "base")) @call
(object_creation_expression type: [(identifier) @call.name (generic_name (identifier) @call.name) (qualified_name name: [(identifier) @call.name (generic_name (identifier) @call.name)])]) @call
`;

/** `using N;` and `using A = N;` (a namespace by alias); `using static` and `global using` too. */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const u of root.descendantsOfType("using_directive")) {
    if (!u) continue;
    const target = u.namedChildren.find((c) => c && (c.type === "qualified_name" || c.type === "identifier") && !c.equals(u.childForFieldName("name") ?? c.parent!));
    const alias = u.childForFieldName("name")?.text;
    const module = (target ?? u.namedChildren[u.namedChildren.length - 1])?.text.replace(/\s+/g, "");
    if (module) out.push({ module, names: [], ...(alias ? { alias } : {}), line: u.startPosition.row + 1 });
  }
  return out;
}

/**
 * The comment just above a declaration; a `///` one also across blank lines, as the compiler reads it,
 * which are also what a blanked #if line leaves (`/// <summary>…` `#if NET` `[Attr]` `public int P`).
 */
function xmlDoc(holder: TSNode): string {
  const adjacent = leadingComment(holder);
  const prev = holder.previousNamedSibling;
  if (adjacent || prev?.type !== "comment" || !prev.text.startsWith("///")) return adjacent;
  return [leadingComment(prev), cleanComment(prev.text)].filter(Boolean).join("\n");
}

/** XML documentation (`/// <summary>…</summary>`) as plain text: tags dropped, `<see cref="X"/>` kept as X. */
function docstring(def: TSNode): string {
  let holder = def;
  // Attributes stand between the comment and the declaration in the tree only as children, so the comment is the declaration's sibling.
  while (holder.parent && holder.parent.type === "attribute_list") holder = holder.parent;
  return xmlDoc(holder)
    .replace(/<(?:see|seealso|paramref|typeparamref)\s+(?:cref|name|langword)="([^"]*)"\s*\/>/g, (_m, x: string) => x.replace(/^[A-Z]:/, ""))
    .replace(/<\/?[a-zA-Z]+(?:\s+[a-z]+="[^"]*")*\s*\/?>/g, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function bases(def: TSNode): string[] {
  const list = def.namedChildren.find((c) => c?.type === "base_list");
  return (list?.namedChildren ?? []).filter((c): c is TSNode => !!c && c.type !== "argument_list").map((c) => bareTypeName(c.text));
}

/** The file's namespace (block or file-scoped). */
function packageName(root: TSNode): string | undefined {
  const ns = root.descendantsOfType(["namespace_declaration", "file_scoped_namespace_declaration"])[0];
  return ns?.childForFieldName("name")?.text.replace(/\s+/g, "");
}


/** The files declaring the namespace (a project may hold a subtree of it: by suffix). */
function resolveImport(spec: string, _from: FileExtract, project: ProjectView): string[] {
  return project.declaring(spec, { suffix: true });
}

/**
 * The source with its conditional-compilation lines (`#if`, `#elif`, `#else`, `#endif`) blanked, every
 * branch kept: the grammar parses a directive only where a whole construct fits (Json.NET's
 * `class JContainer : JToken, IList<JToken>` continues under `#if`, which left the class an ERROR).
 * A file-based program's `#:sdk`/`#:package` lines (.NET 10) are no syntax of the grammar either.
 */
function withoutConditionals(source: string): string {
  return source.replace(/^[ \t]*#(?:[ \t]*(?:if|elif|else|endif)\b|:).*$/gm, (line) => " ".repeat(line.length));
}

export const csharp: LanguageSpec = {
  id: "csharp",
  extensions: [".cs"],
  grammar: "tree-sitter-c-sharp/tree-sitter-c_sharp.wasm",
  query: QUERY,
  lenientSource: withoutConditionals,
  docstring,
  bases,
  imports: importsOf,
  packageName,
  // Json.NET-style MIT headers name no licence word before "Permission is hereby granted".
  moduleDoc: (root) => fileComment(root, /copyright|licen[cs]e|SPDX-License|permission is hereby granted/i),
  selfNames: ["this"],
  implicitSelf: true,
  directoryScope: true,
  globImports: true,
  resolveImport,
  importsFromAnywhere: true,
};
