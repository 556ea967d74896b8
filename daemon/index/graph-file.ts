import fs from "node:fs";
import path from "node:path";
import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { stateDirs, writeFileAtomic } from "../../shared/paths.js";
import { ensureOwnDir } from "../../shared/own-files.js";
import { openStore } from "../store/open.js";
import type { CatalogNode } from "../store/types.js";
import type { CodeGraph, GraphCommunity, GraphEdge, GraphNode } from "./types.js";

export const BUILTIN_GENERATOR = "codemem-builtin";
/** Nodes and edges serialised per chunk: the file is written without one string of it all. */
const CHUNK = 2000;

/** Where one file's nodes, and the edges from them, sit in a graph.json: byte ranges [start, end), separators left out. */
interface FileRanges {
  nodes: [number, number];
  edges?: [number, number];
}

/**
 * The layout of a graph.json this writer made: what a later write may copy. At 300K nodes the
 * whole file took 5 s of a core and about 1 GB to read and serialise; a save changes a file or
 * a few, whose bytes are all a rewrite needs to make (the rest is copied).
 */
export interface GraphFileLayout {
  /** The file as written: one changed since (by anyone) is written whole. */
  ino: number;
  size: number;
  mtimeMs: number;
  /** The built_at its head shows. */
  built_at: string;
  /** The index's built_at its content is of (the head's, unless a build committed while it was written). */
  at: string;
  /** Every indexed file's ranges, in graph order. */
  files: Map<string, FileRanges>;
}

/**
 * A rewrite: the last write's layout, the files whose nodes or outgoing edges builds have changed
 * since, and the index's built_at they bring it to. Any doubt (the file changed, the index is at
 * another build) and the file is written whole.
 */
export interface GraphFilePatch {
  layout: GraphFileLayout;
  dirty: string[];
  at: string;
}

export interface GraphFileWritten {
  /** Undefined when the file cannot be patched later (an edge from no node). */
  layout?: GraphFileLayout;
  /** Files whose bytes were copied from the previous file. */
  copied: number;
}

/**
 * Writes graph.json in the spec's format (extra fields included) from the committed index, so
 * readers never see half a file and the same graph always gives the same bytes (what
 * JSON.stringify gives for it): nodes by file, each file's module first, then by line; edges by
 * their source's file, then by source, target and type. With a `patch` only the changed files are
 * read and serialised, the others' bytes copied from the file the patch's layout describes.
 */
export async function writeGraphFile(cfg: ResolvedConfig, meta: { built_at: string; index_version: string }, patch?: GraphFilePatch, file = stateDirs(cfg.root).graphFile): Promise<GraphFileWritten> {
  const store = await openStore(cfg, { mode: "read" });
  const old = patch && store.edgesFrom ? openUnchanged(file, patch.layout) : undefined;
  try {
    const read = async () => {
      const at = (await store.meta()).built_at ?? "";
      // Only the changed files' nodes and edges, when the file to copy the rest from shows the index the patch starts from.
      if (old && at === patch!.at) {
        const nodes = await store.catalog(patch!.dirty);
        return { at, nodes, edges: await store.edgesFrom!(nodes.map((n) => n.id)), communities: await store.communities(), whole: false };
      }
      return { at, nodes: await store.catalog(), edges: await store.edges(), communities: await store.communities(), whole: true };
    };
    const got = store.snapshot ? await store.snapshot(read) : await read();
    const { byFile, orphans } = groupByFile(got.nodes, got.edges);
    const copyFrom = got.whole ? undefined : old;
    const dirty = new Set(patch?.dirty);
    const kept = new Set(copyFrom ? [...copyFrom.layout.files.keys()].filter((f) => !dirty.has(f)) : []);
    const files = [...new Set([...kept, ...byFile.keys()])].sort(cmp);
    const ranges = new Map<string, FileRanges>(files.map((f) => [f, { nodes: [0, 0] }]));
    let pos = 0;
    const emit = (b: Uint8Array) => ((pos += b.length), b);
    const text = (t: string) => emit(Buffer.from(t));

    /** One array's items, file by file: a changed file's serialised, a run of kept files' copied as one range. */
    function* section(part: keyof FileRanges, serialise: (f: string) => string[]): Generator<Uint8Array> {
      let first = true;
      function* separator(): Generator<Uint8Array> {
        if (first) first = false;
        else yield text(",");
      }
      let run: { from: number; to: number; files: string[] } | undefined;
      function* flush(): Generator<Uint8Array> {
        if (!run) return;
        yield* separator();
        const base = pos - run.from;
        for (const g of run.files) {
          const r = copyFrom!.layout.files.get(g)![part]!;
          ranges.get(g)![part] = [r[0] + base, r[1] + base];
        }
        for (let at = run.from; at < run.to; at += COPY_CHUNK) yield emit(readRange(copyFrom!.fd, at, Math.min(run.to, at + COPY_CHUNK)));
        run = undefined;
      }
      for (const f of files) {
        if (kept.has(f)) {
          const r = copyFrom!.layout.files.get(f)![part];
          if (!r) continue;
          // Kept files whose ranges lie one separator apart in the old file are copied as one.
          if (run && r[0] === run.to + 1) {
            run.to = r[1];
            run.files.push(f);
            continue;
          }
          yield* flush();
          run = { from: r[0], to: r[1], files: [f] };
          continue;
        }
        yield* flush();
        const items = serialise(f);
        if (!items.length) continue;
        yield* separator();
        const start = pos;
        for (let k = 0; k < items.length; k += CHUNK) yield text((k > 0 ? "," : "") + items.slice(k, k + CHUNK).join(","));
        ranges.get(f)![part] = [start, pos];
      }
      yield* flush();
      // Edges from no node (none in an index this builder made) go last, and the file is never patched.
      if (part === "edges" && orphans.length) {
        yield* separator();
        yield text(orphans.map(edgeJson).join(","));
      }
    }

    function* chunks(): Generator<Uint8Array> {
      const head = JSON.stringify({ generator: BUILTIN_GENERATOR, ...meta });
      yield text(`${head.slice(0, -1)},"nodes":[`);
      yield* section("nodes", (f) => byFile.get(f)?.nodes.map((n) => JSON.stringify(graphNode(n))) ?? []);
      yield text('],"edges":[');
      yield* section("edges", (f) => byFile.get(f)?.edges.map(edgeJson) ?? []);
      yield text(`],"communities":${JSON.stringify(got.communities)}}`);
    }
    writeFileAtomic(file, chunks());
    const st = fs.statSync(file);
    const layout = orphans.length ? undefined : { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, built_at: meta.built_at, at: got.at, files: ranges };
    if (file === stateDirs(cfg.root).graphFile) saveLayout(cfg.root, layout);
    return { layout, copied: kept.size };
  } finally {
    if (old) fs.closeSync(old.fd);
    await store.close();
  }
}

/** Nodes by file in graph order, each file with the edges from its nodes (by source, target, type); edges from no node apart. */
function groupByFile(nodes: CatalogNode[], edges: GraphEdge[]): { byFile: Map<string, { nodes: CatalogNode[]; edges: GraphEdge[] }>; orphans: GraphEdge[] } {
  const byFile = new Map<string, { nodes: CatalogNode[]; edges: GraphEdge[] }>();
  const fileOf = new Map<string, string>();
  for (const n of [...nodes].sort(graphOrder)) {
    let f = byFile.get(n.file_path);
    if (!f) byFile.set(n.file_path, (f = { nodes: [], edges: [] }));
    f.nodes.push(n);
    fileOf.set(n.id, n.file_path);
  }
  const orphans: GraphEdge[] = [];
  for (const e of edges) {
    const f = fileOf.get(e.source);
    (f === undefined ? orphans : byFile.get(f)!.edges).push(e);
  }
  for (const f of byFile.values()) f.edges.sort(edgeOrder);
  return { byFile, orphans: orphans.sort(edgeOrder) };
}

const edgeJson = (e: GraphEdge) => JSON.stringify(e.dispatch === undefined ? { source: e.source, target: e.target, type: e.type } : { source: e.source, target: e.target, type: e.type, dispatch: e.dispatch });

/**
 * What the next graph.json write of one builder may copy: the layout of its last write, and the
 * files builds changed since. A build it did not see (another process's, one that failed after its
 * commit) shows as a build starting from another built_at than the one it knows: everything is then
 * written again.
 */
export class GraphFileState {
  private layout?: GraphFileLayout;
  private dirty = new Set<string>();
  /** The index's built_at that the layout and the dirty files bring the file to. */
  private at?: string;
  /** Moves on every reset: a write started before one leaves no layout. */
  private epoch = 0;
  private writing = false;

  /**
   * A build took the index from built_at `from` to `to`, changing these files' nodes or edges (or
   * all of them). A builder that has written nothing yet (a daemon just started) takes up the saved
   * layout of the last write, if that file showed the index this build started from.
   */
  changed(root: string, from: string | undefined, to: string, files: Iterable<string> | "all"): void {
    if (files !== "all" && !this.layout && !this.writing) {
      const saved = loadLayout(root);
      if (saved && saved.at === from && saved.built_at === from) {
        this.layout = saved;
        this.dirty = new Set();
        this.at = from;
      }
    }
    if (files === "all" || from !== this.at || (!this.layout && !this.writing)) this.reset();
    else for (const f of files) this.dirty.add(f);
    this.at = to;
  }

  reset(): void {
    this.layout = undefined;
    this.dirty = new Set();
    this.epoch++;
  }

  /** Writes graph.json with `writer`, from the last layout where it can. */
  async write(cfg: ResolvedConfig, meta: { built_at: string; index_version: string }, writer: typeof writeGraphFile = writeGraphFile): Promise<GraphFileWritten> {
    const patch = this.layout && this.at ? { layout: this.layout, dirty: [...this.dirty], at: this.at } : undefined;
    const epoch = this.epoch;
    // Builds that commit meanwhile mark what the file being written may lack, for the next write.
    this.layout = undefined;
    this.dirty = new Set();
    this.writing = true;
    const t0 = performance.now();
    try {
      const written = await writer(cfg, meta, patch);
      if (epoch === this.epoch) this.layout = written.layout;
      log.debug("graph.json written", { ms: Math.round(performance.now() - t0), files: written.layout?.files.size, copied: written.copied, changed: patch?.dirty.length ?? "all" });
      return written;
    } finally {
      this.writing = false;
    }
  }
}

/** Where the layout of graph.json's last write is kept (the daemon's own state, not an output). */
const layoutFile = (root: string) => path.join(stateDirs(root).stateDir, "graph-layout.json");

/** Keeps the layout beside the daemon's state, or removes a stale one when the file has none. */
function saveLayout(root: string, layout: GraphFileLayout | undefined): void {
  try {
    if (!layout) return fs.rmSync(layoutFile(root), { force: true });
    const files = [...layout.files].map(([f, r]) => [f, ...r.nodes, ...(r.edges ?? [])]);
    ensureOwnDir(stateDirs(root).stateDir);
    writeFileAtomic(layoutFile(root), JSON.stringify({ ...layout, files }));
  } catch (err) {
    // Only a later daemon's first write is whole without it.
    log.debug("graph.json's layout not kept", { error: (err as Error).message });
  }
}

/** The saved layout, if it is whole and consistent (ranges in order, within the file); anything else is no layout. */
function loadLayout(root: string): GraphFileLayout | undefined {
  try {
    const raw = JSON.parse(fs.readFileSync(layoutFile(root), "utf8"));
    const nums = (xs: unknown[]) => xs.every((x) => Number.isSafeInteger(x) && (x as number) >= 0);
    if (!nums([raw.ino, raw.size]) || typeof raw.mtimeMs !== "number" || typeof raw.built_at !== "string" || typeof raw.at !== "string" || !Array.isArray(raw.files)) return undefined;
    const files = new Map<string, FileRanges>();
    for (const e of raw.files) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || (e.length !== 3 && e.length !== 5) || !nums(e.slice(1))) return undefined;
      const r: number[] = e.slice(1);
      if (r.some((x, i) => (i % 2 === 1 && x <= r[i - 1]) || x > raw.size)) return undefined;
      files.set(e[0], { nodes: [r[0], r[1]], ...(r.length === 4 ? { edges: [r[2], r[3]] as [number, number] } : {}) });
    }
    return { ino: raw.ino, size: raw.size, mtimeMs: raw.mtimeMs, built_at: raw.built_at, at: raw.at, files };
  } catch {
    return undefined;
  }
}

/** Bytes copied from the previous graph.json per read. */
const COPY_CHUNK = 4 << 20;

/** The previous file, open, if it is still the one `layout` describes. */
function openUnchanged(file: string, layout: GraphFileLayout): { fd: number; layout: GraphFileLayout } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    const st = fs.fstatSync(fd);
    if (st.ino === layout.ino && st.size === layout.size && st.mtimeMs === layout.mtimeMs && builtAtOf(fd) === layout.built_at) return { fd, layout };
  } catch {
    // missing or unreadable: written whole
  }
  if (fd !== undefined) fs.closeSync(fd);
  return undefined;
}

/** Bytes [from, to) of an open file. */
function readRange(fd: number, from: number, to: number): Buffer {
  const buf = Buffer.allocUnsafe(to - from);
  for (let off = 0; off < buf.length; ) {
    const n = fs.readSync(fd, buf, off, buf.length - off, from + off);
    if (n === 0) throw new Error("graph.json ended before its recorded layout");
    off += n;
  }
  return buf;
}

function edgeOrder(a: GraphEdge, b: GraphEdge): number {
  return cmp(a.source, b.source) || cmp(a.target, b.target) || cmp(a.type, b.type);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function graphOrder(a: CatalogNode, b: CatalogNode): number {
  if (a.file_path !== b.file_path) return a.file_path < b.file_path ? -1 : 1;
  const am = a.type === "module" ? 0 : 1;
  const bm = b.type === "module" ? 0 : 1;
  return am - bm || a.line_start - b.line_start || b.line_end - a.line_end || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A node as graph.json holds it: the catalog's fields, `parent` only when it has one. */
function graphNode(n: CatalogNode): GraphNode {
  const { id, name, type, file_path, description, community, qualified_name, signature, docstring, line_start, line_end, language, parent } = n;
  return { id, name, type: type as GraphNode["type"], file_path, description, community, qualified_name, signature, docstring, line_start, line_end, language, ...(parent ? { parent } : {}) };
}

/**
 * The `built_at` a graph.json of ours records (in its first bytes, before the nodes), or undefined
 * when the file is missing or not ours: a build that changed nothing compares it with the index's.
 */
export function graphFileBuiltAt(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    return builtAtOf(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The `built_at` in the head of an open graph.json of ours. */
function builtAtOf(fd: number): string | undefined {
  const head = Buffer.alloc(1024);
  const n = fs.readSync(fd, head, 0, head.length, 0);
  const prefix = `{"generator":${JSON.stringify(BUILTIN_GENERATOR)},"built_at":"`;
  const text = head.subarray(0, n).toString("utf8");
  const end = text.indexOf('"', prefix.length);
  return text.startsWith(prefix) && end > prefix.length ? text.slice(prefix.length, end) : undefined;
}

/** Reads and validates a graph.json (ours or the external generator's); errors name the file and the fault. */
export function readGraphFile(file: string): CodeGraph & { generator?: string } {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    throw new CodememError("GRAPH_MISSING", `The code graph ${file} does not exist; run \`codegraph update <project>\` first, or set [build] graph_source = "builtin" in codemem.toml.`, { file });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CodememError("GRAPH_MALFORMED", `The code graph ${file} is not valid JSON (${(err as Error).message}); regenerate it with \`codegraph update <project>\`.`, { file });
  }
  const bad = (what: string): never => {
    throw new CodememError("GRAPH_MALFORMED", `The code graph ${file} is malformed: ${what}; regenerate it with \`codegraph update <project>\`.`, { file });
  };
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) bad("the top level must be an object with nodes, edges and communities");
  const d = doc as Record<string, unknown>;
  if (!Array.isArray(d.nodes)) bad('"nodes" must be an array');
  if (d.edges !== undefined && !Array.isArray(d.edges)) bad('"edges" must be an array');
  if (d.communities !== undefined && !Array.isArray(d.communities)) bad('"communities" must be an array');
  const nodes: GraphNode[] = [];
  const ids = new Set<string>();
  (d.nodes as unknown[]).forEach((n, i) => {
    const o = n as Record<string, unknown>;
    if (typeof o !== "object" || o === null) bad(`nodes[${i}] is not an object`);
    if (typeof o.id !== "string" || !o.id) bad(`nodes[${i}].id must be a non-empty string`);
    if (typeof o.name !== "string") bad(`nodes[${i}].name must be a string`);
    if (typeof o.file_path !== "string") bad(`nodes[${i}].file_path must be a string`);
    if (o.community !== undefined && (typeof o.community !== "number" || !Number.isInteger(o.community))) bad(`nodes[${i}].community must be an integer`);
    if (ids.has(o.id as string)) bad(`node id "${o.id}" appears twice`);
    ids.add(o.id as string);
    nodes.push({
      ...(o as object),
      id: o.id as string,
      name: o.name as string,
      type: (typeof o.type === "string" ? o.type : "function") as GraphNode["type"],
      file_path: (o.file_path as string).replace(/\\/g, "/").replace(/^\.\//, ""),
      description: typeof o.description === "string" ? o.description : "",
      community: (o.community as number | undefined) ?? -1,
    } as GraphNode);
  });
  const edges: GraphEdge[] = [];
  ((d.edges as unknown[]) ?? []).forEach((e, i) => {
    const o = e as Record<string, unknown>;
    if (typeof o !== "object" || o === null || typeof o.source !== "string" || typeof o.target !== "string") bad(`edges[${i}] needs string source and target`);
    if (!ids.has(o.source as string) || !ids.has(o.target as string)) return; // dangling edges are dropped, not fatal
    const edge: GraphEdge = { source: o.source as string, target: o.target as string, type: typeof o.type === "string" ? o.type : "calls" };
    // A confidence in (0, 1] marks a dispatch candidate; anything else is no mark.
    if (typeof o.dispatch === "number" && o.dispatch > 0 && o.dispatch <= 1) edge.dispatch = o.dispatch;
    edges.push(edge);
  });
  const communities: GraphCommunity[] = [];
  ((d.communities as unknown[]) ?? []).forEach((c, i) => {
    const o = c as Record<string, unknown>;
    if (typeof o !== "object" || o === null || typeof o.id !== "number") bad(`communities[${i}].id must be an integer`);
    communities.push({ id: o.id as number, name: typeof o.name === "string" ? o.name : `community ${o.id}`, description: typeof o.description === "string" ? o.description : "" });
  });
  return { nodes, edges, communities, generator: typeof d.generator === "string" ? d.generator : undefined };
}
