import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, cleanComment, commentBlock, firstCommentBlock, nearestTo, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Ruby. A module is a container like a class (it holds methods, `Utils.escape` calls one, and it is
 * mixed in), so nesting gives `Rack.Utils.escape`. `Foo.new` is a call of the class `Foo`.
 */
const QUERY = `
(class name: [(constant) @name (scope_resolution name: (constant) @name)]) @def.class
(module name: [(constant) @name (scope_resolution name: (constant) @name)]) @def.class
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(call !receiver method: (identifier) @call.name) @call
(call receiver: [(constant) (identifier) (self) (instance_variable)] @call.receiver method: (identifier) @call.name) @call
(call receiver: (scope_resolution name: (constant) @call.receiver) method: (identifier) @call.name) @call
(call receiver: [(constant) @call.name (scope_resolution name: (constant) @call.name)] method: (identifier) @new (#eq? @new "new")) @call
`;

const LOADS = new Set(["require", "require_relative", "load", "autoload"]);

/** The string literal's text when it has no interpolation. */
function literal(n: TSNode | null | undefined): string | undefined {
  if (n?.type !== "string" || n.namedChildren.some((c) => c?.type === "interpolation")) return undefined;
  return n.namedChildren.map((c) => c?.text ?? "").join("");
}

/**
 * `require "rack/utils"`, `require_relative "utils"` (kept as `./utils`), `load`, and
 * `autoload :Builder, "rack/builder"` (binding Builder), wherever they stand (inside a module too).
 */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const call of root.descendantsOfType("call")) {
    if (!call || call.childForFieldName("receiver")) continue;
    const method = call.childForFieldName("method")?.text ?? "";
    if (!LOADS.has(method)) continue;
    const args = call.childForFieldName("arguments")?.namedChildren ?? [];
    const spec = literal(method === "autoload" ? args[1] : args[0]);
    if (!spec) continue;
    const line = call.startPosition.row + 1;
    if (method === "require_relative") out.push({ module: spec.startsWith(".") ? spec : `./${spec}`, names: [], line });
    else if (method === "autoload") {
      const name = args[0]?.text.replace(/^:/, "") ?? "";
      out.push({ module: spec, names: /^[A-Z]\w*$/.test(name) ? [{ name, alias: name }] : [], line });
    } else out.push({ module: spec, names: [], line });
  }
  return out;
}

/** A superclass, and the modules a class or module mixes in (`include`, `extend`, `prepend`) in its own body. */
function bases(def: TSNode): string[] {
  const out: string[] = [];
  const sup = def.childForFieldName("superclass")?.namedChildren[0];
  if (sup) out.push(bareTypeName(sup.text));
  for (const st of def.childForFieldName("body")?.namedChildren ?? []) {
    if (st?.type !== "call" || st.childForFieldName("receiver")) continue;
    if (!["include", "extend", "prepend"].includes(st.childForFieldName("method")?.text ?? "")) continue;
    for (const a of st.childForFieldName("arguments")?.namedChildren ?? []) if (a && /^(constant|scope_resolution)$/.test(a.type)) out.push(bareTypeName(a.text));
  }
  return out;
}

/** Magic comments (`# frozen_string_literal: true`, `# encoding: utf-8`, `# -*- … -*-`) and licences are not documentation. */
const NOT_DOC = /^#\s*(frozen_string_literal|encoding|coding|warn_indent|shareable_constant_value)\s*:|^#\s*-\*-|copyright|licen[cs]e|SPDX-License/i;

/** The file's first comment block that is not magic comments or a licence and not glued to a definition. */
const moduleDoc = (root: TSNode) => firstCommentBlock(root, NOT_DOC);

/** The node before a definition: its sibling, or, for the first statement of a body, what precedes the body (comments above it sit there). */
function before(def: TSNode): TSNode | null {
  const parent = def.parent;
  if (!def.previousNamedSibling && parent?.type === "body_statement") return parent.previousNamedSibling;
  return def.previousNamedSibling;
}

/** The comment block above a definition; Ruby code often leaves one blank line between the two. */
function docstring(def: TSNode): string {
  let last = before(def);
  if (last?.type !== "comment" || last.endPosition.row < def.startPosition.row - 2) return "";
  let first = last;
  while (first.previousNamedSibling?.type === "comment" && first.previousNamedSibling.endPosition.row === first.startPosition.row - 1) first = first.previousNamedSibling;
  const text = commentBlock(first).text;
  return NOT_DOC.test(text) ? "" : cleanComment(text);
}

/**
 * `./x` (require_relative): beside the requiring file. Otherwise a load-path name: a project file
 * ending with `<name>.rb` (`lib/rack/utils.rb` for `rack/utils`), the nearest when several do; a gem
 * outside the project names nothing.
 */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  const file = spec.endsWith(".rb") ? spec : `${spec}.rb`;
  if (spec.startsWith(".")) {
    const beside = path.posix.normalize(path.posix.join(path.posix.dirname(from.path), file));
    return !beside.startsWith("../") && project.has(beside) ? [beside] : [];
  }
  return nearestTo(from.path, project.filesEndingWith(path.posix.normalize(file)));
}

export const ruby: LanguageSpec = {
  id: "ruby",
  extensions: [".rb", ".rake"],
  interpreters: ["ruby"],
  grammar: "tree-sitter-ruby.wasm",
  query: QUERY,
  docstring,
  bases,
  imports: importsOf,
  moduleDoc,
  selfNames: ["self"],
  implicitSelf: true,
  // A required file's constants and top-level methods are visible everywhere after it.
  globImports: true,
  resolveImport,
};
