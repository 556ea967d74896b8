import type { CatalogNode } from "../store/types.js";

/**
 * A node the question names, and how surely: PATHED for a file named by path or a frame's code, 1 for a qualified, module-prefixed, backticked or
 * called (`Convert()`) name or "the X module"; BARE for a name merely written as code; WEAK for a
 * dotted name whose prefix names no module of it.
 */
export interface Mention {
  node: CatalogNode;
  strength: number;
  /** Named by identifier (`wait_for`, `Response.Write`), or reached through a path or traceback frame. */
  by: "name" | "path";
  /** The name as written that named it, lower-cased (its last part: `write` of `Response.Write`); a path's base name. */
  token: string;
}

/** An identifier shared by more nodes (`__init__`, `String`) does not say which one is meant. */
const SPECIFIC = 10;
export const WEAK = 0.35;
/**
 * A file named by path, or the code at a stack-trace frame: the text points at it, and however long
 * the prose around it (a pasted report), the prose must not outvote it.
 */
const PATHED = 2;
/** A bare code-shaped name in prose is often named in passing (the `EmptyError` a helper creates). */
const BARE = 0.7;

/**
 * Finds the nodes a question names. Only identifiers written as code count (see `find`), and they
 * match names case-sensitively; a module answers to its file's base name (`cookiejar`, `tap`), and a
 * dotted prefix (`textwrap.`, `http.`) is checked against the words of the node's module: its path
 * segments and package name.
 */
export class NameIndex {
  private readonly byName = new Map<string, CatalogNode[]>();
  private readonly byQualified = new Map<string, CatalogNode[]>();
  private readonly moduleWords = new Map<string, Set<string>>();
  /** Module nodes by their file's base name (`sessions.py`), for paths written in the question. */
  private readonly byFileName = new Map<string, CatalogNode[]>();
  /** Nodes by file, for the line of a stack-trace frame. */
  private readonly inFile = new Map<string, CatalogNode[]>();

  constructor(nodes: CatalogNode[]) {
    this.add(nodes);
  }

  /** Nodes of re-indexed files: appended, as a rebuild over the patched catalog would order them. */
  add(nodes: CatalogNode[]): void {
    for (const n of nodes) {
      push(this.byName, nameKey(n), n);
      if (n.qualified_name !== n.name) push(this.byQualified, n.qualified_name.toLowerCase(), n);
      if (n.type === "module") {
        const words = n.file_path.replace(/\.[^./]+$/, "").toLowerCase().split("/");
        // Module names carry the package: `http.cookiejar` (Python), `http (http)` (Go: package (directory)).
        for (const w of n.name.toLowerCase().split(/[^a-z0-9_$]+/)) if (w) words.push(w);
        this.moduleWords.set(n.file_path, new Set(words));
        push(this.byFileName, fileName(n.file_path), n);
      }
      push(this.inFile, n.file_path, n);
    }
  }

  /** Nodes of re-indexed or removed files. */
  remove(nodes: CatalogNode[]): void {
    const gone = new Set(nodes);
    const drop = <K>(m: Map<K, CatalogNode[]>, key: K) => {
      const kept = m.get(key)?.filter((x) => !gone.has(x));
      if (kept?.length) m.set(key, kept);
      else m.delete(key);
    };
    for (const n of nodes) {
      drop(this.byName, nameKey(n));
      if (n.qualified_name !== n.name) drop(this.byQualified, n.qualified_name.toLowerCase());
      if (n.type === "module") {
        this.moduleWords.delete(n.file_path);
        drop(this.byFileName, fileName(n.file_path));
      }
      drop(this.inFile, n.file_path);
    }
  }

  /** A path or traceback frame, `Class.method`, `module.name`, `name()`, a backticked name, a code-shaped name, or "the X module". */
  find(question: string): Mention[] {
    const out = new Map<string, Mention>();
    let token = "";
    const noter = (by: Mention["by"]) => (nodes: CatalogNode[], strength: number) => {
      // A class's constructors share its name: overloads make it no less specific.
      if (nodes.length === 0 || nodes.filter((n) => !isConstructor(n)).length > SPECIFIC) return;
      for (const node of nodes) {
        const m = out.get(node.id);
        if (!m || m.strength < strength) out.set(node.id, { node, strength, by, token: by === "name" ? token : fileName(node.file_path).toLowerCase() });
      }
    };
    this.findPaths(question, noter("path"));
    const note = noter("name");
    const matches = [...question.matchAll(MENTION)];
    // Names the text writes qualified somewhere: that writing says whose they are (see `decided`), and
    // their bare uses elsewhere in the text mean the same one.
    const decided = new Set<string>();
    for (const m of matches) {
      const parts = m[2].split(/[.#]|::/);
      if (parts.length > 1) {
        const d = this.decided(parts);
        if (d) decided.add(d);
      }
    }
    for (const m of matches) {
      const parts = m[2].split(/[.#]|::/);
      const last = parts[parts.length - 1];
      token = last.toLowerCase();
      const named = this.byName.get(last.toLowerCase()) ?? [];
      if (parts.length > 1) {
        // Qualified forms first (Response.Write, TextWrapper._split), then a module prefix (textwrap.dedent, http.NewFileTransport).
        const qualifiedName = parts.slice(-2).join(".");
        const exact = (this.byQualified.get(qualifiedName.toLowerCase()) ?? []).filter((n) => n.qualified_name === qualifiedName);
        // Within a namespace the written pair ends the qualified name (`Node::SetTag` is YAML.Node.SetTag).
        const qualified = exact.length > 0 ? exact : named.filter((n) => n.qualified_name.endsWith(`.${qualifiedName}`));
        if (qualified.length > 0) {
          note(qualified, 1);
          continue;
        }
        const prefix = parts.slice(0, -1).map((p) => p.toLowerCase());
        const inModule = named.filter((n) => prefix.some((p) => this.moduleWords.get(n.file_path)?.has(p)));
        if (inModule.length > 0) {
          note(inModule.filter((n) => answersTo(n, last)), 1);
          continue;
        }
        // A member the index does not hold (a field, an enum's value, one the fix adds: `basic_memory_buffer::move`)
        // names its type rather than the member's namesakes elsewhere; weakly: `DelayBackoffType.Exponential`
        // is a setting the fix concerns, seldom the file it changes (bench-reports C#: at strength 1, 2 of 22
        // questions lost their gold's rank to the type).
        const owner = this.types(parts.slice(0, -1));
        if (owner.length > 0) {
          token = parts[parts.length - 2].toLowerCase();
          note(owner, WEAK);
          continue;
        }
        note(named.filter((n) => answersTo(n, last)), WEAK);
      } else if (m[4] !== undefined) {
        // "the getopt module": the module, whatever its name looks like, when it is one file (a Go package is many).
        const modules = named.filter((n) => n.type === "module");
        if (modules.length === 1 && [...this.moduleWords.values()].filter((w) => w.has(last.toLowerCase())).length === 1) note(modules, 1);
      } else if (!decided.has(last)) {
        const explicit = m[1] === "`" || m[3] !== undefined; // backticked or called
        if (!explicit && !isCodeShaped(last)) continue;
        // A language's global function written bare (`error()` in a Lua report, `len()` in Python's) is
        // the builtin, not the project's members of that name (every output handler's `handler.error`).
        const nodes = named.filter((n) => answersTo(n, last) && !(isMember(n) && BUILTINS[n.language]?.has(last)));
        // An exception type a report names is what the code throws or catches ("Throw JsonSyntaxException
        // instead of NPE"): the fix goes where it is thrown, seldom into the exception's own file.
        const thrown = nodes.filter((n) => this.exceptionFile(n.file_path, last));
        note(nodes.filter((n) => !thrown.includes(n)), explicit ? 1 : BARE);
        note(thrown, WEAK);
      }
    }
    return [...out.values()];
  }

  /**
   * The name a qualified writing (`Map.put()`, `ResponseStatus.TimedOut`, `Response.Write`) settles,
   * which the text's bare uses of it then mean too: the member when the qualifier is the project's
   * type or module, or a capitalised type the project lacks (another library's: the `put()` after
   * `Map.put()` is Map's); the type when the member is one the index does not hold (an enum's value,
   * a field). A lower-case qualifier the project lacks is a variable (`self.run`, `reader.peek`) and
   * settles nothing.
   */
  private decided(parts: string[]): string | undefined {
    const last = parts[parts.length - 1];
    const qualifier = parts[parts.length - 2];
    const named = (this.byName.get(last.toLowerCase()) ?? []).filter((n) => answersTo(n, last));
    const qualifiedName = parts.slice(-2).join(".");
    if (named.some((n) => n.qualified_name === qualifiedName || n.qualified_name.endsWith(`.${qualifiedName}`))) return last;
    const prefix = parts.slice(0, -1).map((p) => p.toLowerCase());
    if (named.some((n) => prefix.some((p) => this.moduleWords.get(n.file_path)?.has(p)))) return last;
    if (this.types(parts.slice(0, -1)).length > 0) return qualifier;
    return /^[A-Z]/.test(qualifier) ? last : undefined;
  }

  /** A file holding the exception type `name` (`…Exception`, `…Error`) and nothing else: the module of a Java or C# exception class. */
  private exceptionFile(file: string, name: string): boolean {
    if (!EXCEPTION.test(name)) return false;
    const defs = (this.inFile.get(file) ?? []).filter((n) => n.type !== "module");
    // The type, its members and constructors: every definition has it in its qualified name.
    return defs.some((n) => TYPES.has(n.type) && n.name === name) && defs.every((n) => n.qualified_name.split(".").includes(name));
  }

  /** The types (classes, structs, interfaces, enums) `path` names by its last part, within the namespaces before it when some match. */
  private types(path: string[]): CatalogNode[] {
    const name = path[path.length - 1];
    const types = (this.byName.get(name.toLowerCase()) ?? []).filter((n) => TYPES.has(n.type) && n.name === name);
    const within = types.filter((n) => n.qualified_name === path.join(".") || n.qualified_name.endsWith(`.${path.join(".")}`));
    return within.length > 0 ? within : types;
  }

  /**
   * Files the text names by path, and in a frame the code at its line: a path matches an indexed file
   * by its longest common suffix of segments (`site-packages/requests/sessions.py` is
   * `src/requests/sessions.py`). A name several files share (`__init__.py`, `index.js`) with no longer
   * suffix to tell them apart is WEAK evidence for each, as is a base name alone whose written
   * directory disagrees with the file's (`src/main.rs` for `examples/main.rs`).
   */
  private findPaths(question: string, note: (nodes: CatalogNode[], strength: number) => void): void {
    // Python frames first: their line and function are written apart from the path.
    for (const m of question.matchAll(PY_FRAME)) this.notePath(m[1], Number(m[2]), m[3], note);
    for (const m of question.matchAll(PATH)) this.notePath(m[0].replace(/:\d+$/, ""), m[1] ? Number(m[1]) : undefined, undefined, note);
  }

  private notePath(written: string, line: number | undefined, fn: string | undefined, note: (nodes: CatalogNode[], strength: number) => void): void {
    const segments = written.split(/[\\/]/).filter((x) => x && x !== ".");
    const candidates = this.byFileName.get(segments.at(-1) ?? "");
    if (!candidates) return;
    let longest = 0;
    let files: CatalogNode[] = [];
    for (const c of candidates) {
      const own = c.file_path.split("/");
      let k = 0;
      while (k < own.length && k < segments.length && own[own.length - 1 - k] === segments[segments.length - 1 - k]) k++;
      if (k > longest) [longest, files] = [k, [c]];
      else if (k === longest) files.push(c);
    }
    // `src/main.rs` of a reporter's own program is not the project's `test_max_level_features/main.rs`:
    // written directories that disagree with the file's, none agreeing, leave the base name alone.
    const disagrees = longest === 1 && segments.length > 1 && files.every((f) => f.file_path.includes("/"));
    const sure = files.length === 1 && !disagrees;
    note(files, sure ? PATHED : WEAK);
    if (!sure || (line === undefined && fn === undefined)) return;
    // The frame's function by name, else the innermost definition around its line (the report's version may differ a little).
    const inside = (this.inFile.get(files[0].file_path) ?? []).filter((n) => n.type !== "module");
    const named = fn ? inside.filter((n) => n.name === fn) : [];
    const around = line === undefined ? [] : inside.filter((n) => n.line_start <= line && line <= n.line_end).sort((a, b) => a.line_end - a.line_start - (b.line_end - b.line_start) || b.line_start - a.line_start).slice(0, 1);
    note(named.length > 0 ? named : around, PATHED);
  }
}

/**
 * A traceback frame: Python's `File "…/x.py", line 12, in func`; the rest (`at fn (file.js:10:5)`,
 * `server.go:123`, `(Foo.java:42)`, `src/flask/app.py:1234`) is a path with an optional `:line`.
 */
const PY_FRAME = /File "([^"\n]+)", line (\d+)(?:, in ([\w<>.]+))?/g;
/**
 * A name as code: backticked (1), dotted (`a.b.C`, C++'s, Rust's and PHP's `a::b::C` too) or Javadoc's `Class#member` (`ClassName#get`,
 * `java.util.List#add`: after a capitalised segment only, not a URL's `page.html#anchor`), called
 * (3: `name()`, or a Rust macro's `name!(`), or followed by "module"/"package" (4).
 */
const MENTION = /(`?)([A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*(?:(?<=(?:^|[^\w$])[A-Z][\w$]*)#[A-Za-z_$][\w$]*)?)(\(\)|!(?=[([{]))?(\s+(?:module|package)\b)?/g;
/**
 * A file path as written in text: optional directories (absolute, relative, Windows), a name with an
 * extension, an optional `:line`. A name with an extension that further segments follow is no file: a
 * route through a script (`/index.php/foo`, PATH_INFO) or a directory (`github.com/owner`).
 */
// Bounded repeats: a long run without a path in it (a pasted blob) must stay linear.
const PATH = /(?:[A-Za-z]:)?(?:[\w.@+~-]{0,80}[\\/]){0,24}[\w@+~-][\w.@+~-]{0,80}\.[A-Za-z0-9]{1,8}(?!\w)(?![\\/][\w.@+~-])(?::(\d+))?/g;

const TYPES = new Set(["class", "struct", "interface", "enum"]);
/**
 * Global functions of languages that call them bare while members are called on their table or object
 * (`handler.error`, `self.open`): a bare `error()` or `print()` names the language's own.
 */
const BUILTINS: Record<string, Set<string>> = {
  lua: new Set("assert collectgarbage dofile error getfenv getmetatable ipairs load loadfile loadstring module next pairs pcall print rawequal rawget rawlen rawset require select setfenv setmetatable tonumber tostring type unpack xpcall".split(" ")),
  python: new Set("abs all any callable delattr dir divmod enumerate eval exec filter getattr globals hasattr hash id input isinstance issubclass iter len locals map max min next open print range repr reversed round setattr sorted sum super vars zip".split(" ")),
};

/** A member of a type or table (a method: `handler.error`, `Session.open`), not a free function. */
function isMember(n: CatalogNode): boolean {
  return n.type === "method";
}
/** An exception type's name by the convention of most languages: `JsonSyntaxException`, `ProtocolError`. */
const EXCEPTION = /[a-z0-9](Exception|Error)$/;

/** A constructor: a member named as the type holding it (`RestClient.RestClient`, C++'s `ns.Foo.Foo`). */
function isConstructor(n: CatalogNode): boolean {
  const own = `${n.name}.${n.name}`;
  return (n.type === "method" || n.type === "function") && (n.qualified_name === own || n.qualified_name.endsWith(`.${own}`));
}

/** The base name of a project path (`sessions.py`). */
function fileName(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/**
 * Written as code rather than prose: snake_case or a leading underscore (`wait_for`, `_parse_tz_str`),
 * camelCase (`exhaustMap`, `getXHRResponse`), PascalCase of two or more words (`FileConn`,
 * `XMLHttpRequest`), or a word after a digit inside a name (`X509Certificate`, `S3Client`).
 * `IPv4`, `HTTP`, `Python` or `4Runner` are prose.
 */
function isCodeShaped(token: string): boolean {
  if (/[A-Za-z0-9]_[A-Za-z0-9]|^_+[A-Za-z]/.test(token)) return true;
  if (/^[a-z]+[A-Z]/.test(token)) return true;
  if (/^[A-Za-z][A-Za-z0-9]*[0-9][A-Z][a-z]/.test(token)) return true;
  return (token.match(/[A-Z][a-z]{2,}/g) ?? []).length + (/^[A-Z]{2,}[A-Z][a-z]{2,}/.test(token) ? 1 : 0) >= 2;
}

/** What a node answers to by name: its name, or for a module its file's base name (`cookiejar`, `tap`). */
function baseName(n: CatalogNode): string {
  return n.type === "module" ? (n.file_path.replace(/\.[^./]+$/, "").split("/").pop() ?? n.name) : n.name;
}

function nameKey(n: CatalogNode): string {
  return baseName(n).toLowerCase();
}

/** Identifiers are case-sensitive: `Subject` is the class, `subject` a variable, `SOCK_CLOEXEC` no file. */
function answersTo(n: CatalogNode, token: string): boolean {
  return baseName(n) === token;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
