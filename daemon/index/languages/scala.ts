import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, fileComment, leadingComment, LICENCE, resolveByPackage, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Scala. Classes and case classes, objects and package objects are classes, traits interfaces,
 * enums enums; defs (and vals holding a lambda) are functions, qualified by their classes; a val
 * holding an anonymous class (`implicit val StringReader: Reader[String] = new SimpleReader[String] { … }`)
 * is a class named by it, extending what it creates (its defs were the enclosing type's, ten
 * `Readers.visitString` in upickle's Readers). A named
 * Scala 3 `given` is a function (`given ord: Ordering[T] = …`), or a class when it has members
 * (`given Monoid[Int] with { def … }`); an anonymous one has no name to find it by. A
 * top-level companion object (`object Foo` beside `class Foo` or `trait Foo`) stays a node, and its
 * members join the class (`Foo.apply`; a nested companion keeps its own: `Outer.Foo#2.apply`). The package (`package a.b`, or chained clauses) is the file's
 * package. `Foo(...)` and `new Foo(...)` are calls of the class.
 */
const QUERY = `
(class_definition name: (identifier) @name) @def.class
(object_definition name: (identifier) @name) @def.class
(package_object name: (identifier) @name) @def.class
(trait_definition name: (identifier) @name) @def.interface
(enum_definition name: (identifier) @name) @def.enum
(type_definition name: (type_identifier) @name) @def.type
(function_definition name: (identifier) @name) @def.function
(given_definition name: (identifier) @name body: (with_template_body)) @def.class
(given_definition name: (identifier) @name) @def.function
(function_declaration name: (identifier) @name) @def.function
(val_definition pattern: (identifier) @name value: (lambda_expression)) @def.function
(val_definition pattern: (identifier) @name value: (instance_expression (template_body))) @def.class
(compilation_unit [(class_definition name: (identifier) @companion) (trait_definition name: (identifier) @companion)] (object_definition name: (identifier) @name body: (template_body) @def.impl) (#eq? @companion @name))
(call_expression function: [(identifier) @call.name (generic_function function: (identifier) @call.name)]) @call
(call_expression function: [(field_expression value: (_) @call.receiver field: (identifier) @call.name) (generic_function function: (field_expression value: (_) @call.receiver field: (identifier) @call.name))] (#not-eq? @call.receiver "super")) @call
(instance_expression [(type_identifier) @call.name (generic_type (type_identifier) @call.name)]) @call
`;

/** `import a.b.C`, `import a.b.{C, D => E}` (names of a.b), `import a.b._` / `a.b.*` / `a.b.{_, …}` (every name of a.b). */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const imp of root.descendantsOfType("import_declaration")) {
    if (!imp) continue;
    const path = imp.childrenForFieldName("path").flatMap((p) => (p?.type === "identifier" ? [p.text] : []));
    const line = imp.startPosition.row + 1;
    const selectors = imp.namedChildren.find((c) => c?.type === "namespace_selectors");
    if (imp.namedChildren.some((c) => c?.type === "namespace_wildcard") && !selectors) {
      out.push({ module: path.join("."), names: [], line });
    } else if (selectors) {
      const names: RawImport["names"] = [];
      for (const s of selectors.namedChildren) {
        if (s?.type === "identifier") names.push({ name: s.text, alias: s.text });
        else if (s?.type === "arrow_renamed_identifier") names.push({ name: s.childForFieldName("name")!.text, alias: s.childForFieldName("alias")!.text });
      }
      if (selectors.namedChildren.some((c) => c?.type === "namespace_wildcard")) out.push({ module: path.join("."), names: [], line });
      if (names.length) out.push({ module: path.join("."), names, line });
    } else if (path.length > 1) {
      const name = path[path.length - 1];
      out.push({ module: path.slice(0, -1).join("."), names: [{ name, alias: name }], line });
    }
  }
  return out;
}

/** The superclass and mixed-in traits (`extends A with B`); a val's anonymous class, the type it creates. */
function bases(def: TSNode): string[] {
  if (def.type === "val_definition") {
    const created = def.childForFieldName("value")?.namedChildren.find((c) => c?.type !== "template_body" && c?.type !== "arguments");
    return created ? [bareTypeName(created.text)] : [];
  }
  const ext = def.childForFieldName("extend");
  return (ext?.childrenForFieldName("type") ?? []).map((t) => bareTypeName(t!.text));
}

/** `package a.b` or chained clauses (`package a` then `package b`): `a.b`. */
function packageName(root: TSNode): string | undefined {
  const parts = root.namedChildren.filter((c) => c?.type === "package_clause").map((c) => c!.childForFieldName("name")?.text ?? "");
  return parts.length ? parts.join(".") : undefined;
}

/** The Scala sources' banner (`(c) 2003-2013, LAMP/EPFL`) and licences are no description. */
const HEADER = new RegExp(`${LICENCE.source}|\\(c\\)`, "i");

/**
 * A package's files (by suffix, as in Kotlin); else an object's members (`import ProcessBuilder._`,
 * `import a.b.Foo._`): the file named for the object, `Foo.scala`, in its package or, for a name
 * without a package, beside the importing file.
 */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  const pkg = resolveByPackage(spec, from, project);
  if (pkg.length || !spec) return pkg;
  const cut = spec.lastIndexOf(".");
  const file = `${spec.slice(cut + 1)}.scala`;
  const near = cut < 0 ? project.filesIn(path.posix.dirname(from.path).replace(/^\.$/, "")) : project.declaring(spec.slice(0, cut), { suffix: true });
  return near.filter((f) => path.posix.basename(f) === file);
}

export const scala: LanguageSpec = {
  id: "scala",
  extensions: [".scala", ".sc"],
  grammar: "tree-sitter-scala/tree-sitter-scala.wasm",
  query: QUERY,
  docstring: (def) => leadingComment(def),
  bases,
  imports: importsOf,
  packageName,
  moduleDoc: (root) => fileComment(root, HEADER, new Set(["package_clause"])),
  selfNames: ["this"],
  implicitSelf: true,
  family: "jvm",
  // Files of one package (one directory, by convention) see each other's top-level names.
  directoryScope: true,
  globImports: true,
  resolveImport,
};
