/** Shapes produced by extraction and stored in the index. */
export type NodeKind = "module" | "function" | "method" | "class" | "interface" | "struct" | "type" | "enum";
/** `declares`: a C/C++ file's prototype of a function defined in another file (header → definition). */
export type EdgeKind = "calls" | "imports" | "contains" | "inherits" | "declares";
export type LanguageId = "python" | "typescript" | "tsx" | "javascript" | "go" | "rust" | "java" | "c" | "cpp" | "ruby" | "php" | "csharp" | "kotlin" | "swift" | "scala" | "lua" | "dart" | "bash" | "zig" | "elixir" | "haskell";

/** A definition found in one file, before cross-file resolution. */
export interface RawDef {
  kind: NodeKind;
  name: string;
  /** Dotted path inside the file: `Class.method`. */
  qualifiedName: string;
  lineStart: number;
  lineEnd: number;
  signature: string;
  docstring: string;
  /** Index of the enclosing definition in `defs`, or -1 at file level. */
  parent: number;
  /** Base classes / implemented interfaces as written. */
  bases: string[];
  /** Go methods and Rust impl items: the receiver type's name (the parent may live in another file). */
  receiverType?: string;
  /** Source text of the definition, capped. */
  code: string;
  /** A function's declared return type, normalised (`typeText`): what a call of it evaluates to. */
  returnType?: string;
  /** Its parameters' declared types as written (capped), by position: a callback passed to it takes its parameter types from them. */
  paramTypes?: string[];
  /** A type's fields: name and the receiver expression of its value (`⟨T⟩` for a declared type, or the value's text). */
  fields?: [string, string][];
  /** An interface's own method specs as `name/arity` (Go): what a type must have to satisfy it (dispatch.ts). */
  methods?: string[];
}

export interface RawCall {
  /** Index of the calling definition, or -1 for file-level code. */
  caller: number;
  name: string;
  /** Receiver expression text (`self`, `this`, `http`, `s.conn`), if any. */
  receiver?: string;
  /**
   * The receiver with its first name replaced by what the caller's scope binds it to: `⟨T⟩` for a
   * declared type (`p: Subscriber<T>` → `⟨Subscriber⟩`), else the value assigned (`x := New()` → `New()`).
   */
  receiverType?: string;
  /** A call without receiver of a name the caller binds itself (a parameter, a local, a nested function): none of the project's. */
  shadowed?: boolean;
  /**
   * Its arguments, in a language choosing overloads by them (`LanguageSpec.overloads`): each a
   * receiver expression (`⟨T⟩` for a type its syntax or a declaration gives it), "" when not known.
   */
  args?: string[];
  line: number;
}

export interface RawImport {
  /** Module specifier as written: `os.path`, `./util.js`, `net/http`, `..models`. */
  module: string;
  /** Names bound by the import: `{ name: "join", alias: "j" }`; empty for whole-module imports. */
  names: { name: string; alias: string }[];
  /** Local alias of a whole-module import (`import numpy as np` → np; Go `h "net/http"` → h). */
  alias?: string;
  /** The import binds only its alias, none of the module's names unqualified (Haskell's `import qualified`). */
  qualified?: boolean;
  line: number;
}

export interface FileExtract {
  path: string;
  language: LanguageId;
  /** Go package name, Java package, Python module path: what other files use to reach this one. */
  packageName?: string;
  /** The class the family sees the file's top-level functions in (Kotlin `StringsKt`): see `LanguageSpec.fileClass`. */
  fileClass?: string;
  moduleDoc: string;
  lineCount: number;
  defs: RawDef[];
  calls: RawCall[];
  imports: RawImport[];
  /** Names bound at file level with a declared type or value (`current_app: Flask = …`), as receiver expressions (see `RawDef.fields`). */
  globals?: [string, string][];
  /** o200k tokens of the whole file (the baseline an agent would otherwise read). */
  tokens: number;
  /** Definitions left out for being nested deeper than MAX_DEF_DEPTH (extract.ts); the build lists the file as `too_deep`. */
  tooDeep?: number;
  /** Functions the file declares without defining them (C/C++ prototypes): names and lines. */
  declares?: { name: string; line: number }[];
  /** Its first lines say it was generated from other files (an amalgamation): see file-role.ts. */
  copyMark?: boolean;
}

/** A node of the code graph as stored and served. */
export interface GraphNode {
  id: string;
  name: string;
  type: NodeKind;
  file_path: string;
  description: string;
  community: number;
  qualified_name: string;
  signature: string;
  docstring: string;
  line_start: number;
  line_end: number;
  language: string;
  parent?: string;
}

export interface GraphEdge {
  source: string;
  target: string;
  type: EdgeKind | string;
  weight?: number;
  /**
   * A `calls` edge to one of several definitions a call may reach at run time through an interface
   * or an overridden method (dispatch.ts): the confidence that it is the one, 1/candidates. Absent
   * on an edge to what the call names statically.
   */
  dispatch?: number;
}

export interface GraphCommunity {
  id: number;
  name: string;
  description: string;
  size?: number;
  files?: string[];
}

export interface CodeGraph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  communities: GraphCommunity[];
}
