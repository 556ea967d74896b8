import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { firstCommentBlock, leadingComment, nearestTo, type LanguageSpec, type ProjectView } from "./language.js";

/** Shell (bash, sh): functions, commands that name one, and `source` / `.` of a file. */
const QUERY = `
(function_definition name: (word) @name) @def.function
(command name: (command_name (word) @call.name)) @call
`;

/** A shebang, a licence or an editor mode line is no description. */
const NOT_DOC = /^#!|copyright|licen[cs]e|SPDX-License|vim?:|-\*-/i;

/**
 * The file a `source` / `.` names: a literal path, or the literal tail after the expansions that
 * locate it (`"$(dirname "$0")/util.sh"`, `"$BATS_ROOT/$LIBDIR/core/tracing.bash"`), kept as
 * `./util.sh`: beside the script, else by that tail anywhere in the project. A path computed
 * entirely at run time names nothing.
 */
function sourced(arg: TSNode | undefined): string | undefined {
  if (!arg) return undefined;
  if (arg.type === "word") return arg.text.startsWith("/") ? undefined : arg.text;
  if (arg.type !== "string" && arg.type !== "concatenation") return undefined;
  const parts = arg.namedChildren.filter((c): c is TSNode => !!c);
  const literal = (n: TSNode) => n.type === "string_content" || n.type === "word";
  if (parts.every(literal)) return parts.map((p) => p.text).join("");
  let i = parts.length;
  while (i > 0 && literal(parts[i - 1])) i--;
  const tail = parts.slice(i).map((p) => p.text).join("");
  return tail.startsWith("/") && tail.length > 1 ? `.${tail}` : undefined;
}

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const cmd of root.descendantsOfType("command")) {
    const name = cmd?.childForFieldName("name")?.text;
    if (name !== "source" && name !== ".") continue;
    const file = sourced(cmd!.childForFieldName("argument") ?? undefined);
    if (file) out.push({ module: file, names: [], line: cmd!.startPosition.row + 1 });
  }
  return out;
}

/** Beside the script first, then from the project root, then any project file ending with the path (the nearest). */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  const beside = path.posix.normalize(path.posix.join(path.posix.dirname(from.path), spec));
  if (!beside.startsWith("../") && project.has(beside)) return [beside];
  const rel = path.posix.normalize(spec).replace(/^(\.\.?\/)+/, "");
  if (project.has(rel)) return [rel];
  return nearestTo(from.path, project.filesEndingWith(rel));
}

export const bash: LanguageSpec = {
  id: "bash",
  extensions: [".sh", ".bash"],
  interpreters: ["sh", "bash", "dash", "ash", "ksh"],
  // tree-sitter-bash 0.25.1, not @vscode/tree-sitter-wasm's: that one read all of a file holding "\${#${a}[@]}" as one ERROR.
  grammar: "tree-sitter-bash/tree-sitter-bash.wasm",
  query: QUERY,
  // shellcheck directives above a function are not its documentation.
  docstring: (def) => leadingComment(def).split("\n").filter((l) => !/^shellcheck\s/.test(l)).join("\n").trim(),
  bases: () => [],
  imports: importsOf,
  moduleDoc: (root) => firstCommentBlock(root, NOT_DOC),
  selfNames: [],
  // A sourced file's functions are callable by name afterwards.
  globImports: true,
  resolveImport,
};
