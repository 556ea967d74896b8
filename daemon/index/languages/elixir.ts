import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { cleanComment, firstCommentBlock, LICENCE, nearestTo, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Elixir. Everything is a call: `defmodule A.B do … end` is a class named by its alias as written
 * (`A.B`; one nested in it is `A.B.C` by qualification), a struct when it defines one (`defstruct`,
 * `defexception`), `defprotocol` an interface; `def`/`defp`/`defmacro`/`defmacrop`/`defguard`/
 * `defdelegate` are functions of their module, clauses of one name written together one node
 * (`clauses`). A top-level `defimpl P, for: T` prefixes its functions with `T` (it is no node: `T`
 * is defined elsewhere, and `P.T`, the module Elixir makes, cannot be named from the text); one
 * inside a module, or `for: __MODULE__`, adds them to the module. Calls: `f(…)` and `x |> f` in the
 * module, `Mod.f(…)` through aliases or by the module's full name, `__MODULE__.f(…)`.
 */
const DEFS = `"def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate"`;
const KEYWORDS = `${DEFS} "defmodule" "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable" "alias" "import" "require" "use" "case" "cond" "if" "unless" "for" "with" "try" "receive" "quote" "unquote" "unquote_splicing" "raise" "reraise" "throw" "super" "fn"`;
const QUERY = `
(call target: (identifier) @kw (arguments . (alias) @name) (do_block (call target: (identifier) @s (#any-of? @s "defstruct" "defexception"))) (#eq? @kw "defmodule")) @def.struct
(call target: (identifier) @kw (arguments . (alias) @name) (#eq? @kw "defmodule")) @def.class
(call target: (identifier) @kw (arguments . (alias) @name) (#eq? @kw "defprotocol")) @def.interface
(source (call target: (identifier) @kw (arguments . (alias) (keywords (pair key: (keyword) @for value: (alias) @name))) (#eq? @kw "defimpl") (#match? @for "^for:")) @def.scope)
(call target: (identifier) @kw (arguments . [(identifier) @name (call target: (identifier) @name) (binary_operator left: [(call target: (identifier) @name) (identifier) @name] operator: "when")]) (#any-of? @kw ${DEFS})) @def.function
(call target: (identifier) @call.name (#not-any-of? @call.name ${KEYWORDS})) @call
(call target: (dot left: (alias) @call.receiver right: (identifier) @call.name) (arguments)) @call
(call target: (dot left: (identifier) @call.receiver right: (identifier) @call.name (#eq? @call.receiver "__MODULE__")) (arguments)) @call
(binary_operator operator: "|>" right: (identifier) @call.name) @call
`;

const DEF_WORDS = new Set(DEFS.split(" ").map((w) => w.slice(1, -1)));
/** Attributes written as calls that are types, not code: their calls are no calls. */
const TYPESPECS = new Set(["spec", "type", "typep", "opaque", "callback", "macrocallback"]);

/** The keyword a definition call starts with (`def`, `defmodule`), or "". */
function keyword(call: TSNode | null | undefined): string {
  const t = call?.type === "call" ? call.childForFieldName("target") : null;
  return t?.type === "identifier" ? t.text : "";
}

/** A module attribute `@name value`: its name, or "". */
function attribute(n: TSNode | null | undefined): string {
  return n?.type === "unary_operator" && n.childForFieldName("operator")?.text === "@" ? keyword(n.childForFieldName("operand")) : "";
}

function args(call: TSNode): TSNode[] {
  return (call.namedChildren.find((c) => c?.type === "arguments")?.namedChildren ?? []) as TSNode[];
}

/** A def's head (`f(a, b) when is_list(a)`) is no call, and neither are the types of a typespec. */
function isCall(call: TSNode): boolean {
  const p = call.parent;
  const head = p?.type === "binary_operator" && p.childForFieldName("operator")?.text === "when" && p.childForFieldName("left")?.id === call.id ? p : call;
  const list = head.parent;
  if (list?.type === "arguments" && list.namedChildren[0]?.id === head.id && DEF_WORDS.has(keyword(list.parent))) return false;
  for (let a = p; a && a.type !== "do_block" && a.type !== "source"; a = a.parent) if (TYPESPECS.has(attribute(a))) return false;
  return true;
}

/** The text of a string or sigil literal (`"…"`, `"""…"""`, `~S"""…"""`), heredocs dedented; "" for anything else. */
function literal(n: TSNode | null | undefined): string {
  if (n?.type !== "string" && n?.type !== "sigil" && n?.type !== "charlist") return "";
  const text = n.namedChildren.filter((c) => c && c.type !== "sigil_name" && c.type !== "sigil_modifiers").map((c) => c!.text).join("");
  const lines = text.replace(/^\n/, "").split("\n");
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)![0].length));
  return lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join("\n").trim();
}

/** `@moduledoc` in a module's body. */
function moduleDocOf(def: TSNode): string {
  const body = def.namedChildren.find((c) => c?.type === "do_block");
  const attr = body?.namedChildren.find((c) => attribute(c) === "moduledoc");
  return attr ? literal(args(attr.childForFieldName("operand")!)[0]) : "";
}

/**
 * A function's `@doc` (`@doc false` hides it), above it among its other attributes (`@spec`,
 * `@impl`) and comments; else the comment lines directly above it or its attributes.
 */
function docstring(def: TSNode): string {
  const kw = keyword(def);
  if (kw === "defmodule" || kw === "defprotocol") return moduleDocOf(def);
  const comments: string[] = [];
  let row = def.startPosition.row;
  for (let p = def.previousNamedSibling; p; p = p.previousNamedSibling) {
    const attr = attribute(p);
    if (attr === "doc") {
      const value = args(p.childForFieldName("operand")!)[0];
      if (value?.type === "boolean") return "";
      const text = literal(value);
      if (text) return text;
    } else if (p.type === "comment" && p.endPosition.row >= row - 1) comments.unshift(p.text);
    else if (!attr) break;
    row = p.startPosition.row;
  }
  return cleanComment(comments.join("\n"));
}

/** `def f(a, b) when …` without its body, after the function's `@spec` when it has one. */
function signature(def: TSNode): string {
  const kw = keyword(def);
  const first = args(def)[0];
  if (!first) return kw;
  if (!DEF_WORDS.has(kw)) return `${kw} ${args(def).filter((a) => a.type !== "keywords" || kw === "defimpl").map((a) => a.text).join(", ")}`;
  const head = `${kw} ${first.text}`;
  for (let p = def.previousNamedSibling; p && (attribute(p) || p.type === "comment"); p = p.previousNamedSibling) {
    if (attribute(p) === "spec") return `${head}; @spec ${args(p.childForFieldName("operand")!)[0]?.text ?? ""}`;
  }
  return head;
}

/** The full name of the module a node sits in (`A.B` and `C` nested in it: `A.B.C`), or "". */
function enclosingModule(n: TSNode): string {
  const parts: string[] = [];
  for (let p = n.parent; p; p = p.parent) {
    if (p.type === "call" && keyword(p) === "defmodule") {
      const a = args(p)[0];
      if (a?.type === "alias") parts.unshift(a.text);
    }
  }
  return parts.join(".");
}

/** An alias as written, `__MODULE__` expanded to the module the reference sits in. */
function moduleName(n: TSNode): string | undefined {
  if (n.type === "alias") return n.text;
  if (n.type === "identifier" && n.text === "__MODULE__") return enclosingModule(n) || undefined;
  if (n.type === "dot") {
    const left = n.childForFieldName("left");
    const right = n.childForFieldName("right");
    const base = left ? moduleName(left) : undefined;
    return base && right?.type === "alias" ? `${base}.${right.text}` : undefined;
  }
  return undefined;
}

/** The keyword list of a call's arguments: `as:`, `only:`. */
function option(call: TSNode, key: string): TSNode | undefined {
  const kws = args(call).find((a) => a.type === "keywords");
  return kws?.namedChildren.find((p) => p?.childForFieldName("key")?.text.replace(/:\s*$/, "") === key)?.childForFieldName("value") ?? undefined;
}

/**
 * `alias A.B` (binds B; `as: C` binds C), `alias A.{B, C}`, `require A.B` and `use A.B` (bind
 * `A.B` itself), `import A.B` (whole, or the names of `only: [f: 1]`), anywhere but inside a
 * `quote` (code a macro writes into its caller). `__MODULE__` is the enclosing module.
 */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  const visit = (n: TSNode) => {
    for (const c of n.namedChildren) {
      if (!c) continue;
      const kw = keyword(c);
      if (kw === "quote") continue;
      if (kw === "alias" || kw === "import" || kw === "require" || kw === "use") importOf(c, kw, out);
      visit(c);
    }
  };
  visit(root);
  return out;
}

function importOf(call: TSNode, kw: string, out: RawImport[]): void {
  const target = args(call)[0];
  if (!target) return;
  const line = call.startPosition.row + 1;
  const right = target.type === "dot" ? target.childForFieldName("right") : null;
  if (kw === "alias" && right?.type === "tuple") {
    const base = moduleName(target.childForFieldName("left")!);
    for (const a of right.namedChildren) {
      if (base && a?.type === "alias") out.push({ module: `${base}.${a.text}`, names: [{ name: `${base}.${a.text}`, alias: a.text.split(".").pop()! }], line });
    }
    return;
  }
  const module = moduleName(target);
  if (!module) return;
  if (kw === "alias") {
    const as = option(call, "as");
    out.push({ module, names: [{ name: module, alias: as?.type === "alias" ? as.text : module.split(".").pop()! }], line });
  } else if (kw === "import") {
    const only = option(call, "only");
    const names = only?.type === "list" ? (only.namedChildren[0]?.namedChildren ?? []).flatMap((p) => (p?.type === "pair" ? [p.childForFieldName("key")!.text.replace(/:\s*$/, "")] : [])) : [];
    out.push({ module, names: [...new Set(names)].map((name) => ({ name, alias: name })), line });
  } else {
    out.push({ module, names: [{ name: module, alias: module }], line });
  }
}

/**
 * The module a file is named for (`Shop.Price` in `lib/shop/price.ex`), else the first it defines at
 * its top: what `declaring` finds the file by, and whose functions `import` brings.
 */
function packageName(root: TSNode, path: string): string | undefined {
  const names = root.namedChildren.flatMap((c) => {
    const a = keyword(c) === "defmodule" || keyword(c) === "defprotocol" ? args(c!)[0] : undefined;
    return a?.type === "alias" ? [a.text] : [];
  });
  const stem = `/${path.replace(/\.exs?$/, "")}`;
  return names.find((n) => stem.endsWith(`/${fileOf(n)}`)) ?? names[0];
}

/** The first module's `@moduledoc`; else the file's first comment block that is no licence. */
function moduleDoc(root: TSNode): string {
  for (const c of root.namedChildren) {
    if (c && (keyword(c) === "defmodule" || keyword(c) === "defprotocol")) {
      const doc = moduleDocOf(c);
      if (doc) return doc;
    }
  }
  return firstCommentBlock(root, LICENCE);
}

/** `MyApp.FooBar` → `my_app/foo_bar`, as Mix names files. */
function fileOf(module: string): string {
  return module
    .split(".")
    .map((s) => s.replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2").replace(/([a-z\d])([A-Z])/g, "$1_$2").toLowerCase())
    .join("/");
}

/**
 * The file defining a module: the one whose first module it is, else by the convention
 * `MyApp.FooBar` → `my_app/foo_bar.ex` (the nearest by path suffix); a module defined beside or
 * inside its parent (`A.B` in `a.ex`) is found through the parent. Erlang modules (`:ets`) and
 * modules outside the project name nothing.
 */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  if (!/^[A-Z]\w*(\.[A-Z]\w*)*$/.test(spec)) return [];
  for (let parts = spec.split("."); parts.length; parts = parts.slice(0, -1)) {
    const declared = project.declaring(parts.join("."));
    if (declared.length) return nearestTo(from.path, declared);
    for (const ext of [".ex", ".exs"]) {
      const hits = project.filesEndingWith(fileOf(parts.join(".")) + ext);
      if (hits.length) return nearestTo(from.path, hits);
    }
  }
  return [];
}

export const elixir: LanguageSpec = {
  id: "elixir",
  extensions: [".ex", ".exs"],
  grammar: "tree-sitter-elixir/tree-sitter-elixir.wasm",
  query: QUERY,
  docstring,
  bases: () => [],
  imports: importsOf,
  packageName,
  moduleDoc,
  selfNames: ["__MODULE__"],
  implicitSelf: true,
  // `import A` makes A's functions visible unqualified: the functions of the module a file is named for (its first).
  globImports: true,
  moduleTable: true,
  resolveImport,
  signature,
  isCall,
  clauses: true,
  moduleReceivers: true,
};
