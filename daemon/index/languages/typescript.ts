import type { Node as TSNode } from "web-tree-sitter";
import path from "node:path";
import { aliasBases } from "../ts-paths.js";
import type { FileExtract, RawImport } from "../types.js";
import { bareTypeName, cleanComment, leadingComment, unquote, type LanguageSpec, type ProjectView } from "./language.js";

const FUNCTION_VALUE = "[(arrow_function) (function_expression) (generator_function)]";

const CALLS = `
(call_expression function: (identifier) @call.name) @call
(call_expression function: (member_expression object: (_) @call.receiver property: (property_identifier) @call.name)) @call
(new_expression constructor: (identifier) @call.name) @call
(call_expression function: (super) @call.name) @call
`;

/** Names bound by parameters, variables and fields, with their declared types or assigned values (see language.ts). */
const TS_LOCALS = `
(required_parameter pattern: (identifier) @local.name type: (type_annotation (_) @local.type))
(optional_parameter pattern: (identifier) @local.name type: (type_annotation (_) @local.type))
(required_parameter pattern: (identifier) @local.name)
(optional_parameter pattern: (identifier) @local.name)
(required_parameter pattern: (rest_pattern (identifier) @local.name))
(required_parameter (accessibility_modifier) pattern: (identifier) @local.field type: (type_annotation (_) @local.type))
(variable_declarator name: (identifier) @local.name type: (type_annotation (_) @local.type))
(public_field_definition name: (property_identifier) @local.name type: (type_annotation (_) @local.type))
(public_field_definition name: (property_identifier) @local.name value: (_) @local.value)
`;

const JS_LOCALS = `
(formal_parameters (identifier) @local.name)
(formal_parameters (assignment_pattern left: (identifier) @local.name))
(formal_parameters (rest_pattern (identifier) @local.name))
(field_definition property: (property_identifier) @local.name value: (_) @local.value)
`;

// Destructuring binds its names wherever it appears: declarations and parameters
// (`run(({ hot, cold }) => cold("--a"))` calls the parameter, not a project function named cold).
const COMMON_LOCALS = `
(variable_declarator name: (identifier) @local.name value: (_) @local.value)
(variable_declarator name: (identifier) @local.name)
(object_pattern (shorthand_property_identifier_pattern) @local.name)
(object_pattern (pair_pattern value: (identifier) @local.name))
(object_pattern (object_assignment_pattern left: (shorthand_property_identifier_pattern) @local.name))
(array_pattern (identifier) @local.name)
(arrow_function parameter: (identifier) @local.name)
(for_in_statement left: (identifier) @local.name)
(catch_clause parameter: (identifier) @local.name)
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @local.field) right: (_) @local.value)
`;

/**
 * Functions assigned to a property: \`res.send = function send() {}\`, \`Foo.prototype.bar = function () {}\`
 * (methods of \`res\` and \`Foo\`), \`exports.parse = function () {}\` (a function of the module); in a
 * chain (\`res.type = res.contentType = function\`) the innermost name.
 */
const ASSIGNED = `
(assignment_expression left: (member_expression object: (_) @assign.object property: (property_identifier) @name) right: ${FUNCTION_VALUE} (#not-match? @assign.object "^(module\\.)?exports$")) @def.method
(assignment_expression left: (member_expression object: (_) @assign.object property: (property_identifier) @name) right: ${FUNCTION_VALUE} (#match? @assign.object "^(module\\.)?exports$")) @def.function
`;

const TS_QUERY = `
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @def.method
(abstract_method_signature name: (property_identifier) @name) @def.method
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(lexical_declaration (variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE})) @def.function
(variable_declaration (variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE})) @def.function
(public_field_definition name: (property_identifier) @name value: ${FUNCTION_VALUE}) @def.method
${ASSIGNED}
${CALLS}
${TS_LOCALS}
${COMMON_LOCALS}`;

const JS_QUERY = `
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (identifier) @name) @def.class
(method_definition name: [(property_identifier) (private_property_identifier)] @name) @def.method
(lexical_declaration (variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE})) @def.function
(variable_declaration (variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE})) @def.function
(field_definition property: (property_identifier) @name value: ${FUNCTION_VALUE}) @def.method
${ASSIGNED}
${CALLS}
${JS_LOCALS}
${COMMON_LOCALS}`;

function docstring(def: TSNode): string {
  // JSDoc sits above the export statement when the definition is exported, above the statement of an assignment.
  let holder = def;
  if (holder.parent?.type === "export_statement" || holder.parent?.type === "expression_statement") holder = holder.parent;
  const doc = leadingComment(holder);
  if (doc) return doc;
  // A JSDoc block one blank line above (express's style) still documents what follows it.
  const prev = holder.previousNamedSibling;
  return prev?.type === "comment" && prev.text.startsWith("/**") && prev.endPosition.row >= holder.startPosition.row - 2 ? cleanComment(prev.text) : "";
}

/** The object a function is assigned to (\`res\` for \`res.send = function\`, \`Foo\` for \`Foo.prototype.bar\`). */
function receiverType(def: TSNode): string | undefined {
  if (def.type !== "assignment_expression") return undefined;
  const object = def.childForFieldName("left")?.childForFieldName("object")?.text.replace(/\.prototype$/, "");
  return object && !/^(module\.)?exports$/.test(object) ? bareTypeName(object) : undefined;
}

function bases(def: TSNode): string[] {
  const out: string[] = [];
  for (const h of def.descendantsOfType(["class_heritage", "extends_type_clause"])) {
    if (!h) continue;
    for (const c of h.descendantsOfType(["identifier", "type_identifier", "member_expression"])) {
      if (c && c.parent && (c.parent.type === "extends_clause" || c.parent.type === "implements_clause" || c.parent.type === "class_heritage" || c.parent.type === "extends_type_clause" || c.parent.type === "generic_type")) {
        out.push(bareTypeName(c.text));
      }
    }
  }
  return [...new Set(out)];
}

function importsOf(root: TSNode): RawImport[] {
  const out: RawImport[] = [];
  for (const st of root.namedChildren) {
    if (!st) continue;
    const line = st.startPosition.row + 1;
    if (st.type === "import_statement" || (st.type === "export_statement" && st.childForFieldName("source"))) {
      const src = st.childForFieldName("source");
      if (!src) continue;
      const names: { name: string; alias: string }[] = [];
      let alias: string | undefined;
      for (const spec of st.descendantsOfType(["import_specifier", "export_specifier"])) {
        if (!spec) continue;
        const name = spec.childForFieldName("name")?.text ?? "";
        names.push({ name, alias: spec.childForFieldName("alias")?.text ?? name });
      }
      const clause = st.namedChildren.find((c) => c?.type === "import_clause");
      if (clause) {
        for (const c of clause.namedChildren) {
          if (!c) continue;
          if (c.type === "identifier") names.push({ name: "default", alias: c.text });
          if (c.type === "namespace_import") alias = c.namedChildren[0]?.text;
        }
      }
      out.push({ module: unquote(src.text), names, alias, line });
    } else if (st.type === "lexical_declaration" || st.type === "variable_declaration") {
      // const x = require("./y")
      for (const d of st.namedChildren) {
        const v = d?.childForFieldName("value");
        if (v?.type === "call_expression" && v.childForFieldName("function")?.text === "require") {
          const arg = v.childForFieldName("arguments")?.namedChildren[0];
          const name = d!.childForFieldName("name");
          if (arg && arg.type === "string" && name) {
            if (name.type === "identifier") out.push({ module: unquote(arg.text), names: [], alias: name.text, line });
            else out.push({ module: unquote(arg.text), names: name.namedChildren.filter((c): c is TSNode => !!c).map((c) => ({ name: c.text, alias: c.text })), line });
          }
        }
      }
    }
  }
  return out;
}

function moduleDoc(root: TSNode): string {
  const first = root.namedChildren[0];
  if (first?.type === "comment" && first.text.startsWith("/**")) {
    const next = first.nextNamedSibling;
    // A comment glued to the first definition documents that definition, not the file.
    if (!next || next.startPosition.row > first.endPosition.row + 1) return leadingComment(next ?? first) || first.text.replace(/^\/\*\*|\*\/$/g, "").trim();
  }
  return "";
}

const TS_EXTS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];

/** A relative specifier from the file's directory, else the module aliases of its tsconfig; extensions and index files as the compilers try them. */
function resolveImport(spec: string, from: FileExtract, project: ProjectView): string[] {
  const bases = spec.startsWith(".") ? [path.posix.normalize(path.posix.join(path.posix.dirname(from.path), spec))] : aliasBases(spec, project.pathAliases(from.path));
  for (const base of bases) {
    const stem = base.replace(/\.(m|c)?js$|\.jsx$/, "");
    for (const cand of [base, ...TS_EXTS.map((e) => stem + e), ...TS_EXTS.map((e) => `${base}/index${e}`)]) {
      if (project.has(cand)) return [cand];
    }
  }
  return [];
}

/** A function's declared return type: its own, or that of the function value a declaration or field holds. */
function returnType(def: TSNode): string | undefined {
  const fn = def.type === "lexical_declaration" || def.type === "variable_declaration" ? def.namedChildren[0]?.childForFieldName("value") : def.type === "public_field_definition" || def.type === "field_definition" ? def.childForFieldName("value") : def.type === "assignment_expression" ? def.childForFieldName("right") : def;
  return fn?.childForFieldName("return_type")?.text;
}

/** The function a definition is or holds (a declaration's or field's value). */
function functionOf(def: TSNode): TSNode | null | undefined {
  return def.type === "lexical_declaration" || def.type === "variable_declaration" ? def.namedChildren[0]?.childForFieldName("value") : def.type === "public_field_definition" || def.type === "field_definition" ? def.childForFieldName("value") : def.type === "assignment_expression" ? def.childForFieldName("right") : def;
}

function paramTypes(def: TSNode): string[] | undefined {
  const params = functionOf(def)?.childForFieldName("parameters");
  return params?.namedChildren.map((p) => p?.childForFieldName("type")?.text.replace(/^:\s*/, "") ?? "");
}

/** `f((a, b) => …)`, `x.m(function (a) {…})`: the callee, the argument's and the parameter's positions. */
function contextualParam(name: TSNode): { callee: string; arg: number; param: number } | undefined {
  let holder = name.parent;
  let fn: TSNode | null | undefined;
  let param = 0;
  if (holder?.type === "arrow_function") fn = holder;
  else if (holder?.type === "required_parameter" && holder.parent?.type === "formal_parameters") {
    param = holder.parent.namedChildren.findIndex((c) => c?.id === holder!.id);
    fn = holder.parent.parent;
  } else if (holder?.type === "formal_parameters") {
    param = holder.namedChildren.findIndex((c) => c?.id === name.id);
    fn = holder.parent;
  }
  const args = fn?.parent;
  const call = args?.parent;
  if (!fn || args?.type !== "arguments" || (call?.type !== "call_expression" && call?.type !== "new_expression")) return undefined;
  // `new C(cb)`: the callee is C, whose constructor declares the callback's type.
  const callee = call.childForFieldName(call.type === "new_expression" ? "constructor" : "function")?.text;
  if (!callee || !/^[\w$.]+$/.test(callee)) return undefined;
  return { callee, arg: args.namedChildren.findIndex((c) => c?.id === fn!.id), param };
}

/** Globals of JavaScript's runtimes: a receiver or type named so, and not defined by the project, is none of its. */
const BUILTINS = new Set(["Object", "Array", "Math", "JSON", "Promise", "console", "Reflect", "Symbol", "Number", "String", "Boolean", "Date", "Error", "TypeError", "RangeError", "Map", "Set", "WeakMap", "WeakSet", "RegExp", "BigInt", "Intl", "process", "Buffer", "document", "window", "globalThis", "performance", "Function", "ArrayBuffer", "Uint8Array", "Proxy", "string", "number", "boolean", "any", "unknown", "never", "object", "symbol", "bigint", "Record", "Partial", "Readonly", "ReadonlyArray", "Iterable", "AsyncIterable", "Iterator", "PromiseLike"]);

const common = { docstring, bases, returnType, paramTypes, contextualParam, builtins: BUILTINS, imports: importsOf, moduleDoc, receiverType, selfNames: ["this"], family: "js", resolveImport };

export const typescript: LanguageSpec = {
  id: "typescript",
  extensions: [".ts", ".mts", ".cts"],
  interpreters: ["ts-node", "tsx", "deno"],
  grammar: "tree-sitter-typescript.wasm",
  query: TS_QUERY,
  ...common,
};

export const tsx: LanguageSpec = {
  id: "tsx",
  extensions: [".tsx"],
  grammar: "tree-sitter-tsx.wasm",
  query: TS_QUERY,
  ...common,
};

export const javascript: LanguageSpec = {
  id: "javascript",
  extensions: [".js", ".jsx", ".mjs", ".cjs"],
  interpreters: ["node", "nodejs"],
  grammar: "tree-sitter-javascript.wasm",
  query: JS_QUERY,
  ...common,
};
