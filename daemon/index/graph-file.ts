import fs from "node:fs";
import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";
import { stateDirs, writeFileAtomic } from "../../shared/paths.js";
import { openStore } from "../store/open.js";
import type { CatalogNode } from "../store/types.js";
import type { CodeGraph, GraphCommunity, GraphEdge, GraphNode } from "./types.js";

export const BUILTIN_GENERATOR = "codemem-builtin";
/** Nodes and edges serialised per chunk: the file is written without one string of it all. */
const CHUNK = 2000;

/**
 * Writes graph.json in the spec's format (extra fields included) from the committed index, so
 * readers never see half a file and the same index always gives the same bytes (what
 * JSON.stringify gives for the graph): nodes by file, each file's module first, then by line.
 */
export async function writeGraphFile(cfg: ResolvedConfig, meta: { built_at: string; index_version: string }): Promise<void> {
  const store = await openStore(cfg, { mode: "read" });
  try {
    const read = async () => ({ nodes: (await store.catalog()).sort(graphOrder), edges: await store.edges(), communities: await store.communities() });
    const { nodes, edges, communities } = store.snapshot ? await store.snapshot(read) : await read();
    const head = JSON.stringify({ generator: BUILTIN_GENERATOR, ...meta });
    const chunks: Uint8Array[] = [Buffer.from(`${head.slice(0, -1)},"nodes":[`)];
    const list = <T>(items: T[], encode: (x: T) => unknown) => {
      for (let i = 0; i < items.length; i += CHUNK) chunks.push(Buffer.from((i > 0 ? "," : "") + items.slice(i, i + CHUNK).map((x) => JSON.stringify(encode(x))).join(",")));
    };
    list(nodes, graphNode);
    chunks.push(Buffer.from('],"edges":['));
    list(edges, (e) => ({ source: e.source, target: e.target, type: e.type }));
    chunks.push(Buffer.from(`],"communities":${JSON.stringify(communities)}}`));
    writeFileAtomic(stateDirs(cfg.root).graphFile, chunks);
  } finally {
    await store.close();
  }
}

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
    const head = Buffer.alloc(1024);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    const prefix = `{"generator":${JSON.stringify(BUILTIN_GENERATOR)},"built_at":"`;
    const text = head.subarray(0, n).toString("utf8");
    const end = text.indexOf('"', prefix.length);
    return text.startsWith(prefix) && end > prefix.length ? text.slice(prefix.length, end) : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
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
    edges.push({ source: o.source as string, target: o.target as string, type: typeof o.type === "string" ? o.type : "calls" });
  });
  const communities: GraphCommunity[] = [];
  ((d.communities as unknown[]) ?? []).forEach((c, i) => {
    const o = c as Record<string, unknown>;
    if (typeof o !== "object" || o === null || typeof o.id !== "number") bad(`communities[${i}].id must be an integer`);
    communities.push({ id: o.id as number, name: typeof o.name === "string" ? o.name : `community ${o.id}`, description: typeof o.description === "string" ? o.description : "" });
  });
  return { nodes, edges, communities, generator: typeof d.generator === "string" ? d.generator : undefined };
}
