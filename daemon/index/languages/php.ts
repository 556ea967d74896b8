import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { fileComment, leadingComment, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * PHP. Names are qualified by class (`StreamHandler.write`) and the file's namespace is its package
 * (`Monolog\Handler`): `use` binds names of a namespace, and classes of one namespace (one directory
 * under PSR-4) see each other without one. A trait is a class-like container its users name as a base.
 */
const QUERY = `
(class_declaration name: (name) @name) @def.class
(trait_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(enum_declaration name: (name) @name) @def.enum
(method_declaration name: (name) @name) @def.method
(function_definition name: (name) @name) @def.function
(member_call_expression object: (_) @call.receiver name: (name) @call.name) @call
(nullsafe_member_call_expression object: (_) @call.receiver name: (name) @call.name) @call
(scoped_call_expression scope: [(name) (relative_scope)] @call.receiver name: (name) @call.name (#not-eq? @call.receiver "parent")) @call
(scoped_call_expression scope: (qualified_name (name) @call.receiver .) name: (name) @call.name) @call
(function_call_expression function: [(name) @call.name (qualified_name (name) @call.name .)]) @call
(object_creation_expression [(name) @call.name (qualified_name (name) @call.name .)]) @call
`;

/** What may stand before a file's description. */
const PREAMBLE: ReadonlySet<string> = new Set(["php_tag", "declare_statement", "text"]);

/** `Foo\Bar` as written, without a leading backslash. */
const bare = (s: string) => s.replace(/^\\/, "").trim();

/** `use A\B\C;`, `use A\B\{C, D as E};`, `use function A\f;`: the namespace and the names it binds. */
function useImports(decl: TSNode): RawImport[] {
  const line = decl.startPosition.row + 1;
  const group = decl.childForFieldName("body");
  const prefix = group ? bare(decl.namedChildren.find((c) => c?.type === "namespace_name")?.text ?? "") : "";
  const out: RawImport[] = [];
  for (const clause of (group ?? decl).namedChildren) {
    if (clause?.type !== "namespace_use_clause") continue;
    const full = bare([prefix, clause.namedChildren.find((c) => c?.type === "qualified_name" || c?.type === "name")?.text ?? ""].filter(Boolean).join("\\"));
    const cut = full.lastIndexOf("\\");
    const name = full.slice(cut + 1);
    if (!name) continue;
    const alias = clause.childForFieldName("alias")?.text ?? name;
    out.push({ module: cut < 0 ? "" : full.slice(0, cut), names: [{ name, alias }], line });
  }
  return out;
}

/** `require 'x.php'` and `require __DIR__ . '/x.php'` (and include, _once): a path from the file's directory. */
function requirePath(expr: TSNode): string | undefined {
  const arg = expr.namedChildren[0];
  const str = (n: TSNode | null | undefined) => (n?.type === "string" || n?.type === "encapsed_string") && !n.namedChildren.some((c) => c?.type !== "string_content" && c?.type !== "string_value") ? n.namedChildren.map((c) => c?.text ?? "").join("") : undefined;
  if (!arg) return undefined;
  if (arg.type === "binary_expression" && arg.childForFieldName("left")?.text === "__DIR__") {
    const rest = str(arg.childForFieldName("right"));
    return rest?.startsWith("/") ? `.${rest}` : undefined;
  }
  const p = str(arg);
  return p && !path.posix.isAbsolute(p) ? (p.startsWith(".") ? p : `./${p}`) : undefined;
}

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const n of root.descendantsOfType(["namespace_use_declaration", "require_expression", "require_once_expression", "include_expression", "include_once_expression"])) {
    if (!n) continue;
    if (n.type === "namespace_use_declaration") out.push(...useImports(n));
    else {
      const p = requirePath(n);
      if (p) out.push({ module: p, names: [], line: n.startPosition.row + 1 });
    }
  }
  return out;
}

/** The parent class, implemented interfaces and used traits. */
function bases(def: TSNode): string[] {
  const out: string[] = [];
  const last = (t: string) => bare(t).split("\\").pop()!;
  for (const c of def.namedChildren) {
    if (c?.type === "base_clause" || c?.type === "class_interface_clause") for (const n of c.namedChildren) if (n) out.push(last(n.text));
  }
  for (const st of def.childForFieldName("body")?.namedChildren ?? []) {
    if (st?.type === "use_declaration") for (const n of st.namedChildren) if (n && (n.type === "name" || n.type === "qualified_name")) out.push(last(n.text));
  }
  return out;
}

/** The file's namespace (`namespace Monolog\Handler;`). */
function packageName(root: TSNode): string | undefined {
  const ns = root.namedChildren.find((c) => c?.type === "namespace_definition");
  return ns?.childForFieldName("name")?.text;
}


/**
 * A namespace: the files declaring it (`Monolog\Handler`, or a project holding a subtree of it, by
 * suffix). A required path: beside the requiring file.
 */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  if (spec.startsWith(".")) {
    const p = path.posix.normalize(path.posix.join(path.posix.dirname(from.path), spec));
    return !p.startsWith("../") && project.has(p) ? [p] : [];
  }
  return spec ? project.declaring(spec, { suffix: true }) : [];
}

export const php: LanguageSpec = {
  id: "php",
  extensions: [".php"],
  interpreters: ["php"],
  grammar: "tree-sitter-php.wasm",
  query: QUERY,
  docstring: (def) => leadingComment(def),
  bases,
  imports: importsOf,
  packageName,
  moduleDoc: (root) => fileComment(root, /copyright|licen[cs]e|SPDX-License|this file is part of/i, PREAMBLE),
  selfNames: ["$this", "self", "static"],
  // Classes of one namespace (one directory under PSR-4) name each other without `use`.
  directoryScope: true,
  resolveImport,
};
