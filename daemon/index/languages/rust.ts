import path from "node:path";
import type { Node as TSNode } from "web-tree-sitter";
import type { RawImport } from "../types.js";
import { bareTypeName, leadingComment, type LanguageSpec } from "./language.js";

const QUERY = `
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.interface
(type_item name: (type_identifier) @name) @def.type
(impl_item type: (_) @name) @def.impl
(macro_definition name: (identifier) @name) @def.function
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression value: (_) @call.receiver field: (field_identifier) @call.name)) @call
(call_expression function: (scoped_identifier path: (_) @call.receiver name: (identifier) @call.name)) @call
`;

/** Outer attributes sit between an item's doc comment and the item (`/// Doc` `#[inline]` `fn f`). */
const ATTRIBUTES = new Set(["attribute_item"]);

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const st of root.namedChildren) {
    if (!st || st.type !== "use_declaration") continue;
    const arg = st.childForFieldName("argument");
    if (!arg) continue;
    const text = arg.text.replace(/\s+/g, "");
    const m = text.match(/^(.*)::\{(.*)\}$/);
    if (m) {
      const names = m[2].split(",").filter(Boolean).map((n) => {
        const [name, alias] = n.split(/as/);
        const base = name.split("::").pop()!;
        return { name: base, alias: alias ?? base };
      });
      out.push({ module: m[1], names, line: st.startPosition.row + 1 });
    } else {
      const [path, alias] = text.split(/as(?=[A-Za-z_])/);
      const parts = path.split("::");
      const name = parts.pop()!;
      out.push({ module: parts.join("::"), names: [{ name, alias: alias ?? name }], line: st.startPosition.row + 1 });
    }
  }
  return out;
}

export const rust: LanguageSpec = {
  id: "rust",
  extensions: [".rs"],
  grammar: "tree-sitter-rust.wasm",
  query: QUERY,
  docstring: (def) => leadingComment(def, ATTRIBUTES),
  bases(def) {
    if (def.type !== "impl_item") return [];
    const t = def.childForFieldName("trait");
    return t ? [bareTypeName(t.text)] : [];
  },
  imports: importsOf,
  moduleDoc(root) {
    const lines: string[] = [];
    for (const c of root.namedChildren) {
      if (c?.type === "line_comment" && c.text.startsWith("//!")) lines.push(c.text.slice(3).trim());
      else break;
    }
    return lines.join("\n");
  },
  selfNames: ["self", "Self"],
  resolveImport(spec, from, project) {
    for (const base of rustModuleBases(from.path, spec, (p) => project.has(p))) {
      for (const cand of [`${base}.rs`, `${base}/mod.rs`]) if (project.has(cand)) return [cand];
    }
    return [];
  },
};

/**
 * Where a Rust module path may live, as project-relative paths without `.rs`: `crate::` from the
 * crate root (the nearest directory above holding lib.rs or main.rs), `self::` and `super::` from the
 * file's own module, and a bare path from the file's module first, then the crate root (2018
 * edition). External crates (`std::`, dependencies) match no file.
 */
export function rustModuleBases(file: string, spec: string, exists: (path: string) => boolean): string[] {
  const parts = spec.split("::").filter(Boolean);
  const dir = path.posix.dirname(file);
  const stem = path.posix.basename(file, ".rs");
  // The directory a module's children live in: its own for lib.rs, main.rs and mod.rs, else dir/stem.
  const own = ["lib", "main", "mod"].includes(stem) ? dir : path.posix.join(dir, stem);
  let root: string | undefined;
  for (let d = dir; ; d = path.posix.dirname(d)) {
    if (exists(path.posix.join(d, "lib.rs")) || exists(path.posix.join(d, "main.rs"))) {
      root = d;
      break;
    }
    if (d === "." || d === "/" || d === "") break;
  }
  const join = (base: string, rest: string[]) => path.posix.normalize(path.posix.join(base, ...rest));
  if (parts[0] === "crate") return root !== undefined && parts.length > 1 ? [join(root, parts.slice(1))] : [];
  if (parts[0] === "self") return parts.length > 1 ? [join(own, parts.slice(1))] : [];
  if (parts[0] === "super") {
    let base = own;
    let i = 0;
    for (; parts[i] === "super"; i++) base = path.posix.dirname(base);
    return i < parts.length ? [join(base, parts.slice(i))] : [];
  }
  return [join(own, parts), ...(root !== undefined && root !== own ? [join(root, parts)] : [])];
}
