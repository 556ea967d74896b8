import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, fileComment, firstCommentBlock, leadingComment, LICENCE, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Swift. Classes and actors are classes, structs structs, enums enums, protocols interfaces; an
 * extension only names the type its methods join (`extension CameraPlugin` → `CameraPlugin.x`, in
 * any file of the project), and its conformances become bases of that type when it is in the same
 * file. Initialisers are methods named `init` (overloads apart: `init#2`). A module is a SwiftPM
 * target, `Sources/<Module>/` or `Tests/<Module>/`: `import M` is one edge to M's files and makes
 * their top-level names visible. `Foo(...)` is a call of the type.
 */
const QUERY = `
(class_declaration declaration_kind: ["class" "actor"] name: (type_identifier) @name) @def.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @def.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @def.enum
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name .)) @def.impl
(protocol_declaration name: (type_identifier) @name) @def.interface
(typealias_declaration name: (type_identifier) @name) @def.type
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.function
(init_declaration "init" @name) @def.function
(call_expression . (simple_identifier) @call.name) @call
(call_expression . (navigation_expression target: (_) @call.receiver suffix: (navigation_suffix suffix: (simple_identifier) @call.name)) (#not-eq? @call.receiver "super")) @call
`;

/** `import struct M.Name` binds one declaration of M. */
const DECLARATION_IMPORT = new Set(["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]);

/** `import M` and `import M.Sub` (the whole module M), `import struct M.Name` (Name of M). */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const imp of root.namedChildren) {
    if (imp?.type !== "import_declaration") continue;
    const parts = imp.namedChildren.find((c) => c?.type === "identifier")?.namedChildren.map((c) => c!.text) ?? [];
    if (!parts.length) continue;
    const line = imp.startPosition.row + 1;
    if (parts.length > 1 && imp.children.some((c) => c && DECLARATION_IMPORT.has(c.type))) {
      const name = parts[parts.length - 1];
      out.push({ module: parts.slice(0, -1).join("."), names: [{ name, alias: name }], line });
    } else {
      out.push({ module: parts[0], names: [], line });
    }
  }
  return out;
}

/** Superclass, protocols (`: NSObject, Delegate`); of an extension, the conformances it adds. */
function bases(def: TSNode): string[] {
  const out: string[] = [];
  for (const s of def.namedChildren) {
    if (s?.type !== "inheritance_specifier") continue;
    const t = s.childForFieldName("inherits_from");
    if (t) out.push(bareTypeName(t.text));
  }
  return out;
}

/** The SwiftPM target a file belongs to: `Sources/<Module>/…` or `Tests/<Module>/…`. */
function packageName(_root: TSNode, path: string): string | undefined {
  return /(?:^|\/)(?:Sources|Tests)\/([^/]+)\//.exec(path)?.[1];
}

/** The files of the module (a project may hold several targets); [] for a system or third-party module. */
function resolveImport(spec: string, _from: FileExtract, project: ProjectView): string[] {
  return spec ? project.declaring(spec) : [];
}

/** Xcode's file header (name, project, "Created by", copyright) describes nothing. */
const HEADER = new RegExp(`${LICENCE.source}|Created by|\\.swift\\b`, "i");

/** Line comments (`///`, `//`) or a block (`/** */`) directly above; `// MARK:` lines are section marks. */
function docstring(def: TSNode): string {
  return leadingComment(def)
    .split("\n")
    .filter((l) => !/^\s*MARK:/.test(l))
    .join("\n")
    .trim();
}

export const swift: LanguageSpec = {
  id: "swift",
  extensions: [".swift"],
  // tree-sitter-swift 0.7.1 built to wasm (ABI 14) by @repomix/tree-sitter-wasms: pin its version.
  grammar: "@repomix/tree-sitter-wasms/out/tree-sitter-swift.wasm",
  query: QUERY,
  docstring,
  bases,
  imports: importsOf,
  packageName,
  moduleDoc: (root) => (root.namedChildren[0]?.type === "multiline_comment" ? fileComment(root) : firstCommentBlock(root, HEADER)),
  selfNames: ["self", "Self"],
  implicitSelf: true,
  // Files of one module see each other's names; a module's files share a directory in most projects.
  directoryScope: true,
  globImports: true,
  resolveImport,
  importsFromAnywhere: true,
};
