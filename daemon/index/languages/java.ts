import type { Node as TSNode } from "web-tree-sitter";
import type { RawImport } from "../types.js";
import { bareTypeName, leadingComment, type LanguageSpec } from "./language.js";

const QUERY = `
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(method_invocation object: (_) @call.receiver name: (identifier) @call.name) @call
(method_invocation !object name: (identifier) @call.name) @call
(object_creation_expression type: (type_identifier) @call.name) @call
`;

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const st of root.namedChildren) {
    if (!st || st.type !== "import_declaration") continue;
    const text = st.text.replace(/^import\s+(static\s+)?/, "").replace(/;\s*$/, "").trim();
    const parts = text.split(".");
    const name = parts.pop()!;
    out.push({ module: parts.join("."), names: name === "*" ? [] : [{ name, alias: name }], line: st.startPosition.row + 1 });
  }
  return out;
}

export const java: LanguageSpec = {
  id: "java",
  extensions: [".java"],
  grammar: "tree-sitter-java.wasm",
  query: QUERY,
  docstring: (def) => leadingComment(def),
  bases(def) {
    const out: string[] = [];
    const sup = def.childForFieldName("superclass");
    if (sup) out.push(bareTypeName(sup.text.replace(/^extends\s+/, "")));
    const ifs = def.childForFieldName("interfaces");
    if (ifs) for (const t of ifs.descendantsOfType("type_identifier")) if (t) out.push(t.text);
    return out;
  },
  imports: importsOf,
  packageName(root) {
    const p = root.namedChildren.find((c) => c?.type === "package_declaration");
    return p?.namedChildren[0]?.text;
  },
  moduleDoc: () => "",
  selfNames: ["this"],
  implicitSelf: true,
  // Java, Kotlin and Scala code calls each other's classes directly.
  family: "jvm",
  directoryScope: true,
  // A Kotlin class's companion (`Foo.Companion.create()`) or an object's instance (`Foo.INSTANCE.x()`): members of Foo here.
  typeReceiver: (recv) => recv.match(/^([A-Za-z_$][\w$]*)\.(?:Companion|INSTANCE)$/)?.[1],
  // `a.b.C` is a class file ending in a/b/C.java; `a.b` a package: every file of a directory ending in a/b.
  resolveImport(spec, _from, project) {
    const rel = spec.replace(/\./g, "/");
    const cls = project.filesEndingWith(`${rel}.java`);
    return cls.length ? cls : project.dirsEndingWith(rel).flatMap((d) => project.filesIn(d));
  },
};
