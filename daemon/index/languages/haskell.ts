import type { Node as TSNode } from "web-tree-sitter";
import type { FileExtract, RawImport } from "../types.js";
import { LICENCE, nearestTo, type LanguageSpec, type ProjectView } from "./language.js";

/**
 * Haskell. A function is its type signature and all its equations, one node: the grammar keeps each
 * equation (and the signature) as a sibling, so `bodyAfter` runs a definition to the last adjacent
 * equation of its name and the later ones fall inside it. Its signature is the type signature
 * (`f :: A -> B`), else the first equation's head. `data` and `newtype` are structs, `type`
 * synonyms types, type classes interfaces holding their methods; an `instance` names the type its
 * methods join (`instance Show QName` → `QName.show`, and QName inherits Show), or, for a list,
 * tuple or variable type, its class (`instance Node [Attr]` → `Node.node`). Record fields and
 * functions local to a `where` or `let` are no nodes (their calls count for the enclosing one).
 * A class's default method bodies are no nodes of their own (the class's signature is the method).
 * Calls are applications (`f x`, `M.f x`, `` x `f` y ``, `f $ x`, `f . g`), constructors too.
 */
/** A type constructor, applied to up to three arguments (`Mod f a`): its name is @name. */
const CON = "[(name) @name (qualified id: (name) @name)]";
const TYPE_HEAD = [CON, `(apply constructor: ${CON})`, `(apply constructor: (apply constructor: ${CON}))`, `(apply constructor: (apply constructor: (apply constructor: ${CON})))`].join(" ");

const QUERY = `
(signature name: (variable) @name) @def.function
(signature name: (prefix_id (operator) @name)) @def.function
(declarations [(function name: (variable) @name) (function name: (prefix_id (operator) @name)) (function (infix operator: [(operator) @name (infix_id (variable) @name)])) (bind name: (variable) @name)] @def.function)
(instance_declarations [(function name: (variable) @name) (function name: (prefix_id (operator) @name)) (function (infix operator: [(operator) @name (infix_id (variable) @name)])) (bind name: (variable) @name)] @def.function)
(data_type name: (name) @name) @def.struct
(newtype name: (name) @name) @def.struct
(type_synomym name: (name) @name) @def.type
(class name: (name) @name) @def.interface
(instance patterns: (type_patterns . [${TYPE_HEAD} (parens [${TYPE_HEAD}])])) @def.impl
(instance name: [(name) @name (qualified id: (name) @name)] patterns: (type_patterns . [(list) (tuple) (unit) (variable) (function) (infix) (parens [(list) (tuple) (unit) (function) (infix) (apply constructor: [(variable) (parens) (list)])])])) @def.impl
(apply function: [(variable) (constructor)] @call.name) @call
(apply function: (qualified module: (module) @call.receiver id: [(variable) (constructor)] @call.name)) @call
(infix operator: (infix_id (variable) @call.name)) @call
(infix operator: (infix_id (qualified module: (module) @call.receiver id: (variable) @call.name))) @call
(infix left_operand: (variable) @call.name operator: (operator) @op (#any-of? @op "$" "$!" "." "<$>" "<&>" "=<<")) @call
(infix left_operand: (qualified module: (module) @call.receiver id: (variable) @call.name) operator: (operator) @op (#any-of? @op "$" "$!" "." "<$>" "=<<")) @call
(infix operator: (operator) @op right_operand: (variable) @call.name (#any-of? @op "." ">>=" "&")) @call
(infix operator: (operator) @op right_operand: (qualified module: (module) @call.receiver id: (variable) @call.name) (#any-of? @op "." ">>=" "&")) @call
`;

const COMMENTS = new Set(["comment", "haddock"]);
/** Between equations of one function: comments, pragmas (`{-# INLINE f #-}`) and CPP lines. */
const BETWEEN = new Set(["comment", "haddock", "pragma", "cpp"]);
const EQUATIONS = new Set(["function", "bind"]);

/** The name a signature or an equation defines: `f`, an operator's `<+>`. */
function nameOf(def: TSNode): string | undefined {
  const name = def.childForFieldName("name");
  if (name) return name.type === "prefix_id" ? name.namedChildren[0]?.text : name.text;
  const infix = def.type === "function" ? def.namedChildren.find((c) => c?.type === "infix") : undefined;
  const op = infix?.childForFieldName("operator");
  return op?.type === "infix_id" ? op.namedChildren[0]?.text : op?.text;
}

/** The last of the equations of the same name right after a signature or a first equation. */
function bodyAfter(def: TSNode): TSNode | undefined {
  if (def.type !== "signature" && !EQUATIONS.has(def.type)) return undefined;
  const name = nameOf(def);
  let last: TSNode | undefined;
  for (let n = def.nextNamedSibling; n; n = n.nextNamedSibling) {
    if (BETWEEN.has(n.type)) continue;
    if (!EQUATIONS.has(n.type) || nameOf(n) !== name) break;
    last = n;
  }
  return last;
}

/** The text of a node up to `end` (a child), comments inside left out, whitespace collapsed. */
function headText(def: TSNode, end?: TSNode | null): string {
  const stop = end?.startIndex ?? def.endIndex;
  let text = "";
  let at = def.startIndex;
  for (const c of def.descendantsOfType([...COMMENTS])) {
    if (!c || c.startIndex >= stop) break;
    text += def.text.slice(at - def.startIndex, c.startIndex - def.startIndex);
    at = c.endIndex;
  }
  text += def.text.slice(at - def.startIndex, stop - def.startIndex);
  return text.replace(/\s+/g, " ").trim();
}

/** `f :: A -> B`; an equation's head (`go n`); a type without its deriving clause; a class without its body. */
function signature(def: TSNode): string {
  if (def.type === "signature" || def.type === "type_synomym") return headText(def);
  if (EQUATIONS.has(def.type)) return headText(def, def.childForFieldName("match") ?? def.childForFieldName("binds"));
  if (def.type === "class") return headText(def, def.childForFieldName("declarations")).replace(/\s+where$/, "");
  return headText(def, def.childForFieldName("deriving"));
}

/** The node before `n` in the source: its previous sibling, or that of the nearest ancestor having one, at its deepest last child. */
function nodeBefore(n: TSNode): TSNode | undefined {
  let cur: TSNode | null = n;
  while (cur && !cur.previousNamedSibling) cur = cur.parent;
  let prev = cur?.previousNamedSibling ?? undefined;
  // A Haddock comment before a declaration may end the node before it (the imports, a class head).
  while (prev && !COMMENTS.has(prev.type) && prev.lastNamedChild && COMMENTS.has(prev.lastNamedChild.type)) prev = prev.lastNamedChild;
  return prev;
}

/** Haddock and comment markers stripped: `-- |`, `-- ^`, `--`, `{-|`, `-}`; rulers dropped. */
function cleanHaddock(text: string): string {
  return text
    .replace(/^\s*\{-\s*[|^]?\s?/, "")
    .replace(/\s*-\}\s*$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*--+\s?([|^]\s?)?/, "").trimEnd())
    .filter((l) => !/^-{4,}$/.test(l.trim()))
    .join("\n")
    .trim();
}

/** The comments directly above a definition (`-- |` Haddock or plain), else a `-- ^` Haddock right after it. */
function docstring(def: TSNode): string {
  const parts: string[] = [];
  let row = def.startPosition.row;
  for (let c = nodeBefore(def); c && COMMENTS.has(c.type) && c.endPosition.row >= row - 1; c = nodeBefore(c)) {
    if (/^\s*--\s*\^/.test(c.text)) break; // documents the node before
    parts.unshift(c.text);
    row = c.startPosition.row;
  }
  if (parts.length) return cleanHaddock(parts.join("\n"));
  const last = bodyAfter(def) ?? def;
  const after = last.nextNamedSibling;
  if (after?.type === "haddock" && /^\s*(--|\{-)\s*\^/.test(after.text) && after.startPosition.row <= last.endPosition.row + 1) return cleanHaddock(after.text);
  return "";
}

/** Haddock's module header fields (`Module : A.B`, `Copyright : …`): the description is what follows them. */
const HEADER_FIELD = /^(Module|Copyright|License|Licence|Maintainer|Stability|Portability)\s*:/i;

/** The comment right before `module … where`, its header fields dropped, unless it is a licence. */
function moduleDoc(root: TSNode): string {
  const header = root.namedChildren.find((c) => c?.type === "header");
  if (!header) return "";
  const parts: string[] = [];
  for (let c = header.previousNamedSibling; c && COMMENTS.has(c.type); c = c.previousNamedSibling) parts.unshift(c.text);
  const lines = cleanHaddock(parts.join("\n")).split("\n");
  const text = lines.filter((l) => !HEADER_FIELD.test(l.trim())).join("\n").trim();
  return LICENCE.test(text) ? "" : text;
}

/** `module A.B.C where`: other files import it by that name. */
function packageName(root: TSNode): string | undefined {
  return root.namedChildren.find((c) => c?.type === "header")?.childForFieldName("module")?.text;
}

/**
 * `import A.B` (every name, glob), `import A.B (x, y)` (those names), `import A.B hiding (x)` (every
 * name), `import qualified A.B as C` (only `C.x`). A module's qualifier is recorded as it stands
 * before a name, dot included (`C.` of `C.x`, `A.B.` without `as`): the grammar's qualifier node.
 */
function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const imp of root.namedChildren.find((c) => c?.type === "imports")?.namedChildren ?? []) {
    if (imp?.type !== "import") continue;
    const module = imp.childForFieldName("module")?.text;
    if (!module) continue;
    const line = imp.startPosition.row + 1;
    const qualified = imp.children.some((c) => c?.type === "qualified");
    const alias = `${imp.childForFieldName("alias")?.text ?? module}.`;
    const list = imp.childForFieldName("names");
    const hiding = imp.children.some((c) => c?.type === "hiding");
    const names: RawImport["names"] = [];
    if (list && !hiding) {
      for (const n of list.namedChildren) {
        const id = n?.type === "import_name" ? n.namedChildren.find((c) => c?.type !== "children") : undefined;
        const name = id?.type === "prefix_id" ? id.namedChildren[0]?.text : id?.text;
        if (name) names.push({ name, alias: name });
      }
    }
    if (qualified) out.push({ module, names: [], alias, qualified: true, line });
    else if (list && !hiding) {
      if (names.length) out.push({ module, names, line });
      out.push({ module, names: [], alias, qualified: true, line });
    } else out.push({ module, names: [], alias, line });
  }
  return out;
}

/** `A.B.C` is a file ending in A/B/C.hs under any source root (the nearest if several). */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  if (!/^[A-Z][\w']*(\.[A-Z][\w']*)*$/.test(spec)) return [];
  return nearestTo(from.path, project.filesEndingWith(`${spec.split(".").join("/")}.hs`));
}

/** An instance of a named type makes its class a base of the type: `instance Show QName` → Show. */
function bases(def: TSNode): string[] {
  if (def.type !== "instance") return [];
  let type = def.childForFieldName("patterns")?.namedChildren[0] ?? null;
  if (type?.type === "parens") type = type.namedChildren[0];
  while (type?.type === "apply") type = type.childForFieldName("constructor");
  const cls = def.childForFieldName("name");
  if (!cls || (type?.type !== "name" && type?.type !== "qualified")) return [];
  return [cls.type === "qualified" ? (cls.childForFieldName("id")?.text ?? cls.text) : cls.text];
}

export const haskell: LanguageSpec = {
  id: "haskell",
  extensions: [".hs"],
  grammar: "tree-sitter-haskell/tree-sitter-haskell.wasm",
  query: QUERY,
  docstring,
  bases,
  imports: importsOf,
  packageName,
  moduleDoc,
  selfNames: [],
  globImports: true,
  bodyAfter,
  signature,
  resolveImport,
};
