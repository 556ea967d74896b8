import type { Node as TSNode } from "web-tree-sitter";
import type { RawImport } from "../types.js";
import { bareTypeName, leadingComment, type LanguageSpec } from "./language.js";

const QUERY = `
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(field_declaration declarator: (variable_declarator name: (identifier) @name value: (object_creation_expression (class_body)))) @def.class
(enum_constant name: (identifier) @name body: (class_body)) @def.class
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(method_invocation object: (_) @call.receiver name: (identifier) @call.name) @call
(method_invocation !object name: (identifier) @call.name) @call
(object_creation_expression type: (type_identifier) @call.name) @call
(object_creation_expression type: (generic_type . (type_identifier) @call.name)) @call
(object_creation_expression type: (scoped_type_identifier (type_identifier) @call.name .)) @call
(explicit_constructor_invocation constructor: [(this) (super)] @call.name) @call
(local_variable_declaration type: (_) @local.type declarator: (variable_declarator name: (identifier) @local.name) (#not-eq? @local.type "var"))
(local_variable_declaration type: (type_identifier) @_var declarator: (variable_declarator name: (identifier) @local.name value: (_) @local.value) (#eq? @_var "var"))
(field_declaration type: (_) @local.type declarator: (variable_declarator name: (identifier) @local.name))
(formal_parameter type: (_) @local.type name: (identifier) @local.name)
(spread_parameter (variable_declarator name: (identifier) @local.name)) @local.type
(catch_formal_parameter (catch_type) @local.type name: (identifier) @local.name)
(enhanced_for_statement type: (_) @local.type name: (identifier) @local.name (#not-eq? @local.type "var"))
(enhanced_for_statement type: (type_identifier) @_var name: (identifier) @local.name (#eq? @_var "var"))
(resource type: (_) @local.type name: (identifier) @local.name (#not-eq? @local.type "var"))
(resource type: (type_identifier) @_var name: (identifier) @local.name value: (_) @local.value (#eq? @_var "var"))
(instanceof_expression right: (_) @local.type name: (identifier) @local.name)
(lambda_expression parameters: (identifier) @local.name)
(inferred_parameters (identifier) @local.name)
`;

/**
 * java.lang's types (visible without an import) and the JDK's everyday ones: a receiver of one the
 * project does not define calls nothing of the project.
 */
const BUILTINS = new Set(["String", "Object", "StringBuilder", "StringBuffer", "CharSequence", "Integer", "Long", "Short", "Byte", "Character", "Boolean", "Double", "Float", "Number", "Math", "StrictMath", "System", "Thread", "ThreadLocal", "Class", "ClassLoader", "Enum", "Record", "Iterable", "Comparable", "Runnable", "AutoCloseable", "Appendable", "Readable", "Cloneable", "Throwable", "Exception", "Error", "RuntimeException", "IllegalArgumentException", "IllegalStateException", "NullPointerException", "UnsupportedOperationException", "IndexOutOfBoundsException", "ArrayIndexOutOfBoundsException", "ClassCastException", "ArithmeticException", "NumberFormatException", "InterruptedException", "CloneNotSupportedException", "AssertionError", "OutOfMemoryError", "StackOverflowError", "Runtime", "Process", "ProcessBuilder", "StackTraceElement", "Void", "Override", "Deprecated", "SuppressWarnings", "FunctionalInterface", "SafeVarargs"]);

function withoutGenerics(type: string): string {
  let t = type;
  while (/<[^<>]*>/.test(t)) t = t.replace(/<[^<>]*>/g, "");
  return t.replace(/@[\w$.]+(\([^()]*\))?\s*/g, "").replace(/\s+/g, "");
}

/** A call's arguments (comments are none): an overloaded method is chosen by their number and types. */
function callArgs(call: TSNode): TSNode[] | undefined {
  const args = call.childForFieldName("arguments");
  return args ? args.namedChildren.filter((a): a is TSNode => !!a && !a.type.endsWith("comment")) : undefined;
}

const COMPARISON = new Set(["==", "!=", "<", ">", "<=", ">=", "&&", "||", "instanceof"]);

/** The type an argument's syntax alone gives it: a literal's, a cast's, a `new`'s, a comparison's; `λ` for a lambda or method reference. */
function argType(arg: TSNode): string | undefined {
  const t = arg.type;
  if (t === "string_literal") return "String";
  if (t === "character_literal") return "char";
  if (t === "true" || t === "false") return "boolean";
  if (t === "null_literal") return "null";
  if (t === "class_literal") return "Class";
  if (/_integer_literal$/.test(t)) return /[lL]$/.test(arg.text) ? "long" : "int";
  if (/_floating_point_literal$/.test(t)) return /[fF]$/.test(arg.text) ? "float" : "double";
  if (t === "lambda_expression" || t === "method_reference") return "λ";
  if (t === "array_creation_expression" || t === "array_initializer") return "[]";
  if (t === "cast_expression" || t === "object_creation_expression") return arg.childForFieldName("type")?.text;
  if (t === "parenthesized_expression") return arg.namedChildren[0] ? argType(arg.namedChildren[0]) : undefined;
  if (t === "unary_expression") {
    const op = arg.childForFieldName("operand");
    return arg.text.startsWith("!") ? "boolean" : op && /literal$/.test(op.type) ? argType(op) : undefined;
  }
  if (t === "binary_expression") {
    const op = arg.childForFieldName("operator")?.text ?? "";
    if (COMPARISON.has(op)) return "boolean";
    const sides = [arg.childForFieldName("left"), arg.childForFieldName("right")];
    if (op === "+" && sides.some((x) => x && argType(x) === "String")) return "String";
  }
  return undefined;
}

/** A method's or constructor's parameter types by position, a varargs one ending in `...`. */
function paramTypes(def: TSNode): string[] | undefined {
  const params = def.childForFieldName("parameters");
  if (!params) return undefined;
  const out: string[] = [];
  for (const p of params.namedChildren) {
    if (p?.type === "formal_parameter") out.push(p.childForFieldName("type")?.text ?? "?");
    else if (p?.type === "spread_parameter") out.push(`${p.namedChildren.find((c) => c && c.type !== "variable_declarator" && !c.type.endsWith("annotation") && c.type !== "modifiers")?.text ?? "?"}...`);
  }
  return out;
}

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
  // Bases as written, generics dropped: `HttpConnection.Base<Connection.Request>` → `HttpConnection.Base` (a nested type is named through its outer one).
  bases(def) {
    const out: string[] = [];
    // An anonymous class held by a field (`TypeAdapter<URI> URI = new TypeAdapter<URI>() {…}`) extends what it creates; an enum constant's body, its enum.
    if (def.type === "field_declaration") {
      const created = def.childForFieldName("declarator")?.childForFieldName("value")?.childForFieldName("type");
      return created ? [withoutGenerics(created.text)] : [];
    }
    if (def.type === "enum_constant") {
      const name = def.parent?.parent?.type === "enum_declaration" ? def.parent.parent.childForFieldName("name")?.text : undefined;
      return name ? [name] : [];
    }
    const sup = def.childForFieldName("superclass")?.namedChildren[0];
    if (sup) out.push(withoutGenerics(sup.text));
    const ifs = def.childForFieldName("interfaces") ?? def.namedChildren.find((c) => c?.type === "extends_interfaces");
    const list = ifs?.namedChildren.find((c) => c?.type === "type_list");
    for (const t of list?.namedChildren ?? []) if (t) out.push(withoutGenerics(t.text));
    return out;
  },
  imports: importsOf,
  returnType: (def) => (def.type === "method_declaration" ? def.childForFieldName("type")?.text : undefined),
  paramTypes,
  callArgs,
  argType,
  overloads: true,
  builtins: BUILTINS,
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
  packageImport: true,
  // A Kotlin class's companion (`Foo.Companion.create()`) or an object's instance (`Foo.INSTANCE.x()`): members of Foo here.
  typeReceiver: (recv) => recv.match(/^([A-Za-z_$][\w$]*)\.(?:Companion|INSTANCE)$/)?.[1],
  // `a.b.C` is a class file ending in a/b/C.java, `a.b.C.Inner` (a nested type, or a static import's
  // class) is C's; `a.b` a package: every file of a directory ending in a/b.
  resolveImport(spec, _from, project) {
    const segs = spec.split(".");
    for (let n = segs.length; n > 0 && (n === segs.length || /^[A-Z]/.test(segs[n])); n--) {
      const cls = project.filesEndingWith(`${segs.slice(0, n).join("/")}.java`);
      if (cls.length) return cls;
    }
    return project.dirsEndingWith(segs.join("/")).flatMap((d) => project.filesIn(d));
  },
  importsFromAnywhere: true,
};
