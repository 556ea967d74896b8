import type { Node as TSNode } from "web-tree-sitter";
import type { RawImport } from "../types.js";
import { bareTypeName, cleanComment, leadingComment, unquote, type LanguageSpec, type ProjectView } from "./language.js";

const QUERY = `
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type) (array_type) (pointer_type) (channel_type) (generic_type)]) @def.type
(call_expression function: (identifier) @call.name) @call
(call_expression function: (selector_expression operand: (_) @call.receiver field: (field_identifier) @call.name)) @call
(parameter_declaration name: (identifier) @local.name type: (_) @local.type)
(variadic_parameter_declaration name: (identifier) @local.name)
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (_) @local.value))
(short_var_declaration left: (expression_list . (identifier) @local.name) right: (expression_list . (type_assertion_expression type: (_) @local.type)))
(short_var_declaration left: (expression_list (identifier) @local.name))
(var_spec name: (identifier) @local.name type: (_) @local.type)
(var_spec name: (identifier) @local.name value: (expression_list . (_) @local.value))
(range_clause left: (expression_list (identifier) @local.name))
(field_declaration name: (field_identifier) @local.name type: (_) @local.type)
`;

/** Go's predeclared names: a call or type named so, and not defined by the project, is none of its. */
const BUILTINS = new Set(["make", "len", "cap", "append", "copy", "delete", "panic", "recover", "print", "println", "close", "min", "max", "clear", "string", "int", "int64", "int32", "uint", "uint64", "byte", "rune", "bool", "float64", "error", "any"]);

/** A function's first result type (\`(*Context, error)\` → \`*Context\`). */
function returnType(def: TSNode): string | undefined {
  const r = def.childForFieldName("result");
  if (!r) return undefined;
  return r.type === "parameter_list" ? r.namedChildren[0]?.childForFieldName("type")?.text : r.text;
}

/** Parameter types by position: `a, b int` is two ints; a variadic `...T` one parameter. */
function paramTypes(def: TSNode): string[] | undefined {
  const list = def.childForFieldName("parameters");
  if (!list) return undefined;
  const out: string[] = [];
  for (const p of list.namedChildren) {
    if (!p || (p.type !== "parameter_declaration" && p.type !== "variadic_parameter_declaration")) continue;
    const type = p.childForFieldName("type")?.text ?? "";
    const names = p.childrenForFieldName("name").filter((n) => n !== null).length;
    for (let i = 0; i < Math.max(1, names); i++) out.push(type);
  }
  return out;
}

/** An interface's method specs (`Read(p []byte) (int, error)` → `Read/1`); embedded interfaces are its bases. */
function interfaceMethods(def: TSNode): string[] | undefined {
  const t = def.childForFieldName("type");
  if (t?.type !== "interface_type") return undefined;
  const out: string[] = [];
  for (const m of t.namedChildren) {
    if (m?.type !== "method_elem") continue;
    const name = m.childForFieldName("name")?.text;
    if (name) out.push(`${name}/${paramTypes(m)?.length ?? 0}`);
  }
  return out;
}

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const decl of root.namedChildren) {
    if (!decl || decl.type !== "import_declaration") continue;
    const specs = decl.descendantsOfType("import_spec");
    for (const s of specs) {
      if (!s) continue;
      const p = s.childForFieldName("path");
      if (!p) continue;
      const alias = s.childForFieldName("name")?.text;
      out.push({ module: unquote(p.text), names: [], alias, line: s.startPosition.row + 1 });
    }
  }
  return out;
}

export const go: LanguageSpec = {
  id: "go",
  extensions: [".go"],
  grammar: "tree-sitter-go.wasm",
  query: QUERY,
  docstring(def) {
    // A type_spec's comment sits above its type_declaration.
    const holder = def.type === "type_spec" && def.parent?.type === "type_declaration" ? def.parent : def;
    return leadingComment(holder);
  },
  bases(def) {
    // Embedded types in a struct or interface act as bases.
    const t = def.childForFieldName("type");
    if (!t) return [];
    const out: string[] = [];
    if (t.type === "struct_type") {
      for (const f of t.descendantsOfType("field_declaration")) {
        if (f && !f.childForFieldName("name")) {
          const ty = f.childForFieldName("type");
          if (ty) out.push(bareTypeName(ty.text));
        }
      }
    } else if (t.type === "interface_type") {
      for (const c of t.namedChildren) if (c && c.type === "type_elem") out.push(bareTypeName(c.text));
    }
    return out;
  },
  imports: importsOf,
  receiverType(def) {
    const r = def.childForFieldName("receiver");
    const p = r?.namedChildren[0]?.childForFieldName("type");
    return p ? bareTypeName(p.text) : undefined;
  },
  packageName(root) {
    const clause = root.namedChildren.find((c) => c?.type === "package_clause");
    return clause?.namedChildren[0]?.text;
  },
  moduleDoc(root) {
    const clause = root.namedChildren.find((c) => c?.type === "package_clause");
    return clause ? leadingComment(clause) : cleanComment("");
  },
  selfNames: [],
  returnType,
  paramTypes,
  interfaceMethods,
  builtins: BUILTINS,
  directoryScope: true,
  resolveImport(spec, _from, project) {
    const dir = goDir(spec, project);
    return dir === undefined ? [] : withEntryFirst(project.filesIn(dir), dir);
  },
  importsFromAnywhere: true,
  defaultAlias: packageNameOf,
};

/** The package name an import path is used by, unless aliased: its last element, without `go-` or a `.vN` suffix. */
function packageNameOf(importPath: string): string {
  return importPath.slice(importPath.lastIndexOf("/") + 1).replace(/^go-|\.v\d+$/, "");
}

/**
 * The project directory of an import path. The project may be a module (its directories are
 * suffixes of import paths), a tree holding several (a directory ends with the import path), or a
 * subtree copy such as src/net ("net/http" → "http").
 */
function goDir(importPath: string, project: ProjectView): string | undefined {
  if (project.filesIn(importPath).length) return importPath;
  const parts = importPath.split("/");
  const tails = parts.slice(1).map((_, i) => parts.slice(i + 1).join("/"));
  if (importPath.includes("/")) {
    // The deepest directory ending with the whole import path (first in sorted order among equals).
    const deeper = project.dirsEndingWith(importPath).filter((d) => d !== importPath);
    if (deeper.length) return deeper.reduce((best, d) => (d.length > best.length ? d : best));
  }
  for (const t of tails) if (t.includes("/") && project.filesIn(t).length) return t;
  for (const t of tails) if (project.filesIn(t).length) return t;
  // The module's own root package (`github.com/spf13/cobra` imported from cobra's doc/): a module
  // path (its first element has a dot, which no standard library path has) whose last element names
  // the package of the project's root files.
  if (parts.length > 1 && parts[0].includes(".")) {
    const own = new Set(project.declaring(packageNameOf(importPath)));
    if (project.filesIn("").some((f) => own.has(f))) return "";
  }
  return undefined;
}

/**
 * A package's files with its entry file first (where an import's edge points): the file named after
 * the directory, else doc.go, else the first non-test file.
 */
function withEntryFirst(files: string[], dir: string): string[] {
  const name = dir.split("/").pop();
  const entry = files.find((f) => f.endsWith(`/${name}.go`) || f === `${name}.go`) ?? files.find((f) => f.endsWith("/doc.go") || f === "doc.go") ?? files.find((f) => !f.endsWith("_test.go")) ?? files[0];
  return entry === undefined ? [] : [entry, ...files.filter((f) => f !== entry)];
}
