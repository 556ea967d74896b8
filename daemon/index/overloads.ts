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

const COLLECTION = ["Collection", "Iterable", "SequencedCollection"];
const LIST = ["List", "AbstractList", "AbstractCollection", "RandomAccess", "Cloneable", "Serializable", ...COLLECTION];
const SET = ["Set", "AbstractSet", "AbstractCollection", "Cloneable", "Serializable", ...COLLECTION];
const MAP = ["Map", "AbstractMap", "Cloneable", "Serializable"];
const WRITER = ["Writer", "Appendable", "Closeable", "Flushable", "AutoCloseable"];
const READER = ["Reader", "Readable", "Closeable", "AutoCloseable"];
const INPUT = ["InputStream", "Closeable", "AutoCloseable"];
const OUTPUT = ["OutputStream", "Closeable", "Flushable", "AutoCloseable"];
/**
 * The supertypes of everyday JDK types (interfaces and classes a project's code passes around):
 * a value of one fits only these, Object and a type variable. A JDK type not listed fits anything.
 */
const JDK: Record<string, string[]> = {
  ...SUPERS,
  StringBuilder: ["CharSequence", "Appendable", "Serializable", "Comparable", "AbstractStringBuilder"],
  StringBuffer: ["CharSequence", "Appendable", "Serializable", "Comparable", "AbstractStringBuilder"],
  CharSequence: [], Appendable: [], Comparable: [], Serializable: [], Cloneable: [], Runnable: [], AutoCloseable: [], Flushable: [],
  Closeable: ["AutoCloseable"], Iterator: [], Iterable: [], Map: [], Type: [],
  Collection: ["Iterable"], List: COLLECTION, Set: COLLECTION, Queue: COLLECTION, Deque: ["Queue", ...COLLECTION],
  ArrayList: LIST, LinkedList: [...LIST, "Deque", "Queue", "AbstractSequentialList"],
  HashSet: SET, LinkedHashSet: ["HashSet", ...SET], TreeSet: ["SortedSet", "NavigableSet", ...SET],
  HashMap: MAP, LinkedHashMap: ["HashMap", ...MAP], TreeMap: ["SortedMap", "NavigableMap", ...MAP],
  Writer: WRITER.slice(1), StringWriter: WRITER, PrintWriter: WRITER, BufferedWriter: WRITER, OutputStreamWriter: WRITER, FileWriter: ["OutputStreamWriter", ...WRITER],
  Reader: READER.slice(1), StringReader: READER, BufferedReader: READER, InputStreamReader: READER, FileReader: ["InputStreamReader", ...READER],
  InputStream: INPUT.slice(1), ByteArrayInputStream: INPUT, FileInputStream: INPUT, BufferedInputStream: ["FilterInputStream", ...INPUT],
  OutputStream: OUTPUT.slice(1), ByteArrayOutputStream: OUTPUT, FileOutputStream: OUTPUT, PrintStream: ["FilterOutputStream", "Appendable", ...OUTPUT],
  File: ["Serializable", "Comparable"], Path: ["Comparable", "Iterable", "Watchable"], URL: ["Serializable"], URI: ["Comparable", "Serializable"],
  Charset: ["Comparable"], Pattern: ["Serializable"], Matcher: ["MatchResult"], Object: [],
};

/**
 * How a value of a JDK type fits a parameter type named `p` (1: the same, 0: a supertype, -1:
 * not one); undefined for a JDK type not listed here, whose supertypes are not known.
 */
export function jdkFit(t: string, p: string): number | undefined {
  if (t === p) return 1;
  const supers = JDK[t];
  if (!supers) return undefined;
  return p === "Object" || isTypeVariable(p) || supers.includes(p) ? 0 : -1;
}

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
 * method reference, `[]` for an array, `enum T` for a constant of a JDK type `T`) fits a parameter type named `p`.
 */
export function literalFit(arg: string, p: string): number {
  if (!p) return 0;
  if (arg === p) return 1;
  if (arg.startsWith("enum ")) return arg.slice(5) === p ? 1 : ["Object", "Enum", "Comparable", "Serializable", "Constable"].includes(p) || isTypeVariable(p) ? 0 : -1;
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
  return jdkFit(arg, p) ?? -1;
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
