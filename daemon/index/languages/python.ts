import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, unquote, type LanguageSpec, type ProjectView } from "./language.js";

const QUERY = `
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
(call function: (identifier) @call.name) @call
(call function: (attribute object: (_) @call.receiver attribute: (identifier) @call.name)) @call
(parameters (identifier) @local.name)
(lambda_parameters (identifier) @local.name)
(default_parameter name: (identifier) @local.name)
(typed_parameter (identifier) @local.name type: (type) @local.type)
(typed_default_parameter name: (identifier) @local.name type: (type) @local.type)
(list_splat_pattern (identifier) @local.name) @local.value
(dictionary_splat_pattern (identifier) @local.name) @local.value
(assignment left: (identifier) @local.name type: (type) @local.type)
(assignment left: (identifier) @local.name right: (_) @local.value)
(assignment left: (identifier) @local.name)
(assignment left: (pattern_list (identifier) @local.name))
(assignment left: (attribute object: (identifier) @_self attribute: (identifier) @local.field) type: (type) @local.type (#eq? @_self "self"))
(assignment left: (attribute object: (identifier) @_self attribute: (identifier) @local.field) right: (_) @local.value (#eq? @_self "self"))
(for_statement left: (identifier) @local.name)
(for_statement left: (pattern_list (identifier) @local.name))
(as_pattern_target (identifier) @local.name)
`;

/** Python's builtins: a receiver, a call or a type named so, and not defined by the project, is none of its. */
const BUILTINS = new Set(["super", "dict", "list", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float", "complex", "bool", "object", "type", "len", "open", "print", "isinstance", "issubclass", "getattr", "setattr", "hasattr", "delattr", "sorted", "reversed", "enumerate", "zip", "range", "iter", "next", "min", "max", "sum", "any", "all", "map", "filter", "repr", "hash", "id", "vars", "dir", "format", "round", "abs", "chr", "ord", "callable", "property", "staticmethod", "classmethod", "memoryview", "slice", "Exception", "BaseException", "ValueError", "TypeError", "KeyError", "IndexError", "RuntimeError", "AttributeError", "OSError", "NotImplementedError", "Any", "List", "Dict", "Set", "Tuple", "Iterable", "Iterator", "Mapping", "Sequence", "Callable", "Union"]);

function blockDocstring(body: TSNode | null): string {
  // The first child alone: a class body's `namedChildren` would make an object of every statement in it.
  const first = body?.namedChild(0);
  if (!first || first.type !== "expression_statement") return "";
  const str = first.namedChild(0);
  if (!str || str.type !== "string") return "";
  return dedent(unquote(str.text));
}

function dedent(s: string): string {
  const lines = s.split("\n");
  const indents = lines.slice(1).filter((l) => l.trim()).map((l) => l.match(/^\s*/)![0].length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [lines[0].trim(), ...lines.slice(1).map((l) => l.slice(cut))].join("\n").trim();
}

/**
 * An `@overload` (`typing.overload`, `t.overload`) signature followed in its block by another
 * definition of its name: the implementation is the node, and the stubs (`...` bodies, short) would
 * otherwise outrank it for its own name. In a `.pyi` file the last overload stands for the others.
 */
function isOverloadStub(def: TSNode): boolean {
  const decorated = def.parent;
  if (decorated?.type !== "decorated_definition") return false;
  const overload = decorated.namedChildren.some((c) => c?.type === "decorator" && /^@\s*(?:[A-Za-z_][A-Za-z0-9_]*\.)?overload\s*$/.test(c.text));
  if (!overload) return false;
  const name = def.childForFieldName("name")?.text;
  for (let next = decorated.nextNamedSibling; next; next = next.nextNamedSibling) {
    const fn = next.type === "decorated_definition" ? next.childForFieldName("definition") : next;
    if (fn?.type === "function_definition" && fn.childForFieldName("name")?.text === name) return true;
  }
  return false;
}

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  const visit = (n: TSNode) => {
    const line = n.startPosition.row + 1;
    if (n.type === "import_statement") {
      for (const c of n.namedChildren) {
        if (!c) continue;
        if (c.type === "dotted_name") out.push({ module: c.text, names: [], line });
        else if (c.type === "aliased_import") {
          const name = c.childForFieldName("name")?.text ?? "";
          out.push({ module: name, names: [], alias: c.childForFieldName("alias")?.text, line });
        }
      }
    } else if (n.type === "import_from_statement") {
      const mod = n.childForFieldName("module_name")?.text ?? "";
      const names: { name: string; alias: string }[] = [];
      for (const c of n.childrenForFieldName("name")) {
        if (!c) continue;
        if (c.type === "aliased_import") {
          const name = c.childForFieldName("name")?.text ?? "";
          names.push({ name, alias: c.childForFieldName("alias")?.text ?? name });
        } else names.push({ name: c.text, alias: c.text });
      }
      out.push({ module: mod, names, line });
    } else if (n.type === "if_statement" || n.type === "try_statement" || n.type === "block" || n.type.endsWith("_clause")) {
      // Imports guarded by try/except ImportError or `if TYPE_CHECKING:` still bind names.
      for (const c of n.namedChildren) if (c) visit(c);
    }
  };
  for (const c of root.namedChildren) if (c) visit(c);
  return out;
}

/** The absolute dotted module a (possibly relative) specifier names from a file: `..models` in `a/b/c.py` → `a.models`. */
function absoluteModule(spec: string, from: FileExtract): string {
  if (!spec.startsWith(".")) return spec;
  const level = spec.match(/^\.+/)![0].length;
  const pkg = (from.packageName ?? "").split(".");
  const isInit = from.path.endsWith("__init__.py");
  const base = pkg.slice(0, pkg.length - (isInit ? level - 1 : level));
  return [...base, spec.slice(level)].filter(Boolean).join(".");
}

/**
 * Whether a file found for `module` by suffix is a submodule of a package of the project instead
 * (`import json` is the standard library's, not `flask/json/`): the part of its path before the
 * suffix is a package (has an `__init__.py`), so its name is longer than `module`.
 */
function insidePackage(file: string, module: string, project: ProjectView): boolean {
  const dotted = file.replace(/\.pyi?$/, "").replace(/\/__init__$/, "").split("/");
  const prefix = dotted.slice(0, dotted.length - module.split(".").length);
  return prefix.length > 0 && (project.has(`${prefix.join("/")}/__init__.py`) || project.has(`${prefix.join("/")}/__init__.pyi`));
}

export const python: LanguageSpec = {
  id: "python",
  extensions: [".py", ".pyi"],
  interpreters: ["python", "pypy"],
  grammar: "tree-sitter-python.wasm",
  query: QUERY,
  docstring: (def) => blockDocstring(def.childForFieldName("body")),
  bases(def) {
    const sup = def.childForFieldName("superclasses");
    if (!sup) return [];
    // A generic base (`ProxyMixin[Flask]`) is its class.
    return sup.namedChildren
      .map((c) => (c?.type === "subscript" ? c.childForFieldName("value") : c))
      .filter((c): c is TSNode => !!c && (c.type === "identifier" || c.type === "attribute"))
      .map((c) => bareTypeName(c.text));
  },
  imports: importsOf,
  declarationOnly: isOverloadStub,
  moduleDoc: (root) => blockDocstring(root),
  packageName: (_root, path) =>
    path
      .replace(/\.pyi?$/, "")
      .replace(/\/__init__$/, "")
      .split("/")
      .join("."),
  selfNames: ["self", "cls"],
  returnType: (def) => def.childForFieldName("return_type")?.text,
  builtins: BUILTINS,
  // The project may be a subtree of the package root: a module is found by its dotted suffix.
  resolveImport: (spec, from, project) => {
    const abs = absoluteModule(spec, from);
    return project.declaring(abs, { suffix: true }).filter((f) => !insidePackage(f, abs, project)).slice(0, 1);
  },
  submoduleSpec: (spec, name) => (spec.endsWith(".") ? `${spec}${name}` : `${spec}.${name}`),
  defaultAlias: (spec) => spec.split(".")[0],
};
