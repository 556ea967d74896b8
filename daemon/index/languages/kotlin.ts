import type { Node as TSNode } from "web-tree-sitter";
import type { RawImport } from "../types.js";
import { bareTypeName, fileComment, leadingComment, resolveByPackage, type LanguageSpec } from "./language.js";

/**
 * Kotlin. As in Java, names are qualified by their classes (`GestureHandler.activate`) and the
 * `package` is the file's package. An object is a class; a companion's functions belong to the class
 * (`Foo.create()`); an extension function joins its receiver type like a Go method. `Foo(...)` is
 * a call of the class.
 */
const QUERY = `
(class_declaration "class" name: (identifier) @name) @def.class
(class_declaration "interface" name: (identifier) @name) @def.interface
(object_declaration name: (identifier) @name) @def.class
(function_declaration name: (identifier) @name) @def.function
(call_expression . (identifier) @call.name) @call
(call_expression . (navigation_expression (_) @call.receiver . (identifier) @call.name .) (#not-eq? @call.receiver "super")) @call
`;

/** `import a.b.C` (binds C of package a.b), `import a.b.C as D`, `import a.b.*` (every name of a.b). */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const imp of root.namedChildren) {
    if (imp?.type !== "import") continue;
    const path = imp.namedChildren.find((c) => c?.type === "qualified_identifier")?.text.replace(/\s+/g, "");
    if (!path) continue;
    const line = imp.startPosition.row + 1;
    if (/\.\s*\*\s*$/.test(imp.text)) {
      out.push({ module: path, names: [], line });
      continue;
    }
    const cut = path.lastIndexOf(".");
    const name = path.slice(cut + 1);
    const alias = imp.namedChildren.find((c) => c?.type === "identifier")?.text ?? name;
    out.push({ module: cut < 0 ? "" : path.slice(0, cut), names: [{ name, alias }], line });
  }
  return out;
}

/** Superclass and interfaces (`: ViewGroup(context), Listener`). */
function bases(def: TSNode): string[] {
  const specs = def.namedChildren.find((c) => c?.type === "delegation_specifiers");
  const out: string[] = [];
  for (const s of specs?.namedChildren ?? []) {
    const t = s?.descendantsOfType("user_type")[0];
    if (t) out.push(bareTypeName(t.text));
  }
  return out;
}

/** `fun View.extend()`: the type before the name. */
function receiverType(def: TSNode): string | undefined {
  if (def.type !== "function_declaration") return undefined;
  const name = def.childForFieldName("name");
  const t = def.namedChildren.find((c) => c && (c.type === "user_type" || c.type === "nullable_type") && name && c.startIndex < name.startIndex);
  return t ? bareTypeName(t.text) : undefined;
}

/**
 * The JVM class of the file's top-level functions: `@file:JvmName("X")`, else the file's name with
 * `Kt` (`strings.kt` → `StringsKt`), as Java code calls them. Scripts (`.kts`) compile to no such class.
 */
function fileClass(root: TSNode, file: string): string | undefined {
  for (const a of root.namedChildren) {
    if (a?.type !== "file_annotation") continue;
    for (const inv of a.namedChildren) {
      if (inv?.type === "constructor_invocation" && inv.namedChildren[0]?.text === "JvmName") {
        const name = inv.descendantsOfType("string_content")[0]?.text;
        if (name) return name;
      }
    }
  }
  const m = file.match(/([^/]+)\.kt$/);
  // Characters no Java name holds become "_" (`View+Sizes.kt` → `View_SizesKt`).
  const name = m?.[1].replace(/[^\w$]/g, "_");
  return name ? `${name[0].toUpperCase()}${name.slice(1)}Kt` : undefined;
}

/** What ends a declaration's head: a class's or object's body, a function's block or `= expression`. */
const BODIES = new Set(["class_body", "enum_class_body", "function_body"]);
/** Modifiers that are no part of a head: annotations and the comments among them. */
const NOT_HEAD = new Set(["annotation", "line_comment", "block_comment"]);

/**
 * A declaration's head, from its first modifier that is no annotation to its body, or its end when it
 * has none (an interface's or abstract function, `data class R(val a: Int)`), comments left out. The
 * extractor's default cuts at a body field the grammar does not name, so it kept a first line:
 * `@Throws(IOException::class)` alone for an annotated interface function, `data class Request(` for a
 * class whose constructor spans lines (half of okhttp's classes).
 */
function signature(def: TSNode): string {
  const body = def.namedChildren.find((c) => c && BODIES.has(c.type));
  const end = body?.startIndex ?? def.endIndex;
  const mods = def.namedChildren.find((c) => c?.type === "modifiers");
  const start = mods ? (mods.namedChildren.find((c) => c && !NOT_HEAD.has(c.type)) ?? mods.nextSibling ?? mods).startIndex : def.startIndex;
  const base = def.startIndex;
  let text = "";
  let at = start;
  for (const c of def.descendantsOfType(["line_comment", "block_comment"], def.startPosition, body?.startPosition ?? def.endPosition)) {
    if (!c || c.startIndex < at || c.endIndex > end) continue;
    text += def.text.slice(at - base, c.startIndex - base) + " ";
    at = c.endIndex;
  }
  return text + def.text.slice(at - base, end - base);
}

function packageName(root: TSNode): string | undefined {
  return root.namedChildren.find((c) => c?.type === "package_header")?.namedChildren[0]?.text.replace(/\s+/g, "");
}

export const kotlin: LanguageSpec = {
  id: "kotlin",
  extensions: [".kt", ".kts"],
  grammar: "@tree-sitter-grammars/tree-sitter-kotlin/tree-sitter-kotlin.wasm",
  query: QUERY,
  docstring: (def) => leadingComment(def),
  signature,
  bases,
  imports: importsOf,
  receiverType,
  packageName,
  fileClass,
  moduleDoc: (root) => fileComment(root),
  selfNames: ["this"],
  implicitSelf: true,
  // Kotlin, Java and Scala code calls each other's classes directly.
  family: "jvm",
  // Files of one package (one directory, by convention) see each other's top-level names.
  directoryScope: true,
  globImports: true,
  resolveImport: resolveByPackage,
  importsFromAnywhere: true,
};
