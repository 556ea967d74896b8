import { createRequire } from "node:module";
import path from "node:path";
import { Language, Parser, Query, type Node as TSNode, type Tree } from "web-tree-sitter";
import { hasCopyMark } from "./file-role.js";
import type { LanguageSpec } from "./languages/language.js";
import { Scopes, typeText, type Binding } from "./scope.js";
import type { FileExtract, LanguageId, NodeKind, RawCall, RawDef } from "./types.js";

const CODE_CAP = 1600; // chars of source kept per definition (classes keep their head)
const DOC_CAP = 1200;
const SIGNATURE_CAP = 300;
/**
 * Definitions nested deeper than this are left out (their calls count for the definition at the
 * limit), and the build lists the file as `too_deep`: real code nests a few levels; 1,200 nested
 * classes is a generated or hostile file, and tree-sitter's own stacks give out past a few hundred.
 */
export const MAX_DEF_DEPTH = 100;
const CONTAINERS = new Set(["class", "interface", "struct", "enum", "impl"]);

const require = createRequire(import.meta.url);

/**
 * The o200k counter, loaded on the first count: its table costs a process (each parse worker) a
 * read and tens of MB of heap, which a build that leaves tokens to its fill does not pay while parsing.
 */
let tokens: Promise<typeof import("../../shared/tokens.js")> | undefined;
export function tokenCounter(): Promise<typeof import("../../shared/tokens.js")> {
  tokens ??= import("../../shared/tokens.js");
  return tokens;
}
const wasmDir = path.join(path.dirname(require.resolve("@vscode/tree-sitter-wasm/package.json")), "wasm");

/** A grammar is a file of @vscode/tree-sitter-wasm/wasm, or a package path (`tree-sitter-c/tree-sitter-c.wasm`). */
export function grammarPath(grammar: string): string {
  return grammar.includes("/") ? require.resolve(grammar) : path.join(wasmDir, grammar);
}

interface Loaded {
  parser: Parser;
  query: Query;
  /** The grammar has Python's `decorated_definition`: only then is a definition's parent worth asking for (an O(file) walk in tree-sitter). */
  decorators: boolean;
}

interface Found {
  kind: NodeKind | "impl" | "scope" | "local";
  node: TSNode;
  name: string;
  start: number;
  end: number;
  /** The last line (0-based) of the definition, its body beside it included (`bodyAfter`). */
  endRow: number;
}

/**
 * Parses source files with tree-sitter into the raw material of the code graph: definitions (its
 * nodes), calls and imports (its edges once `resolve.ts` has matched them to definitions).
 * Grammars load lazily.
 */
export class Extractor {
  private loaded = new Map<LanguageId, Promise<Loaded>>();
  private static init: Promise<void> | undefined;

  private load(spec: LanguageSpec): Promise<Loaded> {
    let p = this.loaded.get(spec.id);
    if (!p) {
      p = (async () => {
        Extractor.init ??= Parser.init();
        await Extractor.init;
        const lang = await Language.load(grammarPath(spec.grammar));
        const parser = new Parser();
        parser.setLanguage(lang);
        return { parser, query: new Query(lang, spec.query), decorators: lang.idForNodeType("decorated_definition", true) !== null };
      })();
      this.loaded.set(spec.id, p);
    }
    return p;
  }

  /** `countTokens: false` leaves `tokens` at 0 for a build that counts them after it is answerable (build.ts, fill). */
  async extract(filePath: string, source: string, spec: LanguageSpec, opts: { countTokens?: boolean } = {}): Promise<FileExtract> {
    const loaded = await this.load(spec);
    const tree = parseLeniently(loaded.parser, source, spec);
    if (!tree) throw new Error(`tree-sitter could not parse ${filePath}`);
    try {
      const ex = this.walk(filePath, source, spec, tree.rootNode, loaded);
      if (opts.countTokens !== false) ex.tokens = (await tokenCounter()).countTokens(source);
      return ex;
    } finally {
      tree.delete();
    }
  }

  /** Loads a grammar and compiles its query ahead of its first file. */
  async prepare(spec: LanguageSpec): Promise<void> {
    await this.load(spec);
  }

  /** Parses only, no query or walk: the floor a build's parse cannot go below (the benchmarks' parse-only time). */
  async parseOnly(source: string, spec: LanguageSpec): Promise<void> {
    const { parser } = await this.load(spec);
    parser.parse(source)?.delete();
  }

  private walk(filePath: string, source: string, spec: LanguageSpec, root: TSNode, { query, decorators }: Loaded): FileExtract {
    const found: Found[] = [];
    // A node two patterns define is the first pattern's (an Elixir module defining a struct is no class too).
    const defined = new Map<number, { pattern: number; at: number }>();
    const callSites: { start: number; name: string; receiver?: string; args?: { start: number; text: string; type?: string }[]; line: number }[] = [];
    const locals: Binding[] = [];
    const declares: { name: string; line: number }[] = [];
    const imported: TSNode[] = [];
    for (const m of query.matches(root)) {
      let def: TSNode | undefined, kind: string | undefined, name: TSNode | undefined, call: TSNode | undefined, callName: TSNode | undefined, receiver: TSNode | undefined;
      let localName: TSNode | undefined, localType: TSNode | undefined, localValue: TSNode | undefined, field = false;
      for (const c of m.captures) {
        if (c.name === "decl") declares.push({ name: c.node.text, line: c.node.startPosition.row + 1 });
        else if (c.name === "import") imported.push(c.node);
        else if (c.name.startsWith("def.")) {
          def = c.node;
          kind = c.name.slice(4);
        } else if (c.name === "name") name = c.node;
        else if (c.name === "call") call = c.node;
        else if (c.name === "call.name") callName = c.node;
        else if (c.name === "call.receiver") receiver = c.node;
        else if (c.name === "local.name") localName = c.node;
        else if (c.name === "local.field") {
          localName = c.node;
          field = true;
        } else if (c.name === "local.type") localType = c.node;
        else if (c.name === "local.value") localValue = c.node;
      }
      if (localName) {
        const ctx = !localType && !localValue ? spec.contextualParam?.(localName) : undefined;
        const value = ctx ? `⟪${ctx.callee}⟫${ctx.arg}.${ctx.param}` : localValue?.text;
        locals.push({ start: localName.startIndex, name: localName.text, type: localType ? typeText(localType.text) : undefined, value, field });
      } else if (def && kind && name) {
        if (spec.declarationOnly?.(def)) continue;
        const n = kind === "impl" ? implName(name.text) : (spec.definitionName?.(name) ?? name.text);
        const body = spec.bodyAfter?.(def);
        const last = body ?? def;
        const { end, endRow } = trimmedEnd(source, def.startIndex, last.endIndex, last.endPosition.row);
        const f: Found = { kind: kind as Found["kind"], node: def, name: n, start: def.startIndex, end, endRow };
        const before = defined.get(def.id);
        if (!before) defined.set(def.id, { pattern: m.patternIndex, at: found.push(f) - 1 });
        else if (m.patternIndex < before.pattern) {
          found[before.at] = f;
          before.pattern = m.patternIndex;
        }
      } else if (call && callName && (!spec.isCall || spec.isCall(call))) {
        callSites.push({ start: call.startIndex, name: callName.text, receiver: receiver?.text, args: spec.callArgs?.(call)?.map((a) => ({ start: a.startIndex, text: a.text, type: spec.argType?.(a) })), line: call.startPosition.row + 1 });
      }
    }
    found.sort((a, b) => a.start - b.start || b.end - a.end);

    // Sweep definitions in source order with a stack of open containers/functions.
    const defs: RawDef[] = [];
    const stack: { end: number; kind: string; index: number; qualified: string; receiver?: string }[] = [];
    const scoped = (top: (typeof stack)[number] | undefined, name: string) => (top?.kind === "scope" ? `${top.qualified}.${name}` : name);
    const ownerAt: { start: number; end: number; index: number }[] = [];
    const depthOf: number[] = [];
    const nested: { owner: number; start: number; name: string }[] = [];
    let tooDeep = 0;
    for (const f of found) {
      while (stack.length && stack[stack.length - 1].end <= f.start) stack.pop();
      const top = stack[stack.length - 1];
      if (top && top.end >= f.end && top.kind !== "impl" && top.kind !== "scope" && !CONTAINERS.has(top.kind)) {
        // A nested helper inside a function: its calls count for the enclosing function, its name is that function's.
        if (top.index >= 0) nested.push({ owner: top.index, start: f.start, name: f.name });
        continue;
      }
      if (f.kind === "impl") {
        stack.push({ end: f.end, kind: "impl", index: -1, qualified: f.name, receiver: f.name });
        continue;
      }
      if (f.kind === "local") {
        // A block whose definitions are local to it (Zig's `test` blocks): they are no nodes, and its calls count for the enclosing definition.
        stack.push({ end: f.end, kind: "local", index: -1, qualified: "" });
        continue;
      }
      if (f.kind === "scope") {
        // A namespace: prefixes the qualified names inside it, is no node and no parent.
        stack.push({ end: f.end, kind: "scope", index: top?.index ?? -1, qualified: scoped(top, f.name.split("::").join(".")) });
        continue;
      }
      let kind: NodeKind = f.kind;
      let parent = -1;
      let qualified = scoped(top, f.name);
      let receiverType = spec.receiverType?.(f.node);
      if (top && top.end >= f.end && top.kind !== "scope") {
        if (kind === "function") kind = "method";
        parent = top.index;
        qualified = `${top.qualified}.${f.name}`;
        if (top.kind === "impl") receiverType = top.receiver;
      } else if (receiverType) {
        qualified = scoped(top, `${receiverType}.${f.name}`);
      } else if (kind === "method") {
        kind = "function"; // a method of an object literal at file level
      }
      const depth = parent < 0 ? 1 : depthOf[parent] + 1;
      if (depth > MAX_DEF_DEPTH) {
        tooDeep++;
        continue;
      }
      const prev = defs[defs.length - 1];
      if (spec.clauses && prev && prev.qualifiedName === qualified && prev.kind === kind && prev.parent === parent && prev.receiverType === receiverType) {
        // Another clause of the function just defined: it spans both.
        const owner = ownerAt[ownerAt.length - 1];
        prev.lineEnd = f.endRow + 1;
        prev.docstring ||= spec.docstring(f.node, kind).slice(0, DOC_CAP);
        prev.code = source.slice(owner.start, Math.min(f.end, owner.start + CODE_CAP));
        owner.end = f.end;
        stack.push({ end: f.end, kind, index: defs.length - 1, qualified });
        continue;
      }
      const index = defs.length;
      depthOf.push(depth);
      defs.push({
        kind,
        name: f.name,
        qualifiedName: qualified,
        lineStart: f.node.startPosition.row + 1,
        lineEnd: f.endRow + 1,
        signature: spec.signature ? cap(spec.signature(f.node).replace(/\s+/g, " ").trim()) : spec.bodyAfter ? signatureOf(f.node, source, true) : signatureOf(f.node, source),
        docstring: spec.docstring(f.node, kind).slice(0, DOC_CAP),
        parent,
        bases: CONTAINERS.has(kind) || f.kind === "class" ? spec.bases(f.node) : [],
        receiverType,
        code: source.slice(f.start, Math.min(f.end, f.start + CODE_CAP)),
      });
      const returned = spec.returnType?.(f.node);
      const rt = returned ? typeText(returned) : undefined;
      if (rt) defs[index].returnType = rt;
      const params = spec.paramTypes?.(f.node);
      if (params?.some(Boolean)) defs[index].paramTypes = params.map((t) => t.slice(0, 300));
      const methods = kind === "interface" ? spec.interfaceMethods?.(f.node) : undefined;
      if (methods?.length) defs[index].methods = methods;
      stack.push({ end: f.end, kind, index, qualified });
      // A decorator's call (`@app.route("/")`) is the decorated definition's: it is applied to it.
      const holder = decorators ? f.node.parent : null;
      const decorated = holder?.type === "decorated_definition" ? holder.startIndex : f.start;
      ownerAt.push({ start: Math.min(decorated, f.start), end: f.end, index });
    }
    // Impl blocks with a trait name the trait as a base of the receiver type.
    for (const f of found) {
      if (f.kind !== "impl") continue;
      const traits = spec.bases(f.node);
      const target = defs.find((d) => d.name === f.name && CONTAINERS.has(d.kind));
      if (target) target.bases.push(...traits);
    }

    // Names bound by each definition (-1: the file): a call on one reads through it; a bare call of one is none of the project's.
    const scopes = new Scopes(defs, spec.selfNames, (d) => CONTAINERS.has(d.kind));
    for (const l of locals) scopes.add(innermost(ownerAt, l.start), l);
    for (const n of nested) scopes.add(n.owner, { start: n.start, name: n.name });
    scopes.collectFields();
    const globals = scopes.globals();

    const calls: RawCall[] = [];
    callSites.sort((a, b) => a.start - b.start);
    const open: { end: number; index: number }[] = [];
    let oi = 0;
    for (const c of callSites) {
      while (oi < ownerAt.length && ownerAt[oi].start <= c.start) open.push(ownerAt[oi++]);
      while (open.length && open[open.length - 1].end <= c.start) open.pop();
      // The innermost open definition that still spans the call owns it.
      let caller = -1;
      for (let i = open.length - 1; i >= 0; i--) {
        if (open[i].end > c.start) {
          caller = open[i].index;
          break;
        }
      }
      const call: RawCall = { caller, name: c.name, receiver: c.receiver, line: c.line };
      const receiverType = c.receiver ? scopes.rewrite(c.receiver, caller, c.start) : undefined;
      if (receiverType) call.receiverType = receiverType;
      if (!c.receiver && scopes.shadows(caller, c.name)) call.shadowed = true;
      if (c.args) call.args = c.args.map((a) => argExpr(a, (text) => scopes.rewrite(text, caller, a.start) ?? (scopes.boundUntyped(text, caller, a.start) ? "" : undefined)));
      calls.push(call);
    }

    return {
      path: filePath,
      language: spec.id,
      packageName: spec.packageName?.(root, filePath),
      fileClass: spec.fileClass?.(root, filePath),
      moduleDoc: spec.moduleDoc(root).slice(0, DOC_CAP),
      lineCount: root.endPosition.row + 1,
      defs,
      calls,
      imports: spec.imports(root, imported),
      ...(globals ? { globals } : {}),
      tokens: 0,
      ...(tooDeep ? { tooDeep } : {}),
      ...(hasCopyMark(source) ? { copyMark: true } : {}),
      ...(declares.length ? { declares } : {}),
    };
  }
}

/** Arguments longer than this are not typed: an overload is chosen by names, calls and literals. */
const ARG_CAP = 400;

/** An argument as a receiver expression: the type its syntax gives it, else its text read through the caller's bindings. */
function argExpr(a: { text: string; type?: string }, rewrite: (text: string) => string | undefined): string {
  const t = a.type === undefined ? undefined : a.type === "λ" || a.type === "null" ? a.type : typeText(a.type);
  if (t) return t === "λ" || t === "null" ? t : `⟨${t}⟩`;
  return a.text.length > ARG_CAP ? "" : (rewrite(a.text) ?? a.text);
}

/** The innermost definition spanning `pos` (definitions sorted by start, nested or disjoint), or -1. */
function innermost(owners: { start: number; end: number; index: number }[], pos: number): number {
  let lo = 0;
  let hi = owners.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (owners[mid].start <= pos) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo - 1; i >= 0; i--) if (owners[i].end > pos) return owners[i].index;
  return -1;
}

function implName(text: string): string {
  const m = text.replace(/<.*$/s, "").match(/[A-Za-z_][A-Za-z0-9_]*$/);
  return m ? m[0] : text;
}

/**
 * The file's tree; where it holds syntax errors and the language's lenient source parses without (or,
 * `lenientPartly`, with fewer), that tree (same positions: definitions' code and signatures are still
 * read from `source`).
 */
function parseLeniently(parser: Parser, source: string, spec: LanguageSpec): Tree | null {
  const tree = parser.parse(source);
  if (!tree?.rootNode.hasError || !spec.lenientSource) return tree;
  const alt = spec.lenientSource(source);
  if (alt === source) return tree;
  const again = parser.parse(alt);
  if (!again || (again.rootNode.hasError && (!spec.lenientPartly || errorSize(again.rootNode) >= errorSize(tree.rootNode)))) {
    again?.delete();
    return tree;
  }
  tree.delete();
  return again;
}

/**
 * How much of a tree its errors spoil: the bytes its ERROR nodes cover, and one for each missing
 * token (a test file's one `TEST_CASE("x") {` must not cost the file its other repairs).
 */
function errorSize(root: TSNode): number {
  let size = 0;
  const visit = (n: TSNode) => {
    if (n.type === "ERROR") size += Math.max(1, n.endIndex - n.startIndex);
    else if (n.isMissing) size += 1;
    else for (const c of n.children) if (c && (c.hasError || c.isMissing)) visit(c);
  };
  visit(root);
  return size;
}

function signatureOf(def: TSNode, source: string, whole = false): string {
  // Kotlin names no body field: its function_body (a block or `= expression`) ends the head.
  // A property's accessors (C#'s `{ get => …; set { … } }`) are its body.
  let body = def.childForFieldName("body") ?? def.childForFieldName("accessors") ?? def.namedChildren.find((c) => c?.type === "function_body") ?? null;
  if (!body && (def.type === "lexical_declaration" || def.type === "variable_declaration")) {
    body = def.namedChildren[0]?.childForFieldName("value")?.childForFieldName("body") ?? null;
  } else if (!body) {
    body = def.childForFieldName("value")?.childForFieldName("body") ?? null;
  }
  // Attributes and annotations before a declaration (C#'s `[JsonProperty("x")]`, PHP's `#[Route]`,
  // Java's `@Deprecated`, Swift's `@available(…)`, the last two at the head of its modifiers) are no
  // part of its head: an interface method's signature was `@Deprecated` alone.
  let start = def.startIndex;
  const leading = (nodes: (TSNode | null)[], types: ReadonlySet<string>) => {
    for (const c of nodes) {
      if (!c || !types.has(c.type)) return false;
      start = c.nextSibling?.startIndex ?? start;
    }
    return true;
  };
  const modifiers = def.children[0];
  if (modifiers?.type === "modifiers") {
    if (leading(modifiers.children, ANNOTATIONS)) start = modifiers.nextSibling?.startIndex ?? start;
  } else leading(def.children, ATTRIBUTE_LISTS);
  let text: string;
  // A comment between the head and the body (Ruby's `class Foo # why`, or doc comments inside) is no part of the signature.
  const comment = def.children.find((c) => c?.type === "comment" && (!body || c.startIndex < body.startIndex));
  // A definition whose body is beside it (bodyAfter), none inside, is all head.
  if (whole && !body) text = source.slice(start, def.endIndex);
  else if (comment && comment.startIndex > start && (!body || comment.startIndex < body.startIndex)) text = source.slice(start, comment.startIndex);
  else if (body && body.startIndex > start) text = source.slice(start, body.startIndex);
  else {
    // No body: the head's first line, or through the line its parameters end on when they go on
    // (an abstract or interface method `ExecuteCore<T>(` with one parameter a line, a record `R(`).
    const first = source.indexOf("\n", start);
    // Parameters that open on the first line (a tree repaired around an error can place them later):
    // one list, or each parameter a child of its own (Swift).
    const params = def.children.filter((c): c is TSNode => !!c && c.startIndex >= start && /param/.test(c.type) && !/type_param/.test(c.type));
    const end = params.length && (first === -1 || params[0].startIndex < first) ? params[params.length - 1].endIndex : -1;
    const nl = end > first ? source.indexOf("\n", end) : first;
    text = source.slice(start, nl === -1 || nl > def.endIndex ? def.endIndex : nl);
  }
  // Scala's `def f(x: Int): Int = …` leaves its `=`.
  text = text.replace(/\s+/g, " ").trim().replace(/\s*[:{]$|\s*=>?$/, "").trim();
  if (def.type === "type_spec") text = `type ${text}`;
  return cap(text);
}

/** Attribute lists written before a declaration, as its first children (C#, PHP). */
const ATTRIBUTE_LISTS: ReadonlySet<string> = new Set(["attribute_list"]);
/** Annotations at the head of a declaration's modifiers (Java, Swift). */
const ANNOTATIONS: ReadonlySet<string> = new Set(["marker_annotation", "annotation", "attribute"]);

function cap(signature: string): string {
  return signature.length > SIGNATURE_CAP ? signature.slice(0, SIGNATURE_CAP) + "…" : signature;
}

/**
 * A definition's end without the whitespace its node ends in: an indentation grammar's block (Scala
 * 3's `given … with`, a `trait … :` body) ends where the next line's token starts, which cited the
 * next definition's first line as this one's last.
 */
function trimmedEnd(source: string, start: number, end: number, endRow: number): { end: number; endRow: number } {
  let e = end;
  let row = endRow;
  for (; e > start; e--) {
    const c = source.charCodeAt(e - 1);
    if (c === 10) row--;
    else if (c !== 32 && c !== 9 && c !== 13) break;
  }
  return { end: e, endRow: row };
}
