import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, LanguageId, NodeKind, RawImport } from "../types.js";
import type { TsPaths } from "../ts-paths.js";
import { sharedDirs } from "../../../shared/paths.js";

/**
 * What a language's import resolution may ask about the project. Every question is recorded (see
 * `project-files.ts`), so an edit re-resolves exactly the files whose answers it can change; a hook
 * must ask only through this view. Answers are scoped to the asking file's language family.
 */
export interface ProjectView {
  /** Whether a project-relative POSIX path is an indexed source file of the family. */
  has(path: string): boolean;
  /** Indexed files directly in `dir` ("" is the root), sorted. */
  filesIn(dir: string): string[];
  /** Indexed files whose path ends with `suffix` at a "/" boundary (or equals it), sorted. */
  filesEndingWith(suffix: string): string[];
  /** Directories holding indexed files whose path ends with `suffix` at a "/" boundary (or equals it), sorted. */
  dirsEndingWith(suffix: string): string[];
  /**
   * Files whose `packageName` is `name`, sorted; with `suffix`, also those whose name ends with it
   * after a separator (`.`, `\\`, `::` or `/`): a project may be a subtree of the package root.
   */
  declaring(name: string, opts?: { suffix?: boolean }): string[];
  /** The module path aliases in force for a file (tsconfig/jsconfig `paths` and `baseUrl`). */
  pathAliases(file: string): TsPaths | undefined;
}

/**
 * A language is its grammar, one query and a few hooks. The query's captures follow one convention:
 *  - `@def.<kind>` on a definition node with `@name` on its name (`kind` is a NodeKind, or `impl`
 *    for a container that only names the receiver type of the methods inside it, via `@name`, or
 *    `scope` for a namespace that only prefixes the qualified names inside it, `ns.f`, or `local` for a
 *    block whose definitions are local to it and no nodes, Zig's `test` blocks);
 *  - `@call` on a call with `@call.name` and optionally `@call.receiver`;
 *  - `@decl` on the name of a function declared and not defined here (a C prototype): a `declares`
 *    edge joins the file to the definition the name resolves to;
 *  - `@import` on a node the language's `imports` hook reads (C's `#include`): the query visits every
 *    node anyway, and a walk of the tree for them cost as much again (coreutils: 0.9 s of 5.6);
 *  - `@local.name` on a name a definition binds (a parameter, a variable, a field in a type's body),
 *    with `@local.type` on its declared type or `@local.value` on the value assigned (C#'s
 *    `DateTimeParser p`, TypeScript's `(s: Subscriber<T>)`, Go's `x := New()`): a call on it (`p.Parse()`)
 *    inside the definition binding it, or one nested in it, has that type or value as its receiver
 *    (`DateTimeParser.Parse`), and a bare call of it is none of the project's definitions (shadowing);
 *    `@local.field` instead of `@local.name` for a field of the enclosing type (`this.x = new C()`).
 */
export interface LanguageSpec {
  id: LanguageId;
  extensions: string[];
  /** Interpreters naming the language on the `#!` line of a script without an extension (`python3.11` counts as `python`). */
  interpreters?: string[];
  /** The grammar: a file name in @vscode/tree-sitter-wasm/wasm, or a package path to a `.wasm` (pin that package's version). */
  grammar: string;
  query: string;
  /**
   * The source with what the grammar cannot parse blanked to spaces (same length: every position
   * holds), parsed instead when the file does not parse and this does (C#'s `#if` inside a base
   * list leaves the whole class an ERROR, its methods loose functions).
   */
  lenientSource?(source: string): string;
  /**
   * The lenient parse is kept when its errors cover fewer bytes, not only when it has none: its
   * source only blanks what the grammar cannot read (C++'s macros), never joins code that was apart
   * (C#'s blanked `#if`/`#else` keeps both branches, which parses worse than it counts).
   */
  lenientPartly?: boolean;
  /** A definition's name where its `@name` capture's text is not it (C++'s `operator bool() const` is `operator bool`). */
  definitionName?(name: TSNode): string;
  /** Documentation attached to a definition (docstring or leading comment), plain text. */
  docstring(def: TSNode, kind: NodeKind): string;
  /** Base classes or implemented interfaces named by a class-like definition. */
  bases(def: TSNode): string[];
  /**
   * Imports at file level. `captured`: the nodes the query's `@import` patterns matched, in source
   * order, for a hook that reads them there instead of walking the whole tree again (C's includes).
   */
  imports(root: TSNode, captured: TSNode[]): RawImport[];
  /** A function's declared return type as written (`: Observable<T>`, `-> Response`, Go's first result). */
  returnType?(def: TSNode): string | undefined;
  /** Its parameters' declared types as written, by position ("" for an untyped one). */
  paramTypes?(def: TSNode): string[] | undefined;
  /** An interface's own method specs as `name/arity`, for structural dispatch (Go: a type satisfies an interface by its methods). */
  interfaceMethods?(def: TSNode): string[] | undefined;
  /**
   * An untyped parameter of a function passed as an argument (`operate((source, subscriber) => …)`):
   * the call's callee text, the argument's and the parameter's positions; its type is the callee's
   * parameter's (contextual typing).
   */
  contextualParam?(name: TSNode): { callee: string; arg: number; param: number } | undefined;
  /** A call's arguments, where the language chooses among overloads by them (`overloads`). */
  callArgs?(call: TSNode): TSNode[] | undefined;
  /** The type an argument's syntax alone gives it (a literal's, a cast's), as written; `λ` for a function literal. */
  argType?(arg: TSNode): string | undefined;
  /**
   * Methods of one name in one class are overloads told apart by their parameters (Java): a call
   * links to the class's ones taking its arguments (`paramTypes`, a varargs one ending in `...`),
   * by their number, then by the types known of them.
   */
  overloads?: boolean;
  /** Names the language defines everywhere (`Object`, `dict`, `len`): a receiver or call of one the project does not define is no call of the project. */
  builtins?: ReadonlySet<string>;
  /** The receiver type of a method declared outside its type (Go), if any. */
  receiverType?(def: TSNode): string | undefined;
  /** The package or module name other files use for this file. */
  packageName?(root: TSNode, path: string): string | undefined;
  /**
   * The class other languages of the family see a file's top-level functions in (Kotlin's
   * `Strings.kt` → `StringsKt`): a name of the file's package standing for the file itself.
   */
  fileClass?(root: TSNode, path: string): string | undefined;
  /** A call's receiver written as an accessor of a type, as the type's name (Java's `Foo.Companion` of a Kotlin class → `Foo`). */
  typeReceiver?(receiver: string): string | undefined;
  /** Module-level documentation. */
  moduleDoc(root: TSNode): string;
  /** Receiver words meaning "this object". */
  selfNames: string[];
  /** A bare call inside a class may name a method of the class (Java's `label()` for `this.label()`). */
  implicitSelf?: boolean;
  /** Languages whose code calls each other directly share a family (TS, TSX and JS; Java, Kotlin and Scala); default: the id. */
  family?: string;
  /** Files of one directory share their top-level names without imports (a Go or Java package). */
  directoryScope?: boolean;
  /** A file sees its package's names in every directory holding it, as an import of its `packageName` finds them (Java's main and test trees). */
  packageImport?: boolean;
  /**
   * Files an import specifier names, in order: the `imports` edge points at the first (a package's
   * entry file), and every one is searched for the names the import binds. [] when it names nothing
   * in the project (a standard or third-party module).
   */
  resolveImport?(spec: string, from: FileExtract, project: ProjectView): string[];
  /** `resolveImport` reads the specifier and the project, never the importing file: one answer serves every file importing it. */
  importsFromAnywhere?: boolean;
  /**
   * The specifier of a submodule imported by name (`from pkg import mod` → `pkg.mod`), tried when
   * the name is not defined in the module itself.
   */
  submoduleSpec?(spec: string, name: string): string;
  /**
   * An import makes the imported files' top-level names visible unqualified (C/C++ `#include`,
   * Haskell, Kotlin/Swift/Scala/Dart package imports, Elixir `import`, C# `using`, PHP `use`).
   */
  globImports?: boolean;
  /**
   * A file's package names its module table (Lua's returned `M`): a name the module does not define
   * at file level is looked up among that table's members.
   */
  moduleTable?: boolean;
  /**
   * The body of a definition that the grammar keeps beside it, not inside (Dart's `function_body`
   * after a `method_signature`): the definition's lines and code run to its end, its signature is the
   * definition node's whole text.
   */
  bodyAfter?(def: TSNode): TSNode | undefined;
  /**
   * A definition that only declares another one defined after it, and is no node of its own
   * (Python's `@overload` signatures before their implementation).
   */
  declarationOnly?(def: TSNode): boolean;
  /** A file is itself a type whose members are its top-level definitions (Zig): `self.f()` outside any type names the file's `f`. */
  fileStruct?: boolean;
  /** The local name a whole-module import binds when it names no alias (Go `net/http` → `http`). */
  defaultAlias?(spec: string): string | undefined;
  /**
   * A definition's signature when the grammar marks no body to cut at (Elixir's `def f(x), do: …` is
   * one call) or it is no head of the definition's text (Haskell's type signature, or an equation's
   * head before its `=`): the extractor's cut at the body is the default.
   */
  signature?(def: TSNode): string;
  /** Whether a captured call is one (Elixir writes a def's head and a typespec as calls); default: every capture is. */
  isCall?(call: TSNode): boolean;
  /**
   * Definitions of one name written one after another in one scope are clauses of one function
   * (Elixir's `def f(0)`, `def f(n)`): one node spanning them, with the first one's signature and the first doc.
   */
  clauses?: boolean;
  /**
   * Every call receiver the query captures names a module (Elixir's `Enum.map(…)`): one naming
   * nothing of the project is a module outside it, and its calls are not matched by name.
   */
  moduleReceivers?: boolean;
}

/** The family of a language: languages of one family resolve names across each other. */
export function familyOf(spec: Pick<LanguageSpec, "id" | "family">): string {
  return spec.family ?? spec.id;
}

/**
 * Joins the comment lines directly above a node (no blank line between), markers stripped. Siblings
 * of a type in `between` (Rust's `#[derive(…)]`, written between a doc comment and its item) are
 * stepped over, not read.
 */
export function leadingComment(node: TSNode, between?: ReadonlySet<string>): string {
  const lines: string[] = [];
  let prev = node.previousNamedSibling;
  let expectRow = node.startPosition.row;
  while (prev && (prev.type.endsWith("comment") || between?.has(prev.type)) && prev.endPosition.row >= expectRow - 1) {
    if (prev.type.endsWith("comment")) lines.unshift(prev.text);
    expectRow = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  return cleanComment(lines.join("\n"));
}

export function cleanComment(text: string): string {
  return text
    .replace(/^\s*\/\*+/, "")
    .replace(/\*\/\s*$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*(\/\/+|\*+|#+)\s?/, "").trimEnd())
    .join("\n")
    .trim();
}

/** Unquotes a string literal's text. */
export function unquote(s: string): string {
  return s.replace(/^[rbuRBUf]*("""|'''|"|'|`)/, "").replace(/("""|'''|"|'|`)$/, "");
}

/** Strips generics and pointer/reference markers from a type as written: `*Server[T]` → `Server`. */
export function bareTypeName(text: string): string {
  const m = text.replace(/^[\s*&(]+|mut\s+/g, "").match(/[A-Za-z_][A-Za-z0-9_]*(?:\s*(?:\.|::)\s*[A-Za-z_][A-Za-z0-9_]*)*/);
  if (!m) return text.trim();
  const parts = m[0].split(/\s*(?:\.|::)\s*/);
  return parts[parts.length - 1];
}

/** Of several candidate files, the one sharing the most directories with `from` (the first on a tie); [] for none. */
export function nearestTo(from: string, files: string[]): string[] {
  if (files.length <= 1) return files;
  return [files.reduce((best, f) => (sharedDirs(f, from) > sharedDirs(best, from) ? f : best))];
}

/** The files declaring an imported package (Kotlin, Scala); a project may hold a subtree of it: by suffix. */
export function resolveByPackage(spec: string, _from: FileExtract, project: ProjectView): string[] {
  return spec ? project.declaring(spec, { suffix: true }) : [];
}

/** Consecutive line comments starting at `first` (languages whose comments are one node per line): their text and the last one. */
export function commentBlock(first: TSNode): { text: string; last: TSNode } {
  const lines = [first.text];
  let last = first;
  // One sibling asked for per line: tree-sitter finds a node's next sibling from its parent's first child.
  for (let next = first.nextNamedSibling; next?.type === "comment" && next.startPosition.row === last.endPosition.row + 1; next = next.nextNamedSibling) {
    last = next;
    lines.push(last.text);
  }
  return { text: lines.join("\n"), last };
}

/**
 * A file's description: its first block of line comments that `skip` does not reject (a shebang,
 * magic comments, a licence) and that is not glued to the definition after it.
 */
export function firstCommentBlock(root: TSNode, skip: RegExp): string {
  let c: TSNode | null | undefined = root.namedChildren[0];
  while (c?.type === "comment") {
    const block = commentBlock(c);
    const next = block.last.nextNamedSibling;
    if (!skip.test(block.text)) return next && next.type !== "comment" && next.startPosition.row <= block.last.endPosition.row + 1 ? "" : cleanComment(block.text);
    c = next;
  }
  return "";
}

/** A licence header: never a file's description. */
export const LICENCE = /copyright|licen[cs]e|SPDX-License/i;

/**
 * A file's description in languages of block comments: its first comment that `skip` does not
 * reject (a licence) and that is not glued to the definition after it. Nodes of a `preamble` type
 * (PHP's `<?php`, a `declare`) may stand before it.
 */
export function fileComment(root: TSNode, skip: RegExp = LICENCE, preamble: ReadonlySet<string> = new Set()): string {
  // Sibling by sibling: the first few decide, and `namedChildren` made a node of every top-level declaration (coreutils: 2 % of extraction).
  for (let c = root.firstNamedChild; c; c = c.nextNamedSibling) {
    if (preamble.has(c.type)) continue;
    if (!c.type.endsWith("comment")) return "";
    if (skip.test(c.text)) continue;
    const next = c.nextNamedSibling;
    if (next && !next.type.endsWith("comment") && next.startPosition.row <= c.endPosition.row + 1) return "";
    return cleanComment(c.text);
  }
  return "";
}
