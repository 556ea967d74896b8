import { typeText } from "./scope.js";

/**
 * Overload choice by argument types (Java): what a literal, a primitive or a final JDK type can be
 * passed as. A fit is -1 (cannot be passed), 0 (can, by widening, boxing or to a supertype) or 1 (the
 * parameter's own type): a call links to the applicable overloads fitting best.
 */

const PRIMITIVE = new Set(["int", "long", "short", "byte", "char", "float", "double", "boolean"]);
const BOXED: Record<string, string> = { Integer: "int", Long: "long", Short: "short", Byte: "byte", Character: "char", Float: "float", Double: "double", Boolean: "boolean" };
/** Primitives a primitive widens to. */
const WIDER: Record<string, string[]> = {
  byte: ["short", "int", "long", "float", "double"],
  short: ["int", "long", "float", "double"],
  char: ["int", "long", "float", "double"],
  int: ["long", "float", "double"],
  long: ["float", "double"],
  float: ["double"],
  double: [],
  boolean: [],
};
const NUMERIC_SUPERS = ["Number", "Object", "Comparable", "Serializable", "Constable"];
/** Supertypes of the final JDK types an argument's syntax or declaration names. */
const SUPERS: Record<string, string[]> = {
  String: ["CharSequence", "Object", "Comparable", "Serializable", "Constable", "ConstantDesc"],
  Class: ["Object", "Type", "GenericDeclaration", "AnnotatedElement", "Serializable"],
  Boolean: ["Object", "Serializable", "Comparable", "Constable"],
  Character: ["Object", "Serializable", "Comparable", "Constable"],
};

/** Types no class of a project can extend: a value of one fits only the types listed for it. */
export function isFinalType(t: string): boolean {
  return PRIMITIVE.has(t) || t in BOXED || t in SUPERS;
}

export function isPrimitive(t: string): boolean {
  return PRIMITIVE.has(t);
}

/** A parameter's type as written (`final @Nullable Map<K, V>`, `String...`, `int[]`): its name (`[]` for an array) and whether it is varargs. */
export function paramType(text: string): { name: string; varargs: boolean } {
  let t = text.replace(/@[\w$.]+(\s*\([^()]*\))?\s*/g, "").replace(/\bfinal\s+/g, "").trim();
  const varargs = t.endsWith("...");
  if (varargs) t = t.slice(0, -3).trim();
  return { name: typeText(t) ?? "", varargs };
}

/** A type variable by Java's naming habit (`T`, `E`, `K2`): it takes any reference. */
export function isTypeVariable(t: string): boolean {
  return /^[A-Z][A-Z0-9]?$/.test(t);
}

/**
 * How an argument of a literal or final type (`String`, `int`, `Integer`; `null`, `λ` for a lambda or
 * method reference, `[]` for an array) fits a parameter type named `p`.
 */
export function literalFit(arg: string, p: string): number {
  if (!p) return 0;
  if (arg === p) return 1;
  if (arg === "null") return PRIMITIVE.has(p) ? -1 : 0;
  if (arg === "λ") return PRIMITIVE.has(p) || isFinalType(p) || p === "[]" ? -1 : 0;
  if (isTypeVariable(p)) return 0;
  if (arg === "[]") return p === "Object" ? 0 : -1;
  if (PRIMITIVE.has(arg)) {
    const boxed = Object.keys(BOXED).find((b) => BOXED[b] === arg)!;
    if (WIDER[arg].includes(p) || p === boxed) return 0;
    return arg !== "boolean" && NUMERIC_SUPERS.includes(p) ? 0 : arg === "boolean" && SUPERS.Boolean.includes(p) ? 0 : -1;
  }
  if (arg in BOXED) {
    const prim = BOXED[arg];
    if (p === prim || WIDER[prim].includes(p)) return 0;
    return (SUPERS[arg] ?? NUMERIC_SUPERS).includes(p) ? 0 : -1;
  }
  return SUPERS[arg]?.includes(p) ? 0 : -1;
}

/**
 * The type of an argument written as a literal (inside a receiver chain, where the extractor typed
 * none), or as a call that returns a String whatever its receiver (`x.toString()`, `String.valueOf(x)`).
 */
export function literalType(text: string): string | undefined {
  if (/^"/.test(text)) return "String";
  if (/^'/.test(text)) return "char";
  if (/^(true|false)$/.test(text)) return "boolean";
  if (text === "null") return "null";
  if (/^-?\d[\d_]*[lL]$/.test(text)) return "long";
  if (/^-?(0[xX][\da-fA-F_]+|\d[\d_]*)$/.test(text)) return "int";
  if (/^-?\d[\d_]*\.\d*([eE][-+]?\d+)?[dD]?$/.test(text)) return "double";
  if (/\.toString\(\s*\)$/.test(text) || /^String\.(valueOf|format|join)\(/.test(text)) return "String";
  return undefined;
}
