import { createHash } from "node:crypto";
import fs from "node:fs";
import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { sizeStamp, stateDirs } from "../../shared/paths.js";
import { openStore } from "../store/open.js";
import type { BuildDelta, FileRow, IndexStore } from "../store/types.js";
import { detectCommunities, nameCommunities } from "./communities.js";
import { childNamesByParent, embeddingText, lexicalFields, textHash } from "./documents.js";
import type { Embedder } from "./embed/embedder.js";
import { isBuiltinUpgrade } from "./embed/select.js";
import { graphSourceOf, runExternalGenerator } from "./external.js";
import { graphFileBuiltAt, readGraphFile, writeGraphFileParts } from "./graph-file.js";
import { languageForPath } from "./languages/registry.js";
import { ParsePool } from "./parse-pool.js";
import { edgeKeyer, resolveGraph, type EdgeKeyer, type NodeRecord } from "./resolve.js";
import { TsConfigs } from "./ts-paths.js";
import type { FileExtract, GraphEdge } from "./types.js";
import { discover, inspectContent, type Skipped } from "./walk.js";
import { splitWords } from "./text.js";
import { redactSecrets } from "../secrets/scan.js";

export const INDEX_VERSION = "1";

export interface BuildProgress {
  phase: "scan" | "parse" | "resolve" | "embed" | "write";
  done: number;
  total: number;
}

/** What an incremental build needs from the previous one; the daemon keeps it warm between builds. */
export interface BuildCache {
  extracts: Map<string, FileExtract>;
  edges: GraphEdge[];
  communityOf: Map<string, number>;
  /** The keyer of these builds and each edge's key from it, in the order of `edges`: the next diff keys only new edges. */
  keyOf: EdgeKeyer;
  edgeKeys: (number | string)[];
  /** graph.json's nodes serialised per file, reused while the file's extract, communities and parents stay. */
  graphParts: Map<string, { extract: FileExtract; sig: string; json: Buffer }>;
}

export interface BuildOptions {
  force?: boolean;
  /** Write graph.json later (coalesced) instead of before returning: for watch-triggered builds. */
  deferGraphFile?: (write: () => void) => void;
  /** Warm state from the previous build of this index; replaced in place after a successful build. */
  cache?: { value?: BuildCache };
  optimize?: boolean;
  embedder: Embedder;
  pool?: ParsePool;
  onProgress?: (p: BuildProgress) => void;
}

export interface BuildResult {
  /** Files whose nodes were replaced (internal: lets warm readers refresh just those). */
  changed_paths: string[];
  /** True when communities were re-detected (every node may have moved). */
  reclustered: boolean;
  nodes_processed: number;
  nodes_embedded: number;
  communities: number;
  time_elapsed: number;
  node_count: number;
  edge_count: number;
  files_indexed: number;
  files_changed: number;
  files_removed: number;
  files_skipped: number;
  skipped: Skipped[];
  graph_source: "builtin" | "external";
  embedder: string;
  index_version: string;
}

/** The vector width an embedder id records after its last colon (`builtin-code-1a2b3c4d:384`). */
function widthOf(embedderId: string): number {
  return Number(embedderId.slice(embedderId.lastIndexOf(":") + 1));
}

/** Full or incremental build of one project's index. The caller ensures one build at a time. */
export async function buildIndex(cfg: ResolvedConfig, opts: BuildOptions): Promise<BuildResult> {
  const t0 = performance.now();
  const phases: Record<string, number> = {};
  let mark = t0;
  const lap = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - mark);
    mark = now;
  };
  const dirs = stateDirs(cfg.root);
  const embedder = opts.embedder;
  const source = graphSourceOf(cfg);
  /** The result with the fields every build reports, logged with the phase timings. */
  const finish = (r: Omit<BuildResult, "time_elapsed" | "files_skipped" | "skipped" | "graph_source" | "embedder" | "index_version">, skipped: Skipped[]): BuildResult => {
    const result: BuildResult = {
      ...r,
      time_elapsed: Math.round(performance.now() - t0) / 1000,
      files_skipped: skipped.length,
      skipped,
      graph_source: source,
      embedder: embedder.id,
      index_version: INDEX_VERSION,
    };
    log.debug("build finished", { ...result, skipped: skipped.length, phases_ms: phases });
    return result;
  };
  const progress = opts.onProgress ?? (() => {});

  // The previous index stays untouched until the final transaction; any error before that leaves it intact.
  const store: IndexStore = await openStore(cfg, { mode: "build", dim: embedder.dim, force: opts.force, batchSize: cfg.build.batchSize });
  try {
    const stored = await store.meta();
    const builtWith = stored.embedder;
    // A change of graph source (external ↔ built-in) replaces every node: ids are not comparable.
    const sourceChanged = !!stored.graph_source && stored.graph_source !== source;
    // Redaction is sticky: stated by a flag or codemem.toml, else the index's own policy.
    const redact = cfg.build.excludeSecrets ?? stored.exclude_secrets === "true";
    // Turning secret redaction on or off changes every file's indexed text.
    const secretsChanged = (stored.exclude_secrets ?? "false") !== String(redact);
    // An index made by an earlier version of the built-in embedder is re-embedded, not refused:
    // the user chose nothing different, the software changed.
    const builtinUpgrade = !!builtWith && isBuiltinUpgrade(builtWith, embedder.id);
    // One of another width needs new vector tables: the index is replaced as by --force (built beside, swapped at the end).
    if (builtinUpgrade && !opts.force && widthOf(builtWith) !== embedder.dim) {
      await store.close();
      return buildIndex(cfg, { ...opts, force: true });
    }
    // A fresh (or replaced) index has no embedder recorded: everything is built.
    const force = !!opts.force || !builtWith || sourceChanged || secretsChanged || builtinUpgrade;
    if (builtWith && builtWith !== embedder.id && !opts.force && !builtinUpgrade) {
      throw new CodememError("INDEX_EMBEDDER_MISMATCH", `The index was built with embedder ${builtWith}, but ${embedder.id} is configured; rebuild with \`codemem build --force\` or configure ${builtWith}.`);
    }

    progress({ phase: "scan", done: 0, total: 0 });
    const found = discover(cfg);
    const skipped = [...found.skipped];
    const previous = new Map((await store.files()).map((f) => [f.path, f]));
    /** Files to write: with their text when it must be parsed, without when only the mtime moved (same content). */
    const changed: { row: FileRow; source?: string }[] = [];
    /** Files left out for their content (generated, minified, binary, unparsable), by size and mtime: freshness must not call them pending. */
    const contentSkipped: Record<string, string> = {};
    /** Files the parser failed on, by size and mtime: not parsed again until they change. */
    const parseFailed: Record<string, string> = {};
    const failedBefore = fileStamps(stored.parse_failed);
    const current = new Set<string>();
    for (const c of found.files) {
      const prev = previous.get(c.path);
      if (!force && prev && prev.size === c.size && prev.mtime_ms === c.mtimeMs) {
        current.add(c.path);
        continue;
      }
      const stamp = sizeStamp(c.size, c.mtimeMs);
      if (!force && !prev && failedBefore[c.path] === stamp) {
        skipped.push({ path: c.path, reason: "unreadable", detail: "parse failed in an earlier build; unchanged since" });
        contentSkipped[c.path] = parseFailed[c.path] = stamp;
        continue;
      }
      let buf: Buffer;
      try {
        buf = fs.readFileSync(c.abs);
      } catch (err) {
        skipped.push({ path: c.path, reason: "unreadable", detail: (err as NodeJS.ErrnoException).code });
        continue;
      }
      const bad = inspectContent(c.path, buf);
      if (bad) {
        skipped.push({ path: c.path, ...bad });
        contentSkipped[c.path] = stamp;
        continue;
      }
      current.add(c.path);
      const hash = createHash("sha1").update(buf).digest("hex");
      const row: FileRow = { path: c.path, hash, size: c.size, language: c.language.id, tokens: 0, line_count: 0, mtime_ms: c.mtimeMs };
      if (!force && prev && prev.hash === hash) {
        // Touched but identical: refresh mtime only, no re-parse.
        changed.push({ row: { ...prev, mtime_ms: c.mtimeMs } });
        continue;
      }
      const text = buf.toString("utf8");
      // Redaction keeps line numbers: citations stay right, the secret values never enter the index.
      changed.push({ row, source: redact ? redactSecrets(text, c.path).text : text });
    }
    const removed = [...previous.keys()].filter((p) => !current.has(p));
    // Module aliases: an edit of a tsconfig.json changes how imports resolve.
    const tsConfigs = new TsConfigs(cfg.root);
    const tsPaths = tsConfigs.summary(found.files.map((f) => f.path));
    lap("scan");
    // Nothing changed on disk since the last build (a daemon's catch-up build, a repeated `codemem
    // build`): the index and graph.json stand, and nothing is loaded, resolved or rewritten. A
    // graph.json missing or older than the index (a daemon stopped before its deferred write) is not.
    const unchanged =
      !force &&
      !opts.optimize &&
      source === "builtin" &&
      changed.length === 0 &&
      removed.length === 0 &&
      stored.index_version === INDEX_VERSION &&
      stored.content_skipped === sortedJson(contentSkipped) &&
      stored.ts_paths === tsPaths &&
      graphFileBuiltAt(dirs.graphFile) === stored.built_at;
    if (unchanged) {
      return finish({ changed_paths: [], reclustered: false, nodes_processed: 0, nodes_embedded: 0, communities: (await store.communities()).length, node_count: Number(stored.node_count ?? 0), edge_count: Number(stored.edge_count ?? 0), files_indexed: previous.size, files_changed: 0, files_removed: 0 }, skipped);
    }
    const toParse = changed.filter((c): c is { row: FileRow; source: string } => c.source !== undefined);
    const sourceOf = new Map(toParse.map((c) => [c.row.path, c.source]));

    // Parse what changed; keep the stored extracts of everything else.
    const pool = opts.pool ?? new ParsePool(cfg.build.workers);
    let fresh: FileExtract[] = [];
    try {
      progress({ phase: "parse", done: 0, total: toParse.length });
      const r = await pool.extractAll(
        toParse.map((c) => ({ path: c.row.path, language: c.row.language as FileExtract["language"], source: c.source })),
        (n) => progress({ phase: "parse", done: n, total: toParse.length }),
      );
      fresh = r.extracts;
      for (const f of r.failed) {
        skipped.push({ path: f.path, reason: "unreadable", detail: `parse failed: ${f.error}` });
        const row = toParse.find((c) => c.row.path === f.path)!.row;
        contentSkipped[f.path] = parseFailed[f.path] = sizeStamp(row.size, row.mtime_ms);
      }
    } finally {
      if (!opts.pool) await pool.close();
    }
    lap("parse");
    const freshByPath = new Map(fresh.map((e) => [e.path, e]));
    const upserts: { row: FileRow; extract: FileExtract }[] = [];
    const warm = force ? undefined : opts.cache?.value;
    const storedExtracts = force ? [] : warm ? [...warm.extracts.values()] : await store.extracts();
    const extracts = new Map<string, FileExtract>();
    for (const e of storedExtracts) if (current.has(e.path)) extracts.set(e.path, e);
    for (const c of changed) {
      const e = freshByPath.get(c.row.path) ?? (c.source === undefined ? extracts.get(c.row.path) : undefined);
      if (!e) {
        if (c.source !== undefined && previous.has(c.row.path)) removed.push(c.row.path); // failed to parse: treat as gone
        continue;
      }
      extracts.set(e.path, e);
      upserts.push({ row: { ...c.row, tokens: e.tokens, line_count: e.lineCount }, extract: e });
    }
    const touched = new Set([...freshByPath.keys(), ...removed]);

    lap("load");
    progress({ phase: "resolve", done: 0, total: extracts.size });
    let nodes: NodeRecord[];
    let edges: GraphEdge[];
    // One keyer across a daemon's builds, so the previous build's edge keys compare with this one's.
    const keyOf = warm?.keyOf ?? edgeKeyer();
    let edgeKeys: (number | string)[];
    let communityOf: Map<string, number>;
    let communities;
    let reclustered = true;
    if (source === "external") {
      await runExternalGenerator(cfg);
      const ext = loadExternal(cfg, extracts);
      nodes = ext.nodes;
      edges = ext.edges;
      edgeKeys = edges.map((e) => keyOf(e.source, e.target, e.type));
      communityOf = ext.communityOf;
      communities = ext.communities;
      // The external graph replaces every node, including those of files it no longer mentions.
      for (const n of nodes) touched.add(n.file_path);
      for (const f of extracts.keys()) touched.add(f);
      for (const f of previous.keys()) touched.add(f);
    } else {
      ({ nodes, edges, keys: edgeKeys } = resolveGraph([...extracts.values()], { tsPaths: (file) => tsConfigs.forFile(file), keyOf }));
      const prevCommunities = force || opts.optimize ? undefined : warm ? warm.communityOf : new Map((await store.catalog()).map((n) => [n.id, n.community]));
      const churn = touched.size / Math.max(1, extracts.size);
      if (!prevCommunities || prevCommunities.size === 0 || churn > 0.1) {
        ({ communityOf, communities } = detectCommunities(nodes, edges));
      } else {
        communityOf = carryCommunities(nodes, edges, prevCommunities);
        reclustered = false;
        communities = nameCommunities(nodes, degreeMap(edges), communityOf);
      }
    }

    lap("resolve");
    // Embed only nodes whose text changed; reuse stored vectors otherwise.
    const children = childNamesByParent(nodes);
    const prevHashes = force ? new Map<string, { rowid: number; textHash: string }>() : await store.nodeHashes([...touched]);
    const texts = new Map<NodeRecord, { text: string; lexical: ReturnType<typeof lexicalFields>; hash: string }>();
    for (const n of nodes) {
      if (!touched.has(n.file_path)) continue;
      const text = embeddingText(n, children.get(n.id) ?? []);
      const lexical = lexicalFields(n, children.get(n.id) ?? []);
      texts.set(n, { text, lexical, hash: textHash(text, lexical) });
    }
    const reusable = await store.vectors([...texts].flatMap(([n, t]) => {
      const prev = prevHashes.get(n.id);
      return prev && prev.textHash === t.hash ? [prev.rowid] : [];
    }));
    const delta: BuildDelta["nodes"] = [];
    const toEmbed: { i: number; text: string }[] = [];
    for (const [n, { text, lexical, hash: h }] of texts) {
      const prev = prevHashes.get(n.id);
      const reused = prev && prev.textHash === h ? reusable.get(prev.rowid) : undefined;
      delta.push({ node: n, textHash: h, lexical, vector: reused ?? new Float32Array(0), fileWords: n.type === "module" ? fileWordsOf(cfg.root, n.file_path, sourceOf, redact) : undefined });
      if (!reused) toEmbed.push({ i: delta.length - 1, text });
    }
    const batch = cfg.build.batchSize;
    for (let s = 0; s < toEmbed.length; s += batch) {
      const slice = toEmbed.slice(s, s + batch);
      const vecs = await embedder.embed(slice.map((x) => x.text));
      slice.forEach((x, k) => (delta[x.i].vector = vecs[k]));
      progress({ phase: "embed", done: Math.min(s + batch, toEmbed.length), total: toEmbed.length });
    }

    lap("embed");
    progress({ phase: "write", done: 0, total: 1 });
    // A forced build into the same index still removes edges that no longer exist (a fresh index has none).
    const oldEdges = warm && !force ? warm.edges : await store.edges();
    const oldKeyList = warm && !force ? warm.edgeKeys : oldEdges.map((e) => keyOf(e.source, e.target, e.type));
    const oldKeys = new Set(oldKeyList);
    const newKeys = new Set(edgeKeys);
    const totalTokens = [...extracts.values()].reduce((s, e) => s + e.tokens, 0);
    const builtAt = new Date().toISOString();
    await store.apply({
      removedFiles: removed,
      upsertFiles: upserts,
      replaceNodesOf: [...touched],
      nodes: delta,
      edgesAdded: edges.filter((_, i) => !oldKeys.has(edgeKeys[i])),
      edgesRemoved: oldEdges.filter((_, i) => !newKeys.has(oldKeyList[i])),
      communities,
      communityOf,
      // Only nodes whose community moved are rewritten.
      communityUpdates: reclustered || !warm ? undefined : new Map([...communityOf].filter(([id, c]) => warm.communityOf.get(id) !== c)),
      meta: {
        embedder: embedder.id,
        built_at: builtAt,
        graph_source: source,
        index_version: INDEX_VERSION,
        total_tokens: String(totalTokens),
        node_count: String(nodes.length),
        edge_count: String(edges.length),
        file_count: String(extracts.size),
        project_name: cfg.root.split("/").pop() ?? "",
        exclude_secrets: String(redact),
        content_skipped: sortedJson(contentSkipped),
        parse_failed: sortedJson(parseFailed),
        ts_paths: tsPaths,
      },
    });
    lap("write");
    if (opts.optimize) await store.optimize();
    const graphParts = warm?.graphParts ?? new Map<string, { extract: FileExtract; sig: string; json: Buffer }>();
    if (opts.cache) opts.cache.value = { extracts, edges, communityOf, keyOf, edgeKeys, graphParts };
    await store.close();

    if (source === "builtin") {
      for (const n of nodes) n.community = communityOf.get(n.id) ?? -1;
      const nodeParts = graphJsonParts(nodes, extracts, graphParts);
      const write = () => writeGraphFileParts(dirs.graphFile, nodeParts, edges, communities, { built_at: builtAt, index_version: INDEX_VERSION });
      if (opts.deferGraphFile) opts.deferGraphFile(write);
      else write();
    }
    lap("graph_file");
    return finish({ changed_paths: [...touched], reclustered, nodes_processed: delta.length, nodes_embedded: toEmbed.length, communities: communities.length, node_count: nodes.length, edge_count: edges.length, files_indexed: extracts.size, files_changed: toParse.length, files_removed: removed.length }, skipped);
  } finally {
    await store.close();
  }
}

/**
 * graph.json's nodes, serialised one file at a time (nodes come grouped by file). A file's text is
 * reused while its extract (the same object) and its nodes' communities and parents are unchanged.
 */
function graphJsonParts(nodes: NodeRecord[], extracts: Map<string, FileExtract>, cache: Map<string, { extract: FileExtract; sig: string; json: Buffer }>): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < nodes.length; ) {
    const file = nodes[i].file_path;
    let j = i;
    let sig = "";
    for (; j < nodes.length && nodes[j].file_path === file; j++) sig += `${nodes[j].community}:${nodes[j].parent ?? ""};`;
    const extract = extracts.get(file)!;
    let hit = cache.get(file);
    if (!hit || hit.extract !== extract || hit.sig !== sig) {
      hit = { extract, sig, json: Buffer.from(nodes.slice(i, j).map(({ code: _c, bases: _b, ...rest }) => JSON.stringify(rest)).join(",")) };
      cache.set(file, hit);
    }
    out.push(hit.json);
    i = j;
  }
  for (const file of cache.keys()) if (!extracts.has(file)) cache.delete(file);
  return out;
}

/** `{path: "size:mtime"}` as recorded in the index's meta (`content_skipped`, `parse_failed`); {} when absent or unreadable. */
export function fileStamps(text: string | undefined): Record<string, string> {
  try {
    const v = JSON.parse(text ?? "{}");
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** JSON with keys in order: the same set of files always gives the same text. */
function sortedJson(o: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** Words of a whole file (identifiers split, comments included) for the file-level lexical index. */
function fileWordsOf(root: string, rel: string, sources: Map<string, string>, redact: boolean): string {
  let text = sources.get(rel);
  if (text === undefined && !redact) {
    try {
      text = fs.readFileSync(`${root}/${rel}`, "utf8");
    } catch {
      text = "";
    }
  }
  return splitWords((text ?? "").slice(0, 400_000)).join(" ");
}

function degreeMap(edges: GraphEdge[]): Map<string, number> {
  const d = new Map<string, number>();
  for (const e of edges) {
    d.set(e.source, (d.get(e.source) ?? 0) + 1);
    d.set(e.target, (d.get(e.target) ?? 0) + 1);
  }
  return d;
}

/** Keeps existing nodes in their community; new nodes join the community their neighbours and file share. */
function carryCommunities(nodes: NodeRecord[], edges: GraphEdge[], prev: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const n of nodes) {
    const c = prev.get(n.id);
    if (c !== undefined && c >= 0) out.set(n.id, c);
  }
  const fresh = new Set(nodes.filter((n) => !out.has(n.id)).map((n) => n.id));
  // Neighbours of the new nodes only: everything else keeps its community.
  const adj = new Map<string, string[]>();
  for (const e of edges) {
    if (fresh.has(e.source)) (adj.get(e.source) ?? adj.set(e.source, []).get(e.source)!).push(e.target);
    if (fresh.has(e.target)) (adj.get(e.target) ?? adj.set(e.target, []).get(e.target)!).push(e.source);
  }
  const fileVotes = new Map<string, Map<number, number>>();
  for (const n of nodes) {
    const c = out.get(n.id);
    if (c === undefined) continue;
    const m = fileVotes.get(n.file_path) ?? new Map<number, number>();
    m.set(c, (m.get(c) ?? 0) + 1);
    fileVotes.set(n.file_path, m);
  }
  for (let pass = 0; pass < 2; pass++) {
    for (const n of nodes) {
      if (out.has(n.id)) continue;
      const votes = new Map<number, number>();
      for (const nb of adj.get(n.id) ?? []) {
        const c = out.get(nb);
        if (c !== undefined) votes.set(c, (votes.get(c) ?? 0) + 1);
      }
      for (const [c, v] of fileVotes.get(n.file_path) ?? []) votes.set(c, (votes.get(c) ?? 0) + 0.5 * v);
      const best = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0];
      if (best) out.set(n.id, best[0]);
    }
  }
  let fallback = 0;
  for (const c of out.values()) fallback = Math.max(fallback, c + 1);
  for (const n of nodes) if (!out.has(n.id)) out.set(n.id, fallback);
  return out;
}

/** Nodes of the external generator's graph, with line ranges and code from our own parse of their files. */
function loadExternal(cfg: ResolvedConfig, byPath: Map<string, FileExtract>) {
  const g = readGraphFile(stateDirs(cfg.root).graphFile);
  const nodes: NodeRecord[] = g.nodes.map((n) => {
    const ex = byPath.get(n.file_path);
    const def = ex?.defs.find((d) => d.name === n.name);
    let lineStart = def?.lineStart ?? 1;
    let lineEnd = def?.lineEnd ?? 1;
    let code = def?.code ?? "";
    if (!def) {
      // Not a symbol our grammars know: find its first mention in the file.
      try {
        const text = fs.readFileSync(`${cfg.root}/${n.file_path}`, "utf8");
        const lines = text.split("\n");
        const idx = lines.findIndex((l) => new RegExp(`\\b${n.name.replace(/[^\w]/g, "")}\\b`).test(l));
        if (idx >= 0) {
          lineStart = idx + 1;
          lineEnd = Math.min(lines.length, idx + 30);
          code = lines.slice(idx, idx + 30).join("\n").slice(0, 1600);
        }
      } catch {
        // the node points at a file we cannot read: keep it, without code
      }
    }
    return {
      ...n,
      type: n.type,
      description: n.description || def?.docstring.split("\n")[0] || `${n.type} ${n.name}`,
      qualified_name: (n as { qualified_name?: string }).qualified_name ?? def?.qualifiedName ?? n.name,
      signature: (n as { signature?: string }).signature ?? def?.signature ?? "",
      docstring: def?.docstring ?? n.description ?? "",
      line_start: (n as { line_start?: number }).line_start ?? lineStart,
      line_end: (n as { line_end?: number }).line_end ?? lineEnd,
      language: languageForPath(n.file_path)?.id ?? "unknown",
      code,
      bases: [],
      community: n.community,
    };
  });
  const communityOf = new Map(nodes.map((n) => [n.id, n.community]));
  const communities = g.communities.length ? g.communities : nameCommunities(nodes, degreeMap(g.edges), communityOf);
  return { nodes, edges: g.edges, communityOf, communities };
}

