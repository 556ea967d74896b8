import path from "node:path";
import { languageById } from "./languages/registry.js";
import { aliasBases, type TsPaths } from "./ts-paths.js";
import type { FileExtract, GraphEdge, GraphNode, NodeKind, RawDef } from "./types.js";

const CLASS_LIKE = new Set<NodeKind>(["class", "interface", "struct", "enum", "type"]);
const TS_EXTS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
/** Names too common to resolve by global uniqueness alone. */
const TOO_COMMON = new Set(["get", "set", "run", "init", "main", "new", "close", "open", "read", "write", "start", "stop", "call", "apply", "update", "__init__", "constructor", "toString", "String", "Error", "len", "str", "map", "filter", "push", "add", "next"]);

export interface NodeRecord extends GraphNode {
  code: string;
  bases: string[];
}

export interface ResolvedGraph {
  nodes: NodeRecord[];
  edges: GraphEdge[];
  /** Each edge's key from the keyer used (`opts.keyOf`, else a fresh one), in the order of `edges`. */
  keys: (number | string)[];
}

export type EdgeKeyer = (source: string, target: string, type: string) => number | string;

interface FileIndex {
  ex: FileExtract;
  moduleId: string;
  ids: string[]; // per def
  topLevel: Map<string, string>; // name → id, file-level defs
  imported: Map<string, { module: string; name: string }>; // local alias → (module spec, exported name)
  moduleAliases: Map<string, string>; // local alias → module spec
  dir: string;
}

/**
 * Keys that tell edges apart: node ids and edge types are numbered on first sight and packed into
 * one number, so deduplicating or comparing the edges of a large graph allocates no strings (a
 * string key only past 2^24 node ids or 32 edge types). One edge always gets the same key.
 */
export function edgeKeyer(): EdgeKeyer {
  const ids = new Map<string, number>();
  const types = new Map<string, number>();
  const num = (m: Map<string, number>, k: string) => m.get(k) ?? m.set(k, m.size).get(k)!;
  return (source, target, type) => {
    const s = num(ids, source);
    const t = num(ids, target);
    const y = num(types, type);
    return s < 2 ** 24 && t < 2 ** 24 && y < 32 ? (s * 2 ** 24 + t) * 32 + y : `${s},${t},${y}`;
  };
}

/**
 * Turns per-file extracts into graph nodes and resolved edges (calls, imports, contains, inherits).
 * `tsPaths`: a TypeScript/JavaScript file's module aliases (`@/lib/x`), from its tsconfig.
 */
export function resolveGraph(extracts: FileExtract[], opts: { tsPaths?: (file: string) => TsPaths | undefined; keyOf?: EdgeKeyer } = {}): ResolvedGraph {
  const files = [...extracts].sort((a, b) => (a.path < b.path ? -1 : 1));
  const nodes: NodeRecord[] = [];
  const edges: GraphEdge[] = [];
  const keyOf = opts.keyOf ?? edgeKeyer();
  const edgeKeys = new Set<number | string>();
  const keys: (number | string)[] = [];
  const addEdge = (source: string, target: string, type: GraphEdge["type"]) => {
    if (source === target) return;
    const k = keyOf(source, target, type);
    if (edgeKeys.has(k)) return;
    edgeKeys.add(k);
    keys.push(k);
    edges.push({ source, target, type });
  };

  const byPath = new Map<string, FileIndex>();
  const byName = new Map<string, string[]>();
  const members = new Map<string, Map<string, string>>(); // class-like id → member name → id
  const nodeById = new Map<string, NodeRecord>();
  const dirNames = new Map<string, Map<string, string>>(); // go package dir → top-level names
  const pyModules = new Map<string, string>(); // dotted module (and suffixes) → path
  const dirs = new Set<string>();

  for (const ex of files) {
    const moduleId = ex.path;
    const dir = path.posix.dirname(ex.path);
    dirs.add(dir);
    const mod: NodeRecord = {
      id: moduleId,
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
    };
    nodes.push(mod);
    nodeById.set(moduleId, mod);
    const fi: FileIndex = { ex, moduleId, ids: [], topLevel: new Map(), imported: new Map(), moduleAliases: new Map(), dir };
    const seen = new Map<string, number>();
    ex.defs.forEach((d, i) => {
      const n = (seen.get(d.qualifiedName) ?? 0) + 1;
      seen.set(d.qualifiedName, n);
      const id = `${ex.path}::${d.qualifiedName}${n > 1 ? `#${n}` : ""}`;
      fi.ids.push(id);
      const parentId = d.parent >= 0 ? fi.ids[d.parent] : moduleId;
      const rec: NodeRecord = {
        id,
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
        parent: parentId,
        code: d.code,
        bases: d.bases,
      };
      nodes.push(rec);
      nodeById.set(id, rec);
      addEdge(parentId, id, "contains");
      if (d.parent >= 0) memberMap(members, parentId).set(d.name, id);
      if (d.parent < 0 && !d.receiverType && n === 1) fi.topLevel.set(d.name, id);
      const list = byName.get(d.name);
      if (list) list.push(id);
      else byName.set(d.name, [id]);
    });
    for (const imp of ex.imports) {
      for (const { name, alias } of imp.names) fi.imported.set(alias, { module: imp.module, name });
      if (imp.names.length === 0) {
        const alias = imp.alias ?? defaultAlias(ex, imp.module);
        if (alias) fi.moduleAliases.set(alias, imp.module);
      }
    }
    byPath.set(ex.path, fi);
    if (ex.language === "python") {
      const parts = (ex.packageName ?? "").split(".");
      for (let i = 0; i < parts.length; i++) {
        const key = parts.slice(i).join(".");
        if (!pyModules.has(key)) pyModules.set(key, ex.path);
      }
    }
    if (ex.language === "go" || ex.language === "java") {
      const names = dirNames.get(dir) ?? new Map<string, string>();
      for (const [k, v] of fi.topLevel) if (!names.has(k)) names.set(k, v);
      dirNames.set(dir, names);
    }
  }

  // The same names are looked up from every file: each answer is worked out once.
  const uniqueAnswers = new Map<string, string | null>();
  const unique = (name: string, language: string, classOnly: boolean, excludeMethods: boolean): string | undefined => {
    const ids = byName.get(name);
    if (!ids) return undefined;
    const key = `${family(language)}\0${classOnly ? 1 : 0}${excludeMethods ? 1 : 0}\0${name}`;
    let hit = uniqueAnswers.get(key);
    if (hit === undefined) uniqueAnswers.set(key, (hit = uniqueOf(ids, nodeById, classOnly ? CLASS_LIKE : undefined, excludeMethods, language) ?? null));
    return hit ?? undefined;
  };

  // Methods declared outside their type (Go receivers, Rust impls) join the type in their package.
  for (const fi of byPath.values()) {
    fi.ex.defs.forEach((d, i) => {
      if (!d.receiverType || d.parent >= 0) return;
      const typeId = dirNames.get(fi.dir)?.get(d.receiverType) ?? fi.topLevel.get(d.receiverType) ?? unique(d.receiverType, fi.ex.language, true, false);
      if (!typeId) return;
      const rec = nodeById.get(fi.ids[i])!;
      rec.parent = typeId;
      memberMap(members, typeId).set(d.name, fi.ids[i]);
      addEdge(typeId, fi.ids[i], "contains");
    });
  }

  const packageFiles = new Map<string, string[]>();
  const goFilesByDir = new Map<string, string[]>();
  for (const fi of byPath.values()) if (fi.ex.language === "go") memberList(goFilesByDir, fi.dir).push(fi.ex.path);
  // Java: a package `a.b.c` is every file of a directory ending in a/b/c; a class `a.b.C` is a file
  // ending in a/b/C.java. Both indexed by whole trailing path segments, built on first use.
  let javaSuffixes: Map<string, Set<string>> | undefined;
  const javaBySuffix = () => {
    if (javaSuffixes) return javaSuffixes;
    javaSuffixes = new Map();
    for (const fi of byPath.values()) {
      if (fi.ex.language !== "java") continue;
      for (const of of [fi.dir, fi.ex.path.replace(/\.java$/, "")]) {
        const parts = of.split("/");
        for (let i = 0; i < parts.length; i++) {
          const key = parts.slice(i).join("/");
          let set = javaSuffixes.get(key);
          if (!set) javaSuffixes.set(key, (set = new Set()));
          set.add(fi.ex.path);
        }
      }
    }
    return javaSuffixes;
  };
  const resolveModule = (fi: FileIndex, spec: string): string[] => {
    const lang = fi.ex.language;
    if (lang === "python") {
      let dotted = spec;
      if (spec.startsWith(".")) {
        const level = spec.match(/^\.+/)![0].length;
        const pkg = (fi.ex.packageName ?? "").split(".");
        const isInit = fi.ex.path.endsWith("__init__.py");
        const base = pkg.slice(0, pkg.length - (isInit ? level - 1 : level));
        dotted = [...base, spec.slice(level)].filter(Boolean).join(".");
      }
      const p = pyModules.get(dotted);
      return p ? [p] : [];
    }
    if (lang === "typescript" || lang === "tsx" || lang === "javascript") {
      const bases = spec.startsWith(".") ? [path.posix.normalize(path.posix.join(fi.dir, spec))] : aliasBases(spec, opts.tsPaths?.(fi.ex.path));
      for (const base of bases) {
        const stem = base.replace(/\.(m|c)?js$|\.jsx$/, "");
        for (const cand of [base, ...TS_EXTS.map((e) => stem + e), ...TS_EXTS.map((e) => `${base}/index${e}`)]) {
          if (byPath.has(cand)) return [cand];
        }
      }
      return [];
    }
    if (lang === "rust") {
      for (const base of rustModuleBases(fi.ex.path, spec, (p) => byPath.has(p))) {
        for (const cand of [`${base}.rs`, `${base}/mod.rs`]) if (byPath.has(cand)) return [cand];
      }
      return [];
    }
    if (lang === "go" || lang === "java") {
      // These depend on the spec alone: resolved once per spec, not once per import.
      const key = `${lang}:${spec}`;
      let hit = packageFiles.get(key);
      if (!hit) {
        if (lang === "go") {
          const dir = goDir(spec, dirs);
          hit = dir ? (goFilesByDir.get(dir) ?? []) : [];
        } else {
          const rel = spec.replace(/\./g, "/");
          hit = [...(javaBySuffix().get(rel) ?? [])];
        }
        packageFiles.set(key, hit);
      }
      return hit;
    }
    return [];
  };

  /** Finds `name` as a file-level definition of the module, following one re-export hop. */
  const lookupInModule = (fi: FileIndex, spec: string, name: string): string | undefined => {
    for (const p of resolveModule(fi, spec)) {
      const target = byPath.get(p)!;
      if (target.ex.language === "go" || target.ex.language === "java") {
        const hit = dirNames.get(target.dir)?.get(name);
        if (hit) return hit;
        continue;
      }
      const direct = target.topLevel.get(name);
      if (direct) return direct;
      const re = target.imported.get(name);
      if (re) {
        const hop = resolveModule(target, re.module)
          .map((q) => byPath.get(q)!.topLevel.get(re.name))
          .find(Boolean);
        if (hop) return hop;
      }
      if (target.ex.language === "python") {
        const sub = pyModules.get(`${target.ex.packageName}.${name}`);
        if (sub) return sub;
      }
    }
    return undefined;
  };

  const resolveName = (fi: FileIndex, name: string, wantClass = false): string | undefined => {
    const local = fi.topLevel.get(name);
    if (local) return local;
    const pkg = dirNames.get(fi.dir)?.get(name);
    if (pkg && (fi.ex.language === "go" || fi.ex.language === "java")) return pkg;
    const imp = fi.imported.get(name);
    if (imp) {
      const hit = lookupInModule(fi, imp.module, imp.name);
      if (hit) return hit;
    }
    if (TOO_COMMON.has(name)) return undefined;
    return unique(name, fi.ex.language, wantClass, true);
  };

  const enclosingType = (id: string | undefined): string | undefined => {
    let cur = id ? nodeById.get(id) : undefined;
    while (cur) {
      if (CLASS_LIKE.has(cur.type)) return cur.id;
      cur = cur.parent ? nodeById.get(cur.parent) : undefined;
    }
    return undefined;
  };

  // Inheritance first: method lookup on self walks the bases.
  const baseIds = new Map<string, string[]>();
  for (const fi of byPath.values()) {
    fi.ex.defs.forEach((d, i) => {
      for (const b of d.bases) {
        const target = resolveName(fi, b, true);
        if (target && target !== fi.ids[i]) {
          addEdge(fi.ids[i], target, "inherits");
          const l = baseIds.get(fi.ids[i]) ?? [];
          l.push(target);
          baseIds.set(fi.ids[i], l);
        }
      }
    });
  }
  const memberOf = (typeId: string, name: string, depth = 0): string | undefined => {
    const hit = members.get(typeId)?.get(name);
    if (hit || depth > 3) return hit;
    for (const b of baseIds.get(typeId) ?? []) {
      const h = memberOf(b, name, depth + 1);
      if (h) return h;
    }
    return undefined;
  };

  for (const fi of byPath.values()) {
    for (const imp of fi.ex.imports) for (const p of resolveModule(fi, imp.module)) addEdge(fi.moduleId, p, "imports");
    const { selfNames, implicitSelf } = languageById(fi.ex.language);
    for (const c of fi.ex.calls) {
      const callerId = c.caller >= 0 ? fi.ids[c.caller] : fi.moduleId;
      const caller = fi.ex.defs[c.caller];
      let target: string | undefined;
      const recv = c.receiver;
      if (!recv) {
        const t = implicitSelf ? enclosingType(callerId) : undefined;
        target = (t ? memberOf(t, c.name) : undefined) ?? resolveName(fi, c.name);
      } else if (selfNames.includes(recv) || (caller?.receiverType && goReceiverVar(caller) === recv)) {
        const t = enclosingType(callerId);
        target = t ? memberOf(t, c.name) : undefined;
      } else if (fi.moduleAliases.has(recv)) {
        target = lookupInModule(fi, fi.moduleAliases.get(recv)!, c.name);
      } else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(recv)) {
        const cls = resolveName(fi, recv, true);
        const clsNode = cls ? nodeById.get(cls) : undefined;
        if (clsNode && CLASS_LIKE.has(clsNode.type)) target = memberOf(cls!, c.name);
        else if (clsNode?.type === "module") target = byPath.get(clsNode.id)?.topLevel.get(c.name);
        else if (!TOO_COMMON.has(c.name) && c.name.length > 3) target = unique(c.name, fi.ex.language, false, false);
      } else if (!TOO_COMMON.has(c.name) && c.name.length > 3) {
        target = unique(c.name, fi.ex.language, false, false);
      }
      if (target) addEdge(callerId, target, "calls");
    }
  }
  return { nodes, edges, keys };
}

function memberList(m: Map<string, string[]>, key: string): string[] {
  let x = m.get(key);
  if (!x) m.set(key, (x = []));
  return x;
}

function memberMap(m: Map<string, Map<string, string>>, id: string): Map<string, string> {
  let x = m.get(id);
  if (!x) m.set(id, (x = new Map()));
  return x;
}

/** Languages that call each other directly. */
function family(language: string): string {
  return language === "typescript" || language === "tsx" || language === "javascript" ? "js" : language;
}

/** The one definition among `ids` in the caller's language family, if there is exactly one. */
function uniqueOf(ids: string[], byId: Map<string, NodeRecord>, kinds: Set<NodeKind> | undefined, excludeMethods: boolean, language: string): string | undefined {
  const fam = family(language);
  let found: string | undefined;
  for (const id of ids) {
    const n = byId.get(id)!;
    if (family(n.language) !== fam || (kinds && !kinds.has(n.type)) || (excludeMethods && n.type === "method")) continue;
    if (found) return undefined;
    found = id;
  }
  return found;
}

function goReceiverVar(d: RawDef): string | undefined {
  return d.signature.match(/^func\s*\(\s*([A-Za-z_]\w*)\s/)?.[1];
}

function goDir(importPath: string, dirs: Set<string>): string | undefined {
  if (dirs.has(importPath)) return importPath;
  let best: string | undefined;
  for (const d of dirs) {
    // The project may be a module (dirs are suffixes of import paths) or a subtree of one.
    if (importPath.endsWith(`/${d}`) && d.includes("/")) {
      if (!best || d.length > best.length) best = d;
    } else if (d.endsWith(`/${importPath}`) && importPath.includes("/")) {
      if (!best || d.length > best.length) best = d;
    }
  }
  if (best) return best;
  // A subtree copy such as src/net: "net/http" → "http" when the root is "net".
  const parts = importPath.split("/");
  for (let i = 1; i < parts.length; i++) {
    const tail = parts.slice(i).join("/");
    if (dirs.has(tail)) return tail;
  }
  return undefined;
}

/**
 * Where a Rust module path may live, as project-relative paths without `.rs`: `crate::` from the
 * crate root (the nearest directory above holding lib.rs or main.rs), `self::` and `super::` from the
 * file's own module, and a bare path from the file's module first, then the crate root (2018
 * edition). External crates (`std::`, dependencies) match no file.
 */
export function rustModuleBases(file: string, spec: string, exists: (path: string) => boolean): string[] {
  const parts = spec.split("::").filter(Boolean);
  const dir = path.posix.dirname(file);
  const stem = path.posix.basename(file, ".rs");
  // The directory a module's children live in: its own for lib.rs, main.rs and mod.rs, else dir/stem.
  const own = ["lib", "main", "mod"].includes(stem) ? dir : path.posix.join(dir, stem);
  let root: string | undefined;
  for (let d = dir; ; d = path.posix.dirname(d)) {
    if (exists(path.posix.join(d, "lib.rs")) || exists(path.posix.join(d, "main.rs"))) {
      root = d;
      break;
    }
    if (d === "." || d === "/" || d === "") break;
  }
  const join = (base: string, rest: string[]) => path.posix.normalize(path.posix.join(base, ...rest));
  if (parts[0] === "crate") return root !== undefined && parts.length > 1 ? [join(root, parts.slice(1))] : [];
  if (parts[0] === "self") return parts.length > 1 ? [join(own, parts.slice(1))] : [];
  if (parts[0] === "super") {
    let base = own;
    let i = 0;
    for (; parts[i] === "super"; i++) base = path.posix.dirname(base);
    return i < parts.length ? [join(base, parts.slice(i))] : [];
  }
  return [join(own, parts), ...(root !== undefined && root !== own ? [join(root, parts)] : [])];
}

function defaultAlias(ex: FileExtract, spec: string): string | undefined {
  if (ex.language === "go") return spec.split("/").pop()?.replace(/^go-|\.v\d+$/, "");
  if (ex.language === "python") return spec.split(".")[0];
  return undefined;
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
