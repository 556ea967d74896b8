import type { Node as TSNode } from "web-tree-sitter";
import type { LanguageId, NodeKind, RawImport } from "../types.js";

/**
 * A language is its grammar, one query and a few hooks. The query's captures follow one convention:
 *  - `@def.<kind>` on a definition node with `@name` on its name (`kind` is a NodeKind, or `impl`
 *    for a container that only names the receiver type of the methods inside it, via `@name`);
 *  - `@call` on a call with `@call.name` and optionally `@call.receiver`.
 */
export interface LanguageSpec {
  id: LanguageId;
  extensions: string[];
  /** File name of the grammar in @vscode/tree-sitter-wasm/wasm. */
  grammar: string;
  query: string;
  /** Documentation attached to a definition (docstring or leading comment), plain text. */
  docstring(def: TSNode, kind: NodeKind): string;
  /** Base classes or implemented interfaces named by a class-like definition. */
  bases(def: TSNode): string[];
  /** Imports at file level. */
  imports(root: TSNode): RawImport[];
  /** The receiver type of a method declared outside its type (Go), if any. */
  receiverType?(def: TSNode): string | undefined;
  /** The package or module name other files use for this file. */
  packageName?(root: TSNode, path: string): string | undefined;
  /** Module-level documentation. */
  moduleDoc(root: TSNode): string;
  /** Receiver words meaning "this object". */
  selfNames: string[];
  /** A bare call inside a class may name a method of the class (Java's `label()` for `this.label()`). */
  implicitSelf?: boolean;
}

/** Joins the comment lines directly above a node (no blank line between), markers stripped. */
export function leadingComment(node: TSNode): string {
  const lines: string[] = [];
  let prev = node.previousNamedSibling;
  let expectRow = node.startPosition.row;
  while (prev && prev.type.endsWith("comment") && prev.endPosition.row >= expectRow - 1) {
    lines.unshift(prev.text);
    expectRow = prev.startPosition.row;
    prev = prev.previousNamedSibling;
  }
  return cleanComment(lines.join("\n"));
}

export function cleanComment(text: string): string {
  return text
    .replace(/^\s*\/\*\*?/, "")
    .replace(/\*\/\s*$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*(\/\/+|\*|#+)\s?/, "").trimEnd())
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
