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
(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression value: (_) @call.receiver field: (field_identifier) @call.name)) @call
(call_expression function: (scoped_identifier path: (_) @call.receiver name: (identifier) @call.name)) @call
`;

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
  docstring: (def) => leadingComment(def),
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
};
