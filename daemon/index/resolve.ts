import path from "node:path";
import { familyOf, type LanguageSpec } from "./languages/language.js";
import { languageById } from "./languages/registry.js";
import { ProjectFiles } from "./project-files.js";
import { roleFacts, type RoleFacts } from "./file-role.js";
import type { TsPaths } from "./ts-paths.js";
import type { FileExtract, GraphEdge, GraphNode, NodeKind, RawDef } from "./types.js";
import { ReceiverText, splitTop, typeText } from "./scope.js";
import { dispatchCandidates, type DispatchView } from "./dispatch.js";
import { isFinalType, isPrimitive, isTypeVariable, jdkFit, literalFit, literalType, paramType } from "./overloads.js";

const CLASS_LIKE = new Set<string>(["class", "interface", "struct", "enum", "type"]);
/** A receiver naming a module by its full dotted name (Elixir's `Mix.Project.config()`): resolved as one name. */
const DOTTED_NAME = /^[A-Z][A-Za-z0-9_]*(\.[A-Z][A-Za-z0-9_]*)+$/;
/** Names too common to resolve by global uniqueness alone. */
const TOO_COMMON = new Set(["get", "set", "run", "init", "main", "new", "close", "open", "read", "write", "start", "stop", "call", "apply", "update", "__init__", "constructor", "toString", "String", "Error", "len", "str", "map", "filter", "push", "add", "next",
  // Object protocol every value answers (Ruby's predicates, Java's equals): a call on an untyped receiver names no definition of ours.
  "hash", "inspect", "each", "fetch", "equals", "hashCode", "respond_to?", "has_key?", "key?", "include?", "empty?", "nil?", "is_a?", "kind_of?"]);

export interface NodeRecord extends GraphNode {
  code: string;
  bases: string[];
}

/**
 * Keys that tell edges apart: node ids and edge types are numbered on first sight and packed into
 * one number, so deduplicating, comparing or keeping the edges of a large graph allocates no
 * strings (a string key only past 2^24 node ids or 32 edge types). One edge always gets the same
 * key, and a key gives its edge back.
 */
export class EdgeKeys {
  private readonly ids = new Map<string, number>();
  private readonly idOf: string[] = [];
  private readonly types = new Map<string, number>();
  private readonly typeOf: string[] = [];

  key(source: string, target: string, type: string): number | string {
    const s = this.num(this.ids, this.idOf, source);
    const t = this.num(this.ids, this.idOf, target);
    const y = this.num(this.types, this.typeOf, type);
    return s < 2 ** 24 && t < 2 ** 24 && y < 32 ? (s * 2 ** 24 + t) * 32 + y : `${s},${t},${y}`;
  }

  edge(key: number | string): GraphEdge {
    let s: number, t: number, y: number;
    if (typeof key === "string") [s, t, y] = key.split(",").map(Number);
    else {
      y = key % 32;
      const st = (key - y) / 32;
      t = st % 2 ** 24;
      s = (st - t) / 2 ** 24;
    }
    return { source: this.idOf[s], target: this.idOf[t], type: this.typeOf[y] };
  }

  private num(m: Map<string, number>, back: string[], k: string): number {
    let n = m.get(k);
    if (n === undefined) {
      m.set(k, (n = back.length));
      back.push(k);
    }
    return n;
  }
}

/** What one call of `GraphResolver.update` changed. */
export interface ResolveDelta {
  /** Complete nodes (parents, code) of the files given as changed, in path order, module first. */
  nodes: NodeRecord[];
  edgesAdded: GraphEdge[];
  edgesRemoved: GraphEdge[];
  /** Nodes of unchanged files whose parent moved (a Go method whose receiver type appeared in another file). */
  parentUpdates: Map<string, string>;
  /** Files whose references were resolved (the changed ones and those their change can affect). */
  resolvedFiles: number;
}

interface NodeInfo {
  name: string;
  type: string;
  family: string;
  file: string;
  parent?: string;
  /** Index of the definition in its file's extract. */
  index?: number;
}

/**
 * What a receiver evaluates to: an instance or the static side of a type of the project (`sup`: its
 * bases only, `super`), a file of the project, or something outside it (a builtin, a literal, a
 * standard or third-party module): a call on that is none of the project's.
 */
type Value = { kind: "type"; id: string; sup?: boolean } | { kind: "file"; file: string } | { kind: "module"; spec: string } | { kind: "outside"; type?: string };
const OUTSIDE: Value = { kind: "outside" };

/** A file's results before an update: to tell what the update changed. */
interface Before {
  keys: (number | string)[];
  dispatch: Map<number | string, number>;
  attached: Map<string, { type: string; name: string }>;
  bases: Map<string, string[]>;
}

/** A memoized answer (`GraphResolver.memo`): its lookups, and the last set of lookups they were added to. */
interface Answer {
  value: unknown;
  deps: number[];
  into: Set<number> | undefined;
}

interface Member {
  id: string;
  /** `0\0index` for a type's own members, `1\0path\0index` for methods attached from elsewhere: later wins among each. */
  rank: string;
}

const own = (m: Member): number => (m.rank.startsWith("0\0") ? 1 : 0);

/** One file's facts and the results of its last resolution. */
interface FileState {
  /** What resolution reads of the file (no code, docstrings or signatures: see `resolutionExtract`). */
  ex: FileExtract;
  /** Go methods (def index) → the variable naming their receiver (`s` in `func (s *Server)`). */
  receiverVars: Map<number, string>;
  spec: LanguageSpec;
  family: string;
  dir: string;
  ids: string[];
  topLevel: Map<string, string>;
  imported: Map<string, { module: string; name: string }>;
  moduleAliases: Map<string, string>;
  /** What lookups of each name defined here can see (hashed): a changed print means the name's answers may change. */
  prints: Map<string, { print: number; parents: string[] }>;
  /** Receiver methods (def index) → the type they joined. */
  attached: Map<number, string>;
  /** This file's types → their resolved bases. */
  bases: Map<string, string[]>;
  /** Hashes of the lookups its last resolution made, sorted. */
  deps: Uint32Array;
  /** Its edges, as keys (`EdgeKeys`). */
  edgeKeys: (number | string)[];
  /** Its dispatch candidates' confidences, by edge key (a subset of `edgeKeys`). */
  dispatch: Map<number | string, number>;
}

/**
 * Turns per-file extracts into graph nodes and resolved edges (calls, imports, contains, inherits),
 * incrementally: each file's resolution records the questions it asked (names, members, bases,
 * module paths), each update answers which of those answers it changed, and only the files that
 * asked them are resolved again. A full build is an update in which every file is new; after any
 * sequence of updates the graph equals that of a full build over the same files.
 */
export class GraphResolver {
  private readonly files = new Map<string, FileState>();
  private readonly byName = new Map<string, string[]>();
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly members = new Map<string, Map<string, Member[]>>();
  private readonly baseIds = new Map<string, string[]>();
  private readonly project: ProjectFiles;
  private readonly keys = new EdgeKeys();
  /** Each directory-scoped package's top-level names, by family and directory, with the hashed start of their lookup keys. */
  private readonly dirNames = new Map<string, Map<string, { names: Map<string, string>; prefix: number }>>();
  private readonly uniques = new Map<string, Map<string, string | null>>();
  /** `importFiles` answers of this update, by file (or language, `importsFromAnywhere`) and specifier. */
  private importCache = new Map<string | LanguageSpec, Map<string, Answer>>();
  private edgeTotal = 0;
  /** Hashes of the lookups of the file being resolved. */
  private recording: Set<number> | undefined;
  /** The file whose calls are being resolved: its own names need no recording. */
  private current: FileState | undefined;
  /** The type whose member the call being resolved named through an instance (`callTarget`): where dispatch starts. */
  private staticReceiver: string | undefined;
  /** Types by the bases they name (the reverse of `baseIds`), built on first use after bases change. */
  private subIndex: Map<string, string[]> | undefined;

  constructor(opts: { tsPaths?: (file: string) => TsPaths | undefined } = {}) {
    this.project = new ProjectFiles(opts.tsPaths);
  }

  get fileCount(): number {
    return this.files.size;
  }

  get nodeCount(): number {
    return this.nodes.size;
  }

  get edgeCount(): number {
    return this.edgeTotal;
  }

  /** What dispatch.ts asks, answered with recorded lookups. */
  private readonly dispatchView: DispatchView = {
    node: (id) => {
      const n = this.nodes.get(id);
      if (n) this.dep("n:", n.name);
      return n;
    },
    subtypes: (typeId) => {
      this.dep("s:", typeId);
      if (!this.subIndex) {
        this.subIndex = new Map();
        for (const [t, bases] of this.baseIds) for (const b of bases) (this.subIndex.get(b) ?? this.subIndex.set(b, []).get(b)!).push(t);
        for (const list of this.subIndex.values()) list.sort();
      }
      return this.subIndex.get(typeId) ?? [];
    },
    memberOf: (typeId, name) => this.memberOf(typeId, name),
    // Interfaces share method names (`String`, `Write`): each name's holders are listed once.
    typesWithMethod: (name) =>
      this.memo("typesWithMethod", name, "", () => {
        this.dep("x:", name);
        const out = new Set<string>();
        for (const id of this.byName.get(name) ?? []) {
          const parent = this.nodes.get(id)?.parent;
          if (parent && CLASS_LIKE.has(this.nodes.get(parent)?.type ?? "")) out.add(parent);
        }
        return [...out].sort();
      }),
    interfaceMethods: (typeId) => this.interfaceMethods(typeId, 0),
    arity: (id) => {
      const n = this.nodes.get(id);
      if (n?.index === undefined) return 0;
      this.dep("f:", n.file, "\0", n.name);
      return this.files.get(n.file)?.ex.defs[n.index].paramTypes?.length ?? 0;
    },
    memo: (kind, a, b, fn) => this.memo(kind, a, b, fn),
  };

  /**
   * Answers of the reference phase, by question, with the lookups each made: that phase only reads
   * nodes, members and bases, so an answer stays true until it ends (undefined outside it).
   */
  private answers: Map<string, Map<string, Map<string, Answer>>> | undefined;

  /** `fn()`, answered once per reference phase and question; a repeat records the first call's lookups again. */
  private memo<T>(kind: string, a: string, b: string, fn: () => T): T {
    if (!this.answers) return fn();
    let byA = this.answers.get(kind);
    if (!byA) this.answers.set(kind, (byA = new Map()));
    let byB = byA.get(a);
    if (!byB) byA.set(a, (byB = new Map()));
    const hit = byB.get(b);
    if (hit) {
      // A file asking again already holds these lookups.
      if (this.recording && hit.into !== this.recording) {
        for (const h of hit.deps) this.recording.add(h);
        hit.into = this.recording;
      }
      return hit.value as T;
    }
    const outer = this.recording;
    const inner = new Set<number>();
    this.recording = inner;
    let value: T;
    try {
      value = fn();
    } finally {
      this.recording = outer;
    }
    if (outer) for (const h of inner) outer.add(h);
    byB.set(b, { value, deps: [...inner], into: outer });
    return value;
  }

  /** An interface's method specs, with those of the interfaces it embeds (bounded depth). */
  private interfaceMethods(typeId: string, depth: number): string[] {
    const n = this.nodes.get(typeId);
    if (n?.index === undefined || depth > 3) return [];
    this.dep("f:", n.file, "\0", n.name);
    this.dep("t:", typeId);
    const own = this.files.get(n.file)?.ex.defs[n.index].methods ?? [];
    return [...own, ...(this.baseIds.get(typeId) ?? []).flatMap((b) => this.interfaceMethods(b, depth + 1))];
  }

  /** The file of a node, if the node exists. */
  fileOf(id: string): string | undefined {
    return this.nodes.get(id)?.file;
  }

  /** Each file's definitions (kind and qualified name) and copy mark: what file roles are told from (file-role.ts). */
  fileFacts(): RoleFacts[] {
    return [...this.files.values()].map((st) => roleFacts(st.ex));
  }

  /** Every node, lean: what clustering and naming need. */
  nodeList(): { id: string; name: string; type: string; file_path: string }[] {
    return [...this.nodes].map(([id, n]) => ({ id, name: n.name, type: n.type, file_path: n.file }));
  }

  /** Nodes of a file already resolved, complete, from an extract of the content it was resolved from. */
  recordsOf(ex: FileExtract): NodeRecord[] {
    const st = this.files.get(ex.path);
    if (!st) throw new Error(`${ex.path} is not resolved`);
    // Another version of the file would pair its definitions with the wrong ids (or none).
    if (ex.defs.length !== st.ex.defs.length || ex.defs.some((d, i) => d.qualifiedName !== st.ex.defs[i].qualifiedName)) {
      throw new Error(`${ex.path}: its extract is not of the content it was resolved from`);
    }
    return this.nodeRecords(st, ex);
  }

  /** Every edge, by file path. */
  edges(): GraphEdge[] {
    const edges: GraphEdge[] = [];
    for (const p of [...this.files.keys()].sort()) {
      const st = this.files.get(p)!;
      for (const k of st.edgeKeys) edges.push(this.edgeOf(k, st.dispatch));
    }
    return edges;
  }

  private edgeOf(k: number | string, dispatch: Map<number | string, number>): GraphEdge {
    const e = this.keys.edge(k);
    const d = dispatch.get(k);
    return d === undefined ? e : { ...e, dispatch: d };
  }

  /**
   * Applies changed (or new) and removed files, and resolves what they can affect. With `load`
   * (the files as an index already holds them) no delta is made: nothing is to be written.
   */
  update(changed: FileExtract[], removed: string[], opts: { load?: boolean } = {}): ResolveDelta {
    this.importCache = new Map();
    const changedKeys = new Set<string>();
    // A first build resolves every file anyway: nobody is left to ask who is affected.
    const tracking = this.files.size > 0;
    const emit = (k: string) => {
      if (!tracking) return;
      changedKeys.add(k);
      if (k.startsWith("n:")) this.uniques.delete(k.slice(2));
    };
    const fresh = new Set(changed.map((e) => e.path));
    const full = new Map(opts.load ? [] : changed.map((e) => [e.path, e]));
    /** Edges, attachments (by node id) and bases before this update, of every file resolved or removed in it. */
    const before = new Map<string, Before>();
    const remember = (st: FileState) => {
      if (before.has(st.ex.path)) return;
      const attached = new Map([...st.attached].map(([i, t]) => [st.ids[i], { type: t, name: st.ex.defs[i].name }]));
      before.set(st.ex.path, { keys: st.edgeKeys, dispatch: st.dispatch, attached, bases: st.bases });
    };

    for (const p of removed) {
      const old = this.files.get(p);
      if (!old || fresh.has(p)) continue;
      remember(old);
      this.printDiff(old, undefined, emit);
      for (const k of this.project.remove(p)) emit(k);
      for (const [i, t] of old.attached) emit(`m:${t}\0${old.ex.defs[i].name}`);
      for (const [t, bases] of old.bases) {
        emit(`t:${t}`);
        for (const b of bases) emit(`s:${b}`);
      }
      this.unregister(old);
      this.files.delete(p);
    }
    for (const ex of [...changed].sort((a, b) => (a.path < b.path ? -1 : 1))) {
      const old = this.files.get(ex.path);
      const st = this.stateOf(ex);
      if (old) {
        remember(old);
        this.printDiff(old, st, emit);
        if (old.family !== st.family || old.ex.packageName !== ex.packageName) {
          for (const k of this.project.remove(ex.path)) emit(k);
          for (const k of this.project.add(ex.path, st.family, ex.packageName)) emit(k);
        }
        this.unregister(old);
      } else {
        if (tracking) this.printDiff(undefined, st, emit);
        for (const k of this.project.add(ex.path, st.family, ex.packageName)) emit(k);
      }
      this.register(st);
    }

    // Resolve the changed files and every file that asked a question whose answer changed; the
    // receivers and bases they find are answers to others' questions in turn, so repeat until no
    // file is added. Calls and imports are resolved last, once, when every member and base stands.
    const dirty = new Set(fresh);
    const deps = new Map<string, Set<number>>();
    let frontier = [...fresh];
    let seen = 0;
    while (true) {
      for (const p of this.asking(changedKeys, seen, dirty)) {
        dirty.add(p);
        frontier.push(p);
      }
      seen = changedKeys.size;
      if (frontier.length === 0) break;
      frontier.sort();
      for (const p of frontier) {
        const st = this.files.get(p)!;
        if (!fresh.has(p)) remember(st);
        deps.set(p, new Set());
        this.record(deps.get(p)!, () => this.attachReceivers(st, before.get(p)?.attached, emit));
      }
      for (const p of frontier) this.record(deps.get(p)!, () => this.resolveBases(this.files.get(p)!, before.get(p)?.bases, emit));
      frontier = [];
    }

    const delta: ResolveDelta = { nodes: [], edgesAdded: [], edgesRemoved: [], parentUpdates: new Map(), resolvedFiles: dirty.size };
    this.answers = new Map();
    try {
      for (const p of [...dirty].sort()) {
        const st = this.files.get(p)!;
        this.record(deps.get(p)!, () => this.resolveReferences(st));
        st.deps = sortedUnique(hashArray(deps.get(p)!));
        const prev = before.get(p);
        this.edgeTotal += st.edgeKeys.length - (prev?.keys.length ?? 0);
        if (opts.load) continue;
        this.diffEdges(prev?.keys ?? [], st.edgeKeys, delta, prev?.dispatch, st.dispatch);
        if (fresh.has(p)) delta.nodes.push(...this.nodeRecords(st, full.get(p)!));
        else if (prev) {
          for (const [i, id] of st.ids.entries()) {
            const now = st.attached.get(i);
            if (prev.attached.get(id)?.type !== now && st.ex.defs[i].parent < 0) delta.parentUpdates.set(id, now ?? st.ex.path);
          }
        }
      }
    } finally {
      this.answers = undefined;
    }
    for (const [p, prev] of before) {
      if (this.files.has(p)) continue;
      this.diffEdges(prev.keys, [], delta, prev.dispatch, new Map());
      this.edgeTotal -= prev.keys.length;
    }
    return delta;
  }

  /** An edge whose dispatch confidence changed is removed and added again: stores replace it whole. */
  private diffEdges(oldKeys: (number | string)[], newKeys: (number | string)[], delta: ResolveDelta, oldDispatch = new Map<number | string, number>(), newDispatch = new Map<number | string, number>()): void {
    if (oldKeys.length === 0) {
      // A file new to the graph: all its edges are added (its keys are distinct).
      for (const k of newKeys) delta.edgesAdded.push(this.edgeOf(k, newDispatch));
      return;
    }
    const was = new Set(oldKeys);
    const is = new Set(newKeys);
    for (const k of newKeys) {
      if (!was.has(k)) delta.edgesAdded.push(this.edgeOf(k, newDispatch));
      else if (oldDispatch.get(k) !== newDispatch.get(k)) {
        delta.edgesRemoved.push(this.edgeOf(k, oldDispatch));
        delta.edgesAdded.push(this.edgeOf(k, newDispatch));
      }
    }
    for (const k of oldKeys) if (!is.has(k)) delta.edgesRemoved.push(this.edgeOf(k, oldDispatch));
  }

  /** Files not yet in `dirty` whose recorded lookups include a key added to `keys` after the first `from`. */
  private asking(keys: Set<string>, from: number, dirty: Set<string>): string[] {
    if (keys.size === from) return [];
    const hashes = sortedUnique(Uint32Array.from([...keys].slice(from), (k) => fnv(FNV_OFFSET, k)));
    const out: string[] = [];
    for (const [p, st] of this.files) if (!dirty.has(p) && intersects(st.deps, hashes)) out.push(p);
    return out;
  }

  private record(into: Set<number>, fn: () => void): void {
    this.recording = into;
    try {
      fn();
    } finally {
      this.recording = undefined;
    }
  }

  /** Records a lookup key given in parts (hashed as their concatenation, without building it). */
  private dep(...parts: string[]): void {
    if (!this.recording) return;
    let h = FNV_OFFSET;
    for (const part of parts) h = fnv(h, part);
    this.recording.add(h);
  }

  /** A file's own facts: ids, top-level names, imports, and what lookups of its names see. */
  private stateOf(ex: FileExtract): FileState {
    const spec = languageById(ex.language);
    const st: FileState = {
      ex: resolutionExtract(ex),
      receiverVars: new Map(),
      spec,
      family: familyOf(spec),
      dir: dirOf(ex.path),
      ids: [],
      topLevel: new Map(),
      imported: new Map(),
      moduleAliases: new Map(),
      prints: new Map(),
      attached: new Map(),
      bases: new Map(),
      deps: new Uint32Array(0),
      edgeKeys: [],
      dispatch: new Map(),
    };
    const seen = new Map<string, number>();
    ex.defs.forEach((d, i) => {
      const n = (seen.get(d.qualifiedName) ?? 0) + 1;
      seen.set(d.qualifiedName, n);
      const id = `${ex.path}::${d.qualifiedName}${n > 1 ? `#${n}` : ""}`;
      st.ids.push(id);
      if (d.parent < 0 && !d.receiverType && n === 1) st.topLevel.set(d.name, id);
      const recv = d.receiverType ? goReceiverVar(d) : undefined;
      if (recv) st.receiverVars.set(i, recv);
    });
    // The file's JVM class (Kotlin `StringsKt`) stands for the file: `StringsKt.f()` is `fileTop(file, f)`.
    const fileClass = ex.fileClass && !st.topLevel.has(ex.fileClass) ? ex.fileClass : undefined;
    if (fileClass) st.topLevel.set(fileClass, ex.path);
    const prints = new Map<string, { text: string; parents: string[] }>();
    if (fileClass) prints.set(fileClass, { text: `${ex.path}|module;`, parents: [] });
    ex.defs.forEach((d, i) => {
      const parent = d.parent >= 0 ? st.ids[d.parent] : ex.path;
      const p = prints.get(d.name) ?? { text: "", parents: [] };
      p.text += `${st.ids[i]}|${d.kind}|${parent}|${d.receiverType ?? ""}|${st.topLevel.get(d.name) === st.ids[i] ? 1 : 0}|${d.returnType ?? ""}|${d.fields?.join(",") ?? ""}|${d.paramTypes?.join(",") ?? ""}|${d.methods?.join(",") ?? ""}|${d.bases.join(",")};`;
      if (d.parent >= 0) p.parents.push(parent);
      prints.set(d.name, p);
    });
    for (const [name, expr] of ex.globals ?? []) {
      const p = prints.get(name) ?? { text: "", parents: [] };
      p.text += `global|${expr};`;
      prints.set(name, p);
    }
    for (const [name, p] of prints) st.prints.set(name, { print: printHash(p.text), parents: p.parents });
    for (const imp of ex.imports) {
      for (const { name, alias } of imp.names) st.imported.set(alias, { module: imp.module, name });
      if (imp.names.length === 0) {
        const alias = imp.alias ?? spec.defaultAlias?.(imp.module);
        if (alias) st.moduleAliases.set(alias, imp.module);
      }
    }
    return st;
  }

  /** Emits the lookup keys whose answers differ between two versions of a file's names and imports. */
  private printDiff(old: FileState | undefined, now: FileState | undefined, emit: (k: string) => void): void {
    const st = (now ?? old)!;
    const names = new Set([...(old?.prints.keys() ?? []), ...(now?.prints.keys() ?? [])]);
    for (const name of names) {
      const a = old?.prints.get(name);
      const b = now?.prints.get(name);
      if (a?.print === b?.print) continue;
      emit(`n:${name}`);
      // Who holds a method of the name (dispatch.ts `typesWithMethod`).
      emit(`x:${name}`);
      emit(`f:${st.ex.path}\0${name}`);
      for (const s of [old, now]) if (s) emit(`d:${s.family}\0${s.dir}\0${name}`);
      for (const parent of [...(a?.parents ?? []), ...(b?.parents ?? [])]) emit(`m:${parent}\0${name}`);
    }
    const aliases = new Set([...(old?.imported.keys() ?? []), ...(now?.imported.keys() ?? [])]);
    for (const alias of aliases) {
      const a = old?.imported.get(alias);
      const b = now?.imported.get(alias);
      if (a?.module !== b?.module || a?.name !== b?.name) emit(`f:${st.ex.path}\0${alias}`);
    }
    for (const alias of new Set([...(old?.moduleAliases.keys() ?? []), ...(now?.moduleAliases.keys() ?? [])])) {
      if (old?.moduleAliases.get(alias) !== now?.moduleAliases.get(alias)) emit(`f:${st.ex.path}\0${alias}`);
    }
  }

  private register(st: FileState): void {
    const { ex } = st;
    this.files.set(ex.path, st);
    this.dirNames.get(st.family)?.delete(st.dir);
    this.nodes.set(ex.path, { name: ex.path, type: "module", family: st.family, file: ex.path });
    ex.defs.forEach((d, i) => {
      const id = st.ids[i];
      const parent = d.parent >= 0 ? st.ids[d.parent] : ex.path;
      this.nodes.set(id, { name: d.name, type: d.kind, family: st.family, file: ex.path, parent, index: i });
      const list = this.byName.get(d.name);
      if (list) list.push(id);
      else this.byName.set(d.name, [id]);
      if (d.parent >= 0) this.addMember(parent, d.name, { id, rank: `0\0${pad(i)}` });
    });
  }

  private unregister(st: FileState): void {
    const { ex } = st;
    if (st.bases.size) this.subIndex = undefined;
    this.dirNames.get(st.family)?.delete(st.dir);
    this.detach(st);
    for (const t of st.bases.keys()) this.baseIds.delete(t);
    this.nodes.delete(ex.path);
    ex.defs.forEach((d, i) => {
      const id = st.ids[i];
      this.nodes.delete(id);
      const list = this.byName.get(d.name);
      if (list) {
        const k = list.indexOf(id);
        if (k >= 0) list.splice(k, 1);
        if (list.length === 0) this.byName.delete(d.name);
      }
      if (d.parent >= 0) this.removeMember(st.ids[d.parent], d.name, id);
    });
  }

  private addMember(typeId: string, name: string, m: Member): void {
    let byName = this.members.get(typeId);
    if (!byName) this.members.set(typeId, (byName = new Map()));
    const list = byName.get(name);
    if (list) list.push(m);
    else byName.set(name, [m]);
  }

  private removeMember(typeId: string, name: string, id: string): void {
    const byName = this.members.get(typeId);
    const list = byName?.get(name);
    if (!byName || !list) return;
    const k = list.findIndex((m) => m.id === id);
    if (k >= 0) list.splice(k, 1);
    if (list.length === 0) byName.delete(name);
    if (byName.size === 0) this.members.delete(typeId);
  }

  private detach(st: FileState): void {
    for (const [i, t] of st.attached) {
      this.removeMember(t, st.ex.defs[i].name, st.ids[i]);
      const info = this.nodes.get(st.ids[i]);
      if (info) info.parent = st.ex.path;
    }
    st.attached = new Map();
  }

  /** Methods declared outside their type (Go receivers, Rust impls, C++ `Foo::bar`) join the type in their package or an included header. */
  private attachReceivers(st: FileState, prev: Before["attached"] | undefined, emit: (k: string) => void): void {
    this.detach(st);
    st.ex.defs.forEach((d, i) => {
      if (!d.receiverType || d.parent >= 0) return;
      const typeId = (st.spec.directoryScope ? this.dirName(st.family, st.dir, d.receiverType) : undefined) ?? st.topLevel.get(d.receiverType) ?? this.globImported(st, d.receiverType) ?? this.unique(d.receiverType, st.family, true, false);
      if (!typeId) return;
      st.attached.set(i, typeId);
      this.nodes.get(st.ids[i])!.parent = typeId;
      this.addMember(typeId, d.name, { id: st.ids[i], rank: `1\0${st.ex.path}\0${pad(i)}` });
    });
    const now = new Map([...st.attached].map(([i, t]) => [st.ids[i], { type: t, name: st.ex.defs[i].name }]));
    for (const id of new Set([...(prev?.keys() ?? []), ...now.keys()])) {
      const a = prev?.get(id);
      const b = now.get(id);
      if (a?.type === b?.type) continue;
      for (const x of [a, b]) if (x) emit(`m:${x.type}\0${x.name}`);
      emit(`x:${(a ?? b)!.name}`);
    }
  }

  /** Inheritance first: method lookup on self walks the bases. */
  private resolveBases(st: FileState, prev: Map<string, string[]> | undefined, emit: (k: string) => void): void {
    st.bases = new Map();
    st.ex.defs.forEach((d, i) => {
      const id = st.ids[i];
      for (const b of d.bases) {
        const target = st.spec.packageImport ? this.baseNamed(st, b, id) : this.resolveName(st, b, true);
        if (!target || target === id) continue;
        const list = st.bases.get(id);
        if (list) list.push(target);
        else st.bases.set(id, [target]);
      }
    });
    for (const t of new Set([...(prev?.keys() ?? []), ...st.bases.keys()])) {
      const a = prev?.get(t);
      const b = st.bases.get(t);
      if (b) this.baseIds.set(t, b);
      else this.baseIds.delete(t);
      if (a?.join("\0") === b?.join("\0")) continue;
      emit(`t:${t}`);
      for (const base of new Set([...(a ?? []), ...(b ?? [])])) emit(`s:${base}`);
      this.subIndex = undefined;
    }
  }

  /**
   * A base as a Java class names it: a dotted name through its outer type or package, a nested type
   * of the classes around it (their own members: their bases may not stand yet), else by name.
   */
  private baseNamed(st: FileState, b: string, id: string): string | undefined {
    const parts = b.split(".");
    for (let t = this.enclosingType(this.nodes.get(id)?.parent), hops = 0; t && hops < 8 && parts.length === 1; t = this.enclosingType(this.nodes.get(t)?.parent), hops++) {
      const m = this.member(t, b);
      if (m && CLASS_LIKE.has(this.nodes.get(m)?.type ?? "")) return m;
    }
    if (parts.length === 1) return this.resolveName(st, b, true);
    let cur = this.resolveName(st, parts[0], true, true) ?? (parts.length > 1 ? this.lookupInModule(st, parts.slice(0, -1).join("."), parts[parts.length - 1]) : undefined);
    if (cur && this.nodes.get(cur)?.name === parts[parts.length - 1]) return cur;
    for (let i = 1; cur && i < parts.length; i++) cur = this.member(cur, parts[i]);
    return cur && CLASS_LIKE.has(this.nodes.get(cur)?.type ?? "") ? cur : undefined;
  }

  /** The file's edges: containment, inheritance, imports and calls. */
  private resolveReferences(fi: FileState): void {
    const keys: (number | string)[] = [];
    const seen = new Set<number | string>();
    const dispatch = new Map<number | string, number>();
    const add = (source: string, target: string, type: GraphEdge["type"], confidence?: number) => {
      // A def calling itself is recursion, a fact worth keeping; nothing contains, inherits or imports itself.
      if (source === target && type !== "calls") return;
      const k = this.keys.key(source, target, type);
      if (seen.has(k)) {
        // A direct call of a candidate makes the edge direct; of several dispatching calls, the likeliest counts.
        const was = dispatch.get(k);
        if (was !== undefined) {
          if (confidence === undefined) dispatch.delete(k);
          else if (confidence > was) dispatch.set(k, confidence);
        }
        return;
      }
      seen.add(k);
      keys.push(k);
      if (confidence !== undefined) dispatch.set(k, confidence);
    };
    const { ex } = fi;
    ex.defs.forEach((d, i) => add(d.parent >= 0 ? fi.ids[d.parent] : ex.path, fi.ids[i], "contains"));
    for (const [i, t] of fi.attached) add(t, fi.ids[i], "contains");
    for (const [id, bases] of fi.bases) for (const b of bases) add(id, b, "inherits");
    for (const imp of ex.imports) {
      const files = this.importFiles(fi, imp.module);
      if (files.length === 0) continue;
      // One edge per import: to the file defining the first imported name when the module spans files.
      let target = files[0];
      if (files.length > 1 && imp.names.length) {
        const hit = this.lookupInModule(fi, imp.module, imp.names[0].name);
        const file = hit ? this.nodes.get(hit)?.file : undefined;
        if (file && files.includes(file)) target = file;
      }
      add(ex.path, target, "imports");
    }
    this.current = fi;
    try {
      for (const d of ex.declares ?? []) {
        // A prototype joins its definition elsewhere; one defined here (declared first) needs no edge.
        if (fi.topLevel.has(d.name)) continue;
        const target = this.resolveName(fi, d.name);
        if (target && this.nodes.get(target)?.file !== ex.path) add(ex.path, target, "declares");
      }
      for (const c of ex.calls) {
        const callerId = c.caller >= 0 ? fi.ids[c.caller] : ex.path;
        this.staticReceiver = undefined;
        const target = this.callTarget(fi, c, callerId);
        if (target) for (const t of this.overloadsOf(fi, c.caller, callerId, target, c.args)) add(callerId, t, "calls");
        if (!this.staticReceiver) continue;
        const { targets, confidence } = dispatchCandidates(this.dispatchView, fi.family, this.staticReceiver, c.name, target, ex.path);
        for (const t of targets) add(callerId, t, "calls", confidence);
      }
    } finally {
      this.current = undefined;
      this.staticReceiver = undefined;
    }
    fi.edgeKeys = keys;
    fi.dispatch = dispatch;
  }

  /** The definition a call names, if the project defines it. */
  private callTarget(fi: FileState, c: FileExtract["calls"][number], callerId: string): string | undefined {
    const { ex } = fi;
    const { selfNames, implicitSelf } = fi.spec;
    const caller = ex.defs[c.caller];
    const recv = (c.receiver && fi.spec.typeReceiver?.(c.receiver)) || c.receiver;
    if (!recv) {
      const builtin = fi.spec.builtins?.has(c.name);
      if (c.name === "super" && !builtin) return this.baseConstructor(this.enclosingType(callerId));
      // Java's `this(…)`: another constructor of the class.
      if (c.name === "this" && selfNames.includes("this")) return this.enclosingType(callerId);
      // A name the caller binds (a parameter, a local, a nested helper) is none of the project's definitions.
      if (c.shadowed) return undefined;
      const t = implicitSelf ? this.enclosingType(callerId) : undefined;
      // A builtin's name is the project's only where the project declares it.
      return (t ? this.memberOf(t, c.name) : undefined) ?? this.resolveName(fi, c.name, false, builtin);
    }
    if (selfNames.includes(recv) || (caller?.receiverType && fi.receiverVars.get(c.caller) === recv)) {
      const t = this.enclosingType(callerId);
      this.staticReceiver = t;
      let target = t ? this.memberOf(t, c.name) : fi.spec.fileStruct ? this.fileTop(ex.path, c.name) : undefined;
      if (!target && caller?.receiverType && !fi.attached.has(c.caller)) {
        // A method of an object no type defines (JavaScript's `res.send = function`): its siblings in the file.
        const sibling = `${ex.path}::${caller.qualifiedName.slice(0, caller.qualifiedName.lastIndexOf(".") + 1)}${c.name}`;
        if (this.nodes.get(sibling)?.file === ex.path) target = sibling;
      }
      return target;
    }
    if (!c.receiverType && fi.moduleAliases.has(recv)) return this.lookupInModule(fi, fi.moduleAliases.get(recv)!, c.name);
    const v = this.receiverValue(fi, c.caller, callerId, c.receiverType ?? recv);
    // A receiver written as the type's own name is its static side: no instance to dispatch on.
    if (v?.kind === "type" && !v.sup && (c.receiverType ?? recv) !== this.nodes.get(v.id)?.name) this.staticReceiver = v.id;
    if (v) return this.memberOfValue(fi, v, c.name);
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(recv) || DOTTED_NAME.test(recv)) {
      const cls = this.resolveName(fi, recv, true);
      const clsNode = cls ? this.nodes.get(cls) : undefined;
      if (clsNode && CLASS_LIKE.has(clsNode.type)) return this.memberOf(cls!, c.name);
      if (clsNode?.type === "module") return this.fileTop(cls!, c.name);
    }
    // A receiver of unknown type: a method defined once in the project, never a top-level function.
    if (TOO_COMMON.has(c.name) || c.name.length <= 3 || fi.spec.moduleReceivers) return undefined;
    return this.unique(c.name, fi.family, false, false, true);
  }

  /**
   * The overloads a call with `args` arguments may mean (`LanguageSpec.overloads`): the methods of
   * the target's name taking that many in the class the target belongs to, else in its bases, nearest
   * first; none when no method of the name takes that many. Never another class's method.
   */
  private overloadsOf(fi: FileState, caller: number, callerId: string, target: string, argList: string[] | undefined): string[] {
    const info = this.nodes.get(target);
    // Both languages must write their parameters for a count to tell (a Java call of a Kotlin function takes it as found);
    // a call read without its arguments (an index of an older version) takes it as found too.
    if (!fi.spec.overloads || !argList || info?.type !== "method" || !info.parent || !this.files.get(info.file)?.spec.overloads) return [target];
    const args = argList.length;
    const seen = new Set<string>();
    let level = [info.parent];
    for (let depth = 0; level.length && depth <= 4; depth++) {
      const fits: string[] = [];
      const next: string[] = [];
      for (const typeId of level) {
        if (seen.has(typeId)) continue;
        seen.add(typeId);
        this.dep("m:", typeId, "\0", info.name);
        for (const m of this.members.get(typeId)?.get(info.name) ?? []) if (this.takes(m.id, args)) fits.push(m.id);
        this.dep("t:", typeId);
        next.push(...(this.baseIds.get(typeId) ?? []));
      }
      // Arguments no overload here takes may be taken by a base's (an override of one overload hides none of the others).
      const chosen = fits.length && argList.length ? this.byArgTypes(fi, caller, callerId, fits.sort(), argList) : fits.sort();
      if (chosen.length) return chosen;
      level = next;
    }
    return [];
  }

  /** Of overloads taking as many arguments as a call passes, those its arguments' known types fit best (all when none is known to fit). */
  private byArgTypes(fi: FileState, caller: number, callerId: string, cands: string[], args: string[]): string[] {
    const values = args.map((a) => this.argValue(fi, caller, callerId, a));
    let best: string[] = [];
    let top = -Infinity;
    for (const id of cands) {
      const score = this.argsFit(id, values);
      if (score === undefined || score < top) continue;
      if (score > top) best = [];
      top = score;
      best.push(id);
    }
    return best;
  }

  /** What an argument is: a literal or final type by name (`lit`), a value the resolver evaluates, or unknown. */
  private argValue(fi: FileState, caller: number, callerId: string, arg: string): { lit: string } | Value | undefined {
    if (!arg) return undefined;
    if (arg === "λ" || arg === "null") return { lit: arg };
    if (arg === "⟨[]⟩") return { lit: "[]" };
    // `Modifier.PUBLIC`: a constant of a type outside the project, an enum's, is of that type.
    const constant = /^([A-Z][\w$]*)\.[A-Z][A-Z0-9_]*$/.exec(arg)?.[1];
    const owner = constant ? this.typeNamed(fi, constant, callerId) : undefined;
    if (owner?.kind === "outside" && owner.type && !isFinalType(owner.type)) return { lit: `enum ${owner.type}` };
    const lit = literalType(arg);
    if (lit) return { lit };
    const declared = /^⟨([\w$.]+)⟩$/.exec(arg)?.[1];
    if (declared && isFinalType(declared)) return { lit: declared };
    const v = this.receiverValue(fi, caller, callerId, arg);
    return v?.kind === "outside" && v.type && isFinalType(v.type) ? { lit: v.type } : v;
  }

  /** How a method's parameters fit known arguments: the sum of their fits, fixed arity before varargs; undefined when one cannot be passed. */
  private argsFit(id: string, values: ({ lit: string } | Value | undefined)[]): number | undefined {
    const info = this.nodes.get(id)!;
    const st = this.files.get(info.file)!;
    const params = (st.ex.defs[info.index!].paramTypes ?? []).map(paramType);
    const varargs = params.at(-1)?.varargs ?? false;
    let score = varargs ? -100 : 0;
    for (const [i, v] of values.entries()) {
      const p = params[Math.min(i, params.length - 1)];
      if (!v || !p) continue;
      // An array (or a value of no known type) passed where the varargs are.
      if (p.varargs && i === params.length - 1 && values.length === params.length && ("lit" in v ? v.lit === "[]" : v.kind === "outside" && !v.type)) continue;
      const fit = this.argFit(st, id, v, p.name);
      if (fit < 0) return undefined;
      score += fit;
    }
    return score;
  }

  /** How one known argument fits a parameter type written in the callee's file (see overloads.ts). */
  private argFit(st: FileState, id: string, v: { lit: string } | Value, p: string): number {
    if ("lit" in v) return literalFit(v.lit, p);
    if (!p || isTypeVariable(p)) return 0;
    // A value of no known type (a primitive's: `int` names no type of the project) fits any but the project's types.
    if (v.kind === "outside" && !v.type) return isPrimitive(p) || p === "[]" || isFinalType(p) ? 0 : this.typeNamed(st, p, id)?.kind === "type" ? -1 : 0;
    if (p === "[]" || isPrimitive(p)) return -1;
    if (v.kind !== "type" && v.kind !== "outside") return 0;
    const param = this.typeNamed(st, p, id);
    if (v.kind === "outside") {
      if (param?.kind === "type") return -1; // a type outside the project extends none of the project's
      if (!v.type) return 0;
      return jdkFit(v.type, p) ?? (isFinalType(p) ? -1 : 0);
    }
    if (param?.kind !== "type") {
      if (!param || p === "Object") return 0;
      if (isFinalType(p)) return -1;
      // A type outside the project: one the argument's type (or a base) names outside, maybe one of theirs, else none.
      let fit = -1;
      for (const b of this.outsideBases(v.id)) fit = Math.max(fit, jdkFit(b, p) ?? 0);
      return fit;
    }
    if (param.id === v.id) return 1;
    return this.extendsType(v.id, param.id) ? 0 : -1;
  }

  /** The bases a type of the project and its bases name that are no types of the project (`ArrayList`, `Filer`), by name. */
  private outsideBases(typeId: string, out = new Set<string>(), depth = 0): Set<string> {
    const info = this.nodes.get(typeId);
    const st = info ? this.files.get(info.file) : undefined;
    if (!info || !st || info.index === undefined || depth > 8) return out;
    this.dep("f:", info.file, "\0", info.name);
    for (const b of st.ex.defs[info.index].bases) {
      const v = this.typeNamed(st, b, typeId);
      if (v?.kind === "type") this.outsideBases(v.id, out, depth + 1);
      else out.add(b);
    }
    return out;
  }

  /** Whether a type of the project has another among its bases, transitively. */
  private extendsType(typeId: string, base: string, depth = 0): boolean {
    if (depth > 8) return false;
    this.dep("t:", typeId);
    return (this.baseIds.get(typeId) ?? []).some((b) => b === base || this.extendsType(b, base, depth + 1));
  }

  /** Whether a method takes `args` arguments (no parameter types written: none; a varargs one takes any number from there). */
  private takes(id: string, args: number): boolean {
    const info = this.nodes.get(id);
    if (info?.type !== "method" || info.index === undefined) return false;
    const st = this.files.get(info.file);
    if (!st?.spec.overloads) return false;
    const params = st.ex.defs[info.index].paramTypes ?? [];
    return params.at(-1)?.endsWith("...") ? args >= params.length - 1 : args === params.length;
  }

  /** A member of what a receiver evaluated to. */
  private memberOfValue(fi: FileState, v: Value, name: string): string | undefined {
    switch (v.kind) {
      case "type":
        return v.sup ? this.superMember(v.id, name) : this.memberOf(v.id, name);
      case "file":
        return this.fileTop(v.file, name);
      case "module":
        return this.lookupInModule(fi, v.spec, name);
      default: {
        // A type outside the project may still have members defined in it (Kotlin's or Swift's extensions: `fun Context.findActivity()`).
        const ext = v.type ? this.unique(name, fi.family, false, false) : undefined;
        return ext?.endsWith(`::${v.type}.${name}`) || ext?.endsWith(`.${v.type}.${name}`) ? ext : undefined;
      }
    }
  }

  /** A member as `super.m()` finds it: in the bases, in order. */
  private superMember(typeId: string, name: string): string | undefined {
    this.dep("t:", typeId);
    for (const b of this.baseIds.get(typeId) ?? []) {
      const hit = this.memberOf(b, name);
      if (hit) return hit;
    }
    return undefined;
  }

  /** What `super(…)` calls: the first class base's constructor (its own or inherited), else that class. */
  private baseConstructor(typeId: string | undefined): string | undefined {
    if (!typeId) return undefined;
    this.dep("t:", typeId);
    for (const b of this.baseIds.get(typeId) ?? []) {
      if (this.nodes.get(b)?.type !== "class") continue;
      return this.memberOf(b, "constructor") ?? b;
    }
    return undefined;
  }

  /**
   * What a receiver expression evaluates to, as far as the project's declarations say: its first
   * name (a type `⟨T⟩`, `this`, a class, a module, a call, `new C()`, a literal), then each field
   * (`.x`: the type's declared field) and call (`.m()`: the method's return type) after it.
   * Undefined when some step is not known.
   */
  private receiverValue(fi: FileState, caller: number, callerId: string, text: string, depth = 0): Value | undefined {
    if (depth > 4) return undefined;
    const ex = new ReceiverText(text);
    let cur = this.rootValue(fi, caller, callerId, ex, depth);
    // Whatever follows a value outside the project stays outside it, of a type not known.
    if (cur?.kind === "outside") return (ex.space(), ex.done()) ? cur : OUTSIDE;
    while ((ex.space(), !ex.done())) {
      if (ex.eat("!")) continue;
      if (ex.eat(".(")) {
        // Go's type assertion `x.(T)`: the type, whatever x was.
        const t = ex.until(")");
        cur = t === undefined ? undefined : this.typeNamed(fi, typeText(t) ?? "");
        continue;
      }
      if (!cur || (!ex.eat("?.") && !ex.eat("."))) return undefined;
      ex.space();
      // Java's explicit type arguments: `x.<T>m()`.
      ex.generics();
      const name = ex.name();
      if (!name) return undefined;
      ex.generics();
      const argText = ex.peek("(") ? ex.group() : undefined;
      const called = argText !== undefined;
      if (cur.kind === "outside") return OUTSIDE;
      if (called) {
        // `mod.C(…)` makes a C; `x.m(…)` is what m returns.
        let m = this.memberOfValue(fi, cur, name);
        // Of overloads, the one its arguments choose (a setter `tagSet(t)` returns other than its getter `tagSet()`).
        if (m && fi.spec.overloads) m = this.overloadsOf(fi, caller, callerId, m, argText!.trim() ? splitTop(argText!, ",").map(chainArg) : [])[0];
        cur = !m ? undefined : CLASS_LIKE.has(this.nodes.get(m)?.type ?? "") ? { kind: "type", id: m } : this.returned(m, depth);
      } else cur = cur.kind === "type" ? (this.fieldValue(cur.id, name, depth) ?? this.nestedType(cur.id, name)) : cur.kind === "module" ? this.moduleMember(fi, cur.spec, name) : undefined;
    }
    return cur;
  }

  private rootValue(fi: FileState, caller: number, callerId: string, ex: ReceiverText, depth: number): Value | undefined {
    const declared = ex.declared();
    if (declared !== undefined) return this.typeNamed(fi, declared, callerId);
    const ctx = ex.contextual();
    if (ctx) return this.callbackParam(fi, caller, callerId, ctx, depth);
    if (ex.literal()) return OUTSIDE;
    if (ex.eat("new ")) {
      const t = ex.qualified();
      ex.generics();
      ex.args();
      return t ? this.typeNamed(fi, t, callerId) : undefined;
    }
    ex.eat("&");
    if (ex.peek("(")) {
      const inner = ex.group();
      if (inner === undefined) return undefined;
      // TypeScript's `(x as T)`, Java's `((T) x)`.
      const cast = inner.match(/\bas\s+([A-Za-z_$][\w$.]*)[^()]*$/) ?? inner.match(/^\(\s*([A-Za-z_$][\w$.]*)\s*(?:<[^()]*>)?\s*\)\s*[\w$]/);
      return cast ? this.typeNamed(fi, cast[1], callerId) : this.receiverValue(fi, caller, callerId, inner, depth + 1);
    }
    const name = ex.name();
    if (!name) return undefined;
    if (ex.peek("{")) {
      // Go's composite literal `T{…}`.
      ex.group();
      return this.typeNamed(fi, name);
    }
    const { selfNames, builtins } = fi.spec;
    if (name === "super") {
      ex.args();
      const t = this.enclosingType(callerId);
      return t ? { kind: "type", id: t, sup: true } : undefined;
    }
    if (selfNames.includes(name) || (caller >= 0 && fi.receiverVars.get(caller) === name)) {
      const t = this.enclosingType(callerId);
      return t ? { kind: "type", id: t } : undefined;
    }
    if (ex.peek("(") || ex.peek("<")) {
      ex.generics();
      const args = ex.group();
      if (name === "new" && fi.spec.id === "go") return this.typeNamed(fi, typeText(args ?? "") ?? "");
      // A bare call of a method of the class (Java's `origin().file`), where the language has them.
      const type = fi.spec.implicitSelf ? this.enclosingType(callerId) : undefined;
      const target = (type ? this.memberOf(type, name) : undefined) ?? this.resolveName(fi, name, false, true);
      const node = target ? this.nodes.get(target) : undefined;
      if (node && CLASS_LIKE.has(node.type)) return { kind: "type", id: target! };
      if (node && (node.type === "function" || node.type === "method")) return this.returned(target!, depth);
      return this.outsideName(fi, name) ? OUTSIDE : undefined;
    }
    const alias = this.aliasOf(fi, name);
    if (alias !== undefined) return this.importFiles(fi, alias).length ? { kind: "module", spec: alias } : OUTSIDE;
    const target = this.resolveName(fi, name, true, true);
    const node = target ? this.nodes.get(target) : undefined;
    if (node && CLASS_LIKE.has(node.type)) return { kind: "type", id: target! };
    if (node?.type === "module") return { kind: "file", file: target! };
    if (!target) {
      const global = this.importedGlobal(fi, name, depth);
      if (global) return global;
      // A bare name where methods name their class's members bare (Java) may be a field the class inherits or declares below.
      // An inner class sees its outer classes' fields too.
      for (let t = fi.spec.implicitSelf ? this.enclosingType(callerId) : undefined, hops = 0; t && hops < 4; t = this.enclosingType(this.nodes.get(t)?.parent), hops++) {
        const field = this.fieldValue(t, name, depth);
        if (field) return field;
      }
    }
    return builtins?.has(name) || this.outsideName(fi, name) ? OUTSIDE : undefined;
  }

  /** A type declared inside another (Java's `Document.OutputSettings`). */
  private nestedType(typeId: string, name: string): Value | undefined {
    const m = this.member(typeId, name);
    return m && CLASS_LIKE.has(this.nodes.get(m)?.type ?? "") ? { kind: "type", id: m } : undefined;
  }

  /** A variable another file of the project binds at file level and this one imports (`from .globals import current_app`). */
  private importedGlobal(fi: FileState, name: string, depth: number): Value | undefined {
    const imp = this.importedOf(fi, name);
    if (!imp) return undefined;
    for (const p of this.importFiles(fi, imp.module)) {
      const st = this.files.get(p);
      if (!st) continue;
      this.dep("f:", p, "\0", imp.name);
      const expr = st.ex.globals?.find(([n]) => n === imp.name)?.[1];
      if (expr !== undefined) return this.receiverValue(st, -1, p, expr, depth + 1);
    }
    return undefined;
  }

  /** The type of a callback's parameter: the callee's parameter of function type, at its position (`init: (source: Observable<T>, …) => …`). */
  private callbackParam(fi: FileState, caller: number, callerId: string, ctx: { callee: string; arg: number; param: number }, depth: number): Value | undefined {
    const dot = ctx.callee.lastIndexOf(".");
    let callee: string | undefined;
    if (dot < 0) callee = this.resolveName(fi, ctx.callee, false, true);
    else {
      const v = this.receiverValue(fi, caller, callerId, ctx.callee.slice(0, dot), depth + 1);
      callee = v ? this.memberOfValue(fi, v, ctx.callee.slice(dot + 1)) : undefined;
    }
    if (callee && CLASS_LIKE.has(this.nodes.get(callee)?.type ?? "")) callee = this.memberOf(callee, "constructor");
    const info = callee ? this.nodes.get(callee) : undefined;
    const st = info ? this.files.get(info.file) : undefined;
    if (!info || !st || info.index === undefined) return undefined;
    this.dep("f:", info.file, "\0", info.name);
    const fnType = st.ex.defs[info.index].paramTypes?.[ctx.arg];
    if (!fnType?.startsWith("(")) return undefined;
    const params = new ReceiverText(fnType).group();
    // TypeScript's `this:` pseudo-parameter takes no argument.
    const p = params === undefined ? undefined : splitTop(params, ",").filter((x) => !/^\s*this\s*:/.test(x))[ctx.param];
    const t = p?.includes(":") ? typeText(p.slice(p.indexOf(":") + 1)) : undefined;
    return t ? this.typeNamed(st, t) : undefined;
  }

  /** A name the file imports from a module outside the project, or a builtin of its language it does not define. */
  private outsideName(fi: FileState, name: string): boolean {
    const imp = this.importedOf(fi, name);
    if (imp) return this.importFiles(fi, imp.module).length === 0;
    return !!fi.spec.builtins?.has(name);
  }

  /**
   * A declared type, in the file declaring it: a type of the project, or something outside it.
   * `from`: the definition it is written in, whose enclosing types' nested types it may name.
   */
  private typeNamed(fi: FileState, t: string, from?: string): Value | undefined {
    if (!/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(t)) return { kind: "outside" };
    const parts = t.split(".");
    const last = parts[parts.length - 1];
    const outside: Value = { kind: "outside", type: last };
    if (parts.length > 1) {
      const alias = this.aliasOf(fi, parts[0]);
      if (alias !== undefined) {
        if (this.importFiles(fi, alias).length === 0) return outside;
        const hit = this.lookupInModule(fi, alias, last);
        return hit && CLASS_LIKE.has(this.nodes.get(hit)?.type ?? "") ? { kind: "type", id: hit } : undefined;
      }
      if (this.outsideName(fi, parts[0])) return outside;
      const nested = this.nestedNamed(fi, parts, from);
      if (nested) return nested;
      // A fully qualified name (`org.jsoup.nodes.Attribute`) where a package is a module.
      const pkg = parts.slice(0, -1).join(".");
      if (fi.spec.packageImport && /^[a-z]/.test(pkg)) {
        const qualified = this.lookupInModule(fi, pkg, last);
        if (qualified && CLASS_LIKE.has(this.nodes.get(qualified)?.type ?? "")) return { kind: "type", id: qualified };
        // A package the project does not hold (`org.w3c.dom.Document`).
        if (this.importFiles(fi, pkg).length === 0) return outside;
      }
    } else if (fi.spec.builtins?.has(t) && !this.definedHere(fi, t)) return outside;
    else if (this.outsideName(fi, t)) return outside;
    else {
      const inScope = from ? this.typeInScope(from, t) : undefined;
      if (inScope) return { kind: "type", id: inScope };
    }
    const hit = this.resolveName(fi, last, true);
    if (hit && CLASS_LIKE.has(this.nodes.get(hit)?.type ?? "")) return { kind: "type", id: hit };
    // A name no file of the project declares: a type parameter, a builtin or a dependency's type.
    return hit ? undefined : OUTSIDE;
  }

  /** A type nested in a type the file sees (`Outer.Inner`), without a guess by uniqueness. */
  private nestedNamed(fi: FileState, parts: string[], from?: string): Value | undefined {
    let cur = (from ? this.typeInScope(from, parts[0]) : undefined) ?? this.resolveName(fi, parts[0], true, true);
    for (let i = 1; cur && i < parts.length; i++) {
      if (!CLASS_LIKE.has(this.nodes.get(cur)?.type ?? "")) return undefined;
      cur = this.member(cur, parts[i]);
    }
    return cur && CLASS_LIKE.has(this.nodes.get(cur)?.type ?? "") ? { kind: "type", id: cur } : undefined;
  }

  /** A type named so where a definition is written: a type around it, or one nested in (or inherited by) one of those. */
  private typeInScope(from: string, name: string): string | undefined {
    for (let t = this.enclosingType(from), hops = 0; t && hops < 8; t = this.enclosingType(this.nodes.get(t)?.parent), hops++) {
      if (this.nodes.get(t)?.name === name) return t;
      const m = this.memberOf(t, name);
      if (m && CLASS_LIKE.has(this.nodes.get(m)?.type ?? "")) return m;
    }
    return undefined;
  }

  private definedHere(fi: FileState, name: string): boolean {
    return !!(fi === this.current ? fi.topLevel.get(name) : this.fileTop(fi.ex.path, name));
  }

  /** What a call of a definition returns, by its declared return type, in its own file. */
  private returned(id: string, depth: number): Value | undefined {
    const info = this.nodes.get(id);
    const st = info ? this.files.get(info.file) : undefined;
    if (!info || !st || info.index === undefined) return undefined;
    this.dep("f:", info.file, "\0", info.name);
    const rt = st.ex.defs[info.index].returnType;
    if (!rt) return undefined;
    if (rt === "this" || rt === "Self") {
      const t = this.enclosingType(id);
      return t ? { kind: "type", id: t } : undefined;
    }
    return this.typeNamed(st, rt, id);
  }

  /** A field of a type (or of its bases), evaluated in the type's own file. */
  private fieldValue(typeId: string, name: string, depth: number, hops = 0): Value | undefined {
    const info = this.nodes.get(typeId);
    const st = info ? this.files.get(info.file) : undefined;
    if (!info || !st || info.index === undefined || hops > 3) return undefined;
    this.dep("f:", info.file, "\0", info.name);
    const expr = st.ex.defs[info.index].fields?.find(([n]) => n === name)?.[1];
    if (expr !== undefined) return this.receiverValue(st, info.index, typeId, expr, depth + 1);
    this.dep("t:", typeId);
    for (const b of this.baseIds.get(typeId) ?? []) {
      const v = this.fieldValue(b, name, depth, hops + 1);
      if (v) return v;
    }
    return undefined;
  }

  /** `pkg.Name` of a module: a type of the project, else unknown. */
  private moduleMember(fi: FileState, spec: string, name: string): Value | undefined {
    const hit = this.lookupInModule(fi, spec, name);
    const node = hit ? this.nodes.get(hit) : undefined;
    if (node && CLASS_LIKE.has(node.type)) return { kind: "type", id: hit! };
    if (node?.type === "module") return { kind: "file", file: hit! };
    return undefined;
  }

  /** A whole-module import's alias in a file (recorded when the file is not the one being resolved). */
  private aliasOf(fi: FileState, name: string): string | undefined {
    if (fi !== this.current) this.dep("f:", fi.ex.path, "\0", name);
    return fi.moduleAliases.get(name);
  }

  private importedOf(fi: FileState, name: string): { module: string; name: string } | undefined {
    return fi === this.current ? fi.imported.get(name) : this.fileImported(fi.ex.path, name);
  }

  /** Nodes of one file, as stored and served; `ex` is its full extract (the state keeps no code). */
  private nodeRecords(st: FileState, ex: FileExtract): NodeRecord[] {
    const out: NodeRecord[] = [
      {
        id: ex.path,
        name: moduleName(ex),
        type: "module",
        file_path: ex.path,
        description: firstSentence(ex.moduleDoc) || `${ex.language} module ${ex.path}`,
        community: -1,
        qualified_name: moduleName(ex),
        signature: "",
        docstring: ex.moduleDoc,
        line_start: 1,
        line_end: ex.lineCount,
        language: ex.language,
        code: "",
        bases: [],
      },
    ];
    ex.defs.forEach((d, i) => {
      out.push({
        id: st.ids[i],
        name: d.name,
        type: d.kind,
        file_path: ex.path,
        description: describe(d, ex),
        community: -1,
        qualified_name: d.qualifiedName,
        signature: d.signature,
        docstring: d.docstring,
        line_start: d.lineStart,
        line_end: d.lineEnd,
        language: ex.language,
        parent: st.attached.get(i) ?? (d.parent >= 0 ? st.ids[d.parent] : ex.path),
        code: d.code,
        bases: d.bases,
      });
    });
    return out;
  }

  // Lookups. Each records what it asked, so a change of the answer re-resolves the asking file.

  /** The one definition of `name` in the family, if there is exactly one (methods and kinds filtered). */
  private unique(name: string, family: string, classOnly: boolean, excludeMethods: boolean, methodsOnly = false): string | undefined {
    this.dep("n:", name);
    const ids = this.byName.get(name);
    if (!ids) return undefined;
    let answers = this.uniques.get(name);
    if (!answers) this.uniques.set(name, (answers = new Map()));
    const variant = `${family}\0${classOnly ? 1 : 0}${excludeMethods ? 1 : 0}${methodsOnly ? 1 : 0}`;
    let hit = answers.get(variant);
    if (hit === undefined) {
      hit = null;
      for (const id of ids) {
        const n = this.nodes.get(id)!;
        if (n.family !== family || (classOnly && !CLASS_LIKE.has(n.type)) || (excludeMethods && n.type === "method") || (methodsOnly && n.type !== "method" && !this.hasReceiver(n))) continue;
        if (hit) {
          hit = null;
          break;
        }
        hit = id;
      }
      answers.set(variant, hit);
    }
    return hit ?? undefined;
  }

  /** A function declared on a receiver (Go's methods, Kotlin's extension functions), wherever its type is. */
  private hasReceiver(n: NodeInfo): boolean {
    return n.index !== undefined && !!this.files.get(n.file)?.ex.defs[n.index]?.receiverType;
  }

  /** A top-level name of a directory-scoped package (the first file in path order defining it). */
  private dirName(family: string, dir: string, name: string): string | undefined {
    let byDir = this.dirNames.get(family);
    if (!byDir) this.dirNames.set(family, (byDir = new Map()));
    let pkg = byDir.get(dir);
    if (!pkg) {
      const names = new Map<string, string>();
      for (const p of this.project.filesIn(family, dir)) for (const [k, v] of this.files.get(p)!.topLevel) if (!names.has(k)) names.set(k, v);
      byDir.set(dir, (pkg = { names, prefix: fnv(fnv(fnv(fnv(fnv(FNV_OFFSET, "d:"), family), "\0"), dir), "\0") }));
    }
    // The key `d:family\0dir\0name`, hashed from its stored start.
    this.recording?.add(fnv(pkg.prefix, name));
    return pkg.names.get(name);
  }

  private fileTop(file: string, name: string): string | undefined {
    this.dep("f:", file, "\0", name);
    return this.files.get(file)?.topLevel.get(name);
  }

  private fileImported(file: string, name: string): { module: string; name: string } | undefined {
    this.dep("f:", file, "\0", name);
    return this.files.get(file)?.imported.get(name);
  }

  private member(typeId: string, name: string): string | undefined {
    this.dep("m:", typeId, "\0", name);
    const list = this.members.get(typeId)?.get(name);
    if (!list?.length) return undefined;
    // A type's own member wins over one attached from elsewhere (a test's `X.prototype.m = function`,
    // an extension function a member shadows); among each, the later definition.
    let best = list[0];
    for (const m of list) if (own(m) > own(best) || (own(m) === own(best) && m.rank > best.rank)) best = m;
    return best.id;
  }

  private memberOf(typeId: string, name: string, depth = 0): string | undefined {
    const hit = this.member(typeId, name);
    if (hit || depth > 3) return hit;
    this.dep("t:", typeId);
    for (const b of this.baseIds.get(typeId) ?? []) {
      const h = this.memberOf(b, name, depth + 1);
      if (h) return h;
    }
    return undefined;
  }

  private enclosingType(id: string | undefined): string | undefined {
    let cur = id;
    while (cur) {
      const n = this.nodes.get(cur);
      if (!n) return undefined;
      if (CLASS_LIKE.has(n.type)) return cur;
      cur = n.parent;
    }
    return undefined;
  }

  /** The files an import of `fi` names, by its language's rules; answered once per file (or language) and specifier per update. */
  private importFiles(fi: FileState, spec: string): string[] {
    const asker = fi.spec.importsFromAnywhere ? fi.spec : fi.ex.path;
    let bySpec = this.importCache.get(asker);
    if (!bySpec) this.importCache.set(asker, (bySpec = new Map()));
    const hit = bySpec.get(spec);
    if (hit) {
      if (this.recording && hit.into !== this.recording) {
        for (const h of hit.deps) this.recording.add(h);
        hit.into = this.recording;
      }
      return hit.value as string[];
    }
    const deps: number[] = [];
    const view = this.project.view(fi.family, (k) => {
      const h = fnv(FNV_OFFSET, k);
      deps.push(h);
      this.recording?.add(h);
    });
    const files = fi.spec.resolveImport?.(spec, fi.ex, view) ?? [];
    bySpec.set(spec, { value: files, deps, into: this.recording });
    return files;
  }

  /** Finds `name` as a file-level definition of the module, following one re-export hop. */
  private lookupInModule(fi: FileState, spec: string, name: string): string | undefined {
    for (const p of this.importFiles(fi, spec)) {
      const target = this.files.get(p);
      if (!target) continue;
      if (target.spec.directoryScope) {
        const hit = this.dirName(target.family, target.dir, name);
        if (hit) return hit;
        // An import of a class's member: Java's `import static a.b.C.m`, a nested class `a.b.C.Inner`.
        const segs = spec.split(".");
        const at = segs.findIndex((seg) => CLASS_LIKE.has(this.nodes.get(this.fileTop(p, seg) ?? "")?.type ?? ""));
        let cls = at >= 0 ? this.fileTop(p, segs[at]) : undefined;
        for (let i = at + 1; cls && i < segs.length; i++) cls = this.member(cls, segs[i]);
        const member = cls && CLASS_LIKE.has(this.nodes.get(cls)?.type ?? "") ? this.memberOf(cls, name) : undefined;
        if (member) return member;
        continue;
      }
      const direct = this.fileTop(p, name) ?? this.tableMember(p, name);
      if (direct) return direct;
      const re = this.fileImported(p, name);
      if (re) {
        for (const q of this.importFiles(target, re.module)) {
          const hop = this.fileTop(q, re.name);
          if (hop) return hop;
        }
      }
      if (target.spec.submoduleSpec) {
        const sub = this.importFiles(fi, target.spec.submoduleSpec(spec, name))[0];
        if (sub) return sub;
      }
    }
    return undefined;
  }

  /** A member of a file's module table (`moduleTable` languages: Lua's returned `M`, an Elixir file's module). */
  private tableMember(file: string, name: string): string | undefined {
    const target = this.files.get(file);
    const table = target?.spec.moduleTable && target.ex.packageName ? this.fileTop(file, target.ex.packageName) : undefined;
    return table ? this.memberOf(table, name) : undefined;
  }

  /** A file-level name of a file imported whole, in a language whose imports make those visible (`globImports`), or a member of its module table. */
  private globImported(fi: FileState, name: string): string | undefined {
    if (!fi.spec.globImports) return undefined;
    for (const g of fi.ex.imports) {
      if (g.names.length || g.qualified) continue;
      for (const p of this.importFiles(fi, g.module)) {
        const hit = this.fileTop(p, name) ?? this.tableMember(p, name);
        if (hit) return hit;
      }
    }
    return undefined;
  }

  /** A name as a file sees it; `declaredOnly`: no guess by the name's uniqueness in the project. */
  private resolveName(fi: FileState, name: string, wantClass = false, declaredOnly = false): string | undefined {
    const local = fi === this.current ? fi.topLevel.get(name) : this.fileTop(fi.ex.path, name);
    if (local) return local;
    if (fi.spec.directoryScope) {
      const pkg = this.dirName(fi.family, fi.dir, name);
      if (pkg) return pkg;
      // Java: a package's other directories (its test tree beside its main tree).
      const other = fi.spec.packageImport && fi.ex.packageName ? this.lookupInModule(fi, fi.ex.packageName, name) : undefined;
      if (other) return other;
    }
    const imp = this.importedOf(fi, name);
    if (imp) {
      const hit = this.lookupInModule(fi, imp.module, imp.name);
      if (hit) return hit;
    }
    const glob = this.globImported(fi, name);
    if (glob) return glob;
    if (TOO_COMMON.has(name) || declaredOnly) return undefined;
    return this.unique(name, fi.family, wantClass, true);
  }
}

/**
 * Nodes and edges of a whole project from its extracts (a resolver used once).
 * `tsPaths`: a TypeScript/JavaScript file's module aliases (`@/lib/x`), from its tsconfig.
 */
export function resolveGraph(extracts: FileExtract[], opts: { tsPaths?: (file: string) => TsPaths | undefined } = {}): { nodes: NodeRecord[]; edges: GraphEdge[] } {
  const r = new GraphResolver(opts);
  const { nodes } = r.update(extracts, []);
  return { nodes, edges: r.edges() };
}

/** What resolution reads of an extract: definitions without code, docstrings or signatures (28 MB at 60K nodes). */
function resolutionExtract(ex: FileExtract): FileExtract {
  return { ...ex, moduleDoc: "", defs: ex.defs.map((d) => ({ ...d, code: "", docstring: "", signature: "" })) };
}

/** A print's 53-bit hash (two FNV-1a passes with different offsets): a missed change would need both to collide. */
function printHash(text: string): number {
  return fnv(FNV_OFFSET, text) * 2 ** 21 + (fnv(0x9747b28c, text) >>> 11);
}

/** An extract without the definitions' code: what resolution keeps and the index stores (code lives in the nodes). */
export function leanExtract(ex: FileExtract): FileExtract {
  return ex.defs.some((d) => d.code) ? { ...ex, defs: ex.defs.map((d) => (d.code ? { ...d, code: "" } : d)) } : ex;
}

/** Lookup keys are kept as 32-bit FNV-1a hashes: a collision only re-resolves a file needlessly. */
const FNV_OFFSET = 0x811c9dc5;

function fnv(h: number, s: string): number {
  for (let j = 0; j < s.length; j++) h = Math.imul(h ^ s.charCodeAt(j), 0x01000193) >>> 0;
  return h;
}

function hashArray(hashes: Set<number>): Uint32Array {
  const out = new Uint32Array(hashes.size);
  let i = 0;
  for (const h of hashes) out[i++] = h;
  return out;
}

function sortedUnique(out: Uint32Array): Uint32Array {
  out.sort();
  let n = 0;
  for (let j = 0; j < out.length; j++) if (j === 0 || out[j] !== out[j - 1]) out[n++] = out[j];
  return out.subarray(0, n);
}

function intersects(a: Uint32Array, b: Uint32Array): boolean {
  const [small, large] = a.length < b.length ? [a, b] : [b, a];
  for (const x of small) {
    let lo = 0;
    let hi = large.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (large[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    if (lo < large.length && large[lo] === x) return true;
  }
  return false;
}

/** An argument inside a receiver chain, which the extractor read through no bindings: unknown when it starts with a name a local may bind. */
function chainArg(text: string): string {
  const a = text.trim();
  return /^(?!this\b|new\b)[a-z_$]/.test(a) ? "" : a;
}

function pad(i: number): string {
  return String(i).padStart(6, "0");
}

function dirOf(file: string): string {
  const d = path.posix.dirname(file);
  return d === "." ? "" : d;
}

function goReceiverVar(d: RawDef): string | undefined {
  return d.signature.match(/^func\s*\(\s*([A-Za-z_]\w*)\s/)?.[1];
}

function moduleName(ex: FileExtract): string {
  if (ex.language === "python" && ex.packageName) return ex.packageName;
  if (ex.language === "go" && ex.packageName) return `${ex.packageName} (${path.posix.dirname(ex.path)})`;
  return ex.path.replace(/\.[^.]+$/, "");
}

export function firstSentence(doc: string): string {
  const para = doc.split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
  const m = para.match(/^(.{10,}?[.!?])(\s|$)/);
  const s = m ? m[1] : para;
  return s.length > 160 ? s.slice(0, 157) + "…" : s;
}

function describe(d: RawDef, ex: FileExtract): string {
  const doc = firstSentence(d.docstring);
  if (doc) return doc;
  const where = d.qualifiedName.includes(".") ? ` of ${d.qualifiedName.slice(0, d.qualifiedName.lastIndexOf("."))}` : "";
  return `${d.kind} ${d.name}${where} in ${ex.path}`;
}

export type { NodeKind };
