import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, cleanComment, firstCommentBlock, LICENCE, nearestTo, unquote, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Dart. Classes and mixins are classes, enums enums; an extension only names the type its members
 * join (`extension E on Foo` → `Foo.x`, in any file of the project). The grammar keeps a method's
 * body beside its signature (`method_signature`, `function_body`): `bodyAfter` joins them. A
 * constructor is named by the class (`Foo.Foo`), a named one by its name (`Foo.named`). `import`,
 * `export` and `part` are one edge per file and URI: relative to the file, `package:p/x.dart` to
 * `lib/x.dart` of the project by path suffix, `dart:` nothing. `Foo(...)` is a call of the class.
 */
const QUERY = `
(class_definition (identifier) @name) @def.class
(mixin_declaration (identifier) @name) @def.class
(enum_declaration (identifier) @name) @def.enum
(extension_declaration (type_identifier) @name) @def.impl
(program (function_signature (identifier) @name) @def.function)
(method_signature [(function_signature (identifier) @name) (getter_signature (identifier) @name) (setter_signature (identifier) @name)]) @def.function
(method_signature [(constructor_signature . (identifier) @name . (formal_parameter_list)) (factory_constructor_signature . (identifier) @name . (formal_parameter_list)) (constant_constructor_signature . (identifier) @name . (formal_parameter_list))]) @def.function
(method_signature [(constructor_signature (identifier) . (identifier) @name) (factory_constructor_signature (identifier) . (identifier) @name) (constant_constructor_signature (identifier) . (identifier) @name)]) @def.function
(declaration [(function_signature (identifier) @name) (getter_signature (identifier) @name) (setter_signature (identifier) @name)]) @def.function
(declaration [(constructor_signature . (identifier) @name . (formal_parameter_list)) (constant_constructor_signature . (identifier) @name . (formal_parameter_list))]) @def.function
(declaration [(constructor_signature (identifier) . (identifier) @name) (constant_constructor_signature (identifier) . (identifier) @name)]) @def.function
(_ (identifier) @call.name . (selector (argument_part))) @call
(_ [(this) (identifier)] @call.receiver . (selector [(unconditional_assignable_selector (identifier) @call.name) (conditional_assignable_selector (identifier) @call.name)]) . (selector (argument_part))) @call
(new_expression (type_identifier) @call.name) @call
(const_object_expression (type_identifier) @call.name) @call
`;

/** `import 'uri' as p`, `export 'uri'`, `part 'uri'`: the URI, and the prefix of an import. */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const d of root.namedChildren) {
    if (!d) continue;
    const directive = d.type === "import_or_export" ? d.namedChildren[0] : d.type === "part_directive" ? d : null;
    if (!directive) continue;
    const uri = directive.descendantsOfType("uri")[0];
    if (!uri) continue;
    const spec = unquote(uri.text.trim());
    const spec_ = directive.descendantsOfType("import_specification")[0];
    const alias = spec_?.namedChildren.find((c) => c?.type === "identifier")?.text;
    out.push({ module: spec, names: [], ...(alias ? { alias } : {}), line: d.startPosition.row + 1 });
  }
  return out;
}

/** Superclass, mixins (`with`), interfaces (`implements`), a mixin's `on` types. */
function bases(def: TSNode): string[] {
  const out: string[] = [];
  for (const s of def.namedChildren) {
    if (!s) continue;
    if (s.type === "superclass" || s.type === "interfaces") {
      for (const t of s.descendantsOfType("type_identifier")) if (t && t.parent?.type !== "type_arguments") out.push(bareTypeName(t.text));
    } else if (s.type === "type_identifier" && def.type === "mixin_declaration") out.push(s.text);
  }
  return out;
}

/** `package:p/x.dart` → lib/x.dart (by suffix, nearest), `a.dart` / `../a.dart` → beside the file, `dart:x` → nothing. */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  if (!spec || spec.startsWith("dart:")) return [];
  const pkg = /^package:([^/]+)\/(.+)$/.exec(spec);
  if (pkg) return nearestTo(from.path, project.filesEndingWith(`lib/${pkg[2]}`));
  if (/^[a-z]+:/.test(spec)) return [];
  const p = path.posix.normalize(path.posix.join(path.posix.dirname(from.path), spec));
  return project.has(p) ? [p] : [];
}

/** `///` lines or a doc block (slash-star-star) directly above, annotations (`@override`) between skipped. */
function docstring(def: TSNode): string {
  let prev = def.previousNamedSibling;
  let row = def.startPosition.row;
  while (prev && (prev.type === "annotation" || prev.type === "marker_annotation") && prev.endPosition.row >= row - 1) {
    row = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  const lines: string[] = [];
  while (prev && prev.type.endsWith("comment") && prev.endPosition.row >= row - 1) {
    if (!(prev.type === "documentation_comment" || /^\/\*\*|^\/\/\//.test(prev.text))) break;
    lines.unshift(prev.text);
    row = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  return cleanComment(lines.join("\n"));
}

/** A method's or top-level function's body is the signature's next sibling. */
function bodyAfter(def: TSNode): TSNode | undefined {
  const next = def.nextNamedSibling;
  return next?.type === "function_body" ? next : undefined;
}

export const dart: LanguageSpec = {
  id: "dart",
  extensions: [".dart"],
  interpreters: ["dart"],
  // tree-sitter-dart as built to wasm by @repomix/tree-sitter-wasms (pinned), like Swift's grammar.
  grammar: "@repomix/tree-sitter-wasms/out/tree-sitter-dart.wasm",
  query: QUERY,
  docstring,
  bases,
  imports: importsOf,
  moduleDoc: (root) => firstCommentBlock(root, LICENCE),
  selfNames: ["this"],
  implicitSelf: true,
  globImports: true,
  resolveImport,
  bodyAfter,
};
