import { createHash } from "node:crypto";
import fs from "node:fs";
import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError, isDiskFullError } from "../../shared/errors.js";
import { log } from "../../shared/log.js";
import { fileStamps, sizeStamp, stateDirs } from "../../shared/paths.js";
import { ensureOwnDir } from "../../shared/own-files.js";
import { redactSecrets } from "../secrets/scan.js";
import { openStore } from "../store/open.js";
import type { BuildDelta, Clustering, FileRow, IndexStore, Unfilled } from "../store/types.js";
import { carryCommunities, detectCommunities, nameCommunities, recountCommunities, type CommunityResult } from "./communities.js";
import { detectCommunitiesApart } from "./communities-thread.js";
import { MAX_DEF_DEPTH, tokenCounter } from "./extract.js";
import { testClassifier } from "./test-code.js";
import { childNamesByParent, docKey, embeddingText, fileWordsOf, nodeDocuments } from "./documents.js";
import { FileRoles, roleFacts } from "./file-role.js";
import type { Embedder } from "./embed/embedder.js";
import { isBuiltinUpgrade } from "./embed/select.js";
import { graphSourceOf, runExternalGenerator } from "./external.js";
import { graphFileBuiltAt, readGraphFile, writeGraphFile, type GraphFileState } from "./graph-file.js";
import { languageForPath } from "./languages/registry.js";
import { unsupportedCounts, unsupportedList, unsupportedOf, type UnsupportedCount } from "./languages/unsupported.js";
import { ParsePool, type Prepared } from "./parse-pool.js";
import { GraphResolver, leanExtract, type NodeRecord } from "./resolve.js";
import { TsConfigs } from "./ts-paths.js";
import type { FileExtract, GraphCommunity, GraphEdge, LanguageId } from "./types.js";
import { checkFile, discover, inspectContent, type Candidate, type Skipped, isSettingsPath } from "./walk.js";

/**
 * Version of what a build derives from the files; an index of another version is rebuilt whole.
 * Raise it with every change to what extraction or resolution produces (nodes, their names, kinds,
 * lines, signatures, edges): an index keeps an unchanged file's old extraction otherwise. 8: C++
 * declarations behind export macros and conversion operators, C# signatures after their attributes,
 * Kotlin signatures after their annotations and through their heads, bodiless heads through their
 * parameters, C# properties whose accessors only use `default(T)`/`typeof(T)` are state, Java
 * anonymous classes held by fields and enum constants' bodies, Rust's macro_rules! and doc comments
 * above attributes, Java and Swift signatures after their annotations. 9: file roles (kept in the
 * index's meta, judged again only where files change) that take no test file for what a file copies
 * (a library its tests stub was a "generated copy") nor plugins defining the same hooks for copies of
 * one another (bats' formatters); examples (`examples/`, `Example/`, `samples/`, `snippets/`,
 * `docs/`), a documentation site's scripts (`docs/js/`, a `.docset`) and releases unpacked under
 * versioned directories (`gtest-1.11.0/`) as vendored; Gradle's Kotlin scripts, `Package.swift`,
 * `mix.exs` and tool configs as build scripts. 10: C# files declared in `System.*` outside a `System`
 * directory (polyfills of the platform's types) as vendored. 11: a file holding three files' licence
 * headers (a fused copy) bears the copy mark; .NET's `AssemblyInfo.cs` is a build script. 12: Scala
 * 3's named givens as definitions, and every definition's last line without the whitespace its node
 * ends in (an indented block ended on the next definition's first line). 13: a Scala val holding an
 * anonymous class (`val r = new Reader[T] { … }`) as a class. 15: module documents as at 13 again
 * (14 left a module declaring a type without its script words; reverted). 16: file roles of Python
 * libraries bundled in a package's `packages/`, of `_vendor/`, of hidden files and directories, and of
 * shell scripts in a project of another language (its tooling).
 */
export const INDEX_VERSION = "16";

export interface BuildProgress {
  phase: "scan" | "parse" | "resolve" | "embed" | "write";
  done: number;
  total: number;
}

/** What an incremental build needs from the previous one; the daemon keeps it warm between builds. */
export interface BuildCache {
  /** The graph of the index as last committed: each file's facts and the lookups its resolution made. */
  resolver: GraphResolver;
  /** The module aliases it resolved with: a change re-resolves every file. */
  tsPaths: string;
  communityOf: Map<string, number>;
  communities: GraphCommunity[];
  /** Nodes placed in or dropped from communities by carrying since they were last detected. */
  carried: number;
  /** The index's file rows. */
  files: Map<string, FileRow>;
  /** Its files' roles, brought up to date by each build from the files it parsed. */
  roles?: FileRoles;
  /** The `[index] test_patterns` the roles were judged with (tests are no file's original): a change judges them all again. */
  rolesTestPatterns?: string;
}

/** Graphs of this many nodes are clustered on a thread while the build writes the rest of its index. */
const CLUSTER_APART_NODES = 2000;

/** Carried placements beyond this share of the nodes make a re-clustering due (BuildResult.recluster_due). */
const RECLUSTER_AFTER_SHARE = 0.05;

/**
 * A build that parsed this many files (a first or forced build, a branch switch: not a save) closes
 * its parse workers before it resolves and writes. Having parsed the stdlib's 514 files they held
 * 170-200 MB through the write (peak RSS 680 -> 515 MB, build time unchanged); the next build starts
 * new ones, as it does after the pool's idle close.
 */
const RELEASE_WORKERS_AFTER_FILES = 100;

export interface BuildOptions {
  force?: boolean;
  /** Write graph.json later (coalesced) instead of before returning: for watch-triggered builds. */
  deferGraphFile?: (write: () => Promise<void>) => void;
  /** Writes graph.json from the committed index; default: in this thread (the daemon's build thread uses one of its own). */
  writeGraph?: typeof writeGraphFile;
  /** What graph.json's writes may copy from the last one (a builder's, kept across its builds): told what each build changed. */
  graphFile?: GraphFileState;
  /** Warm state from the previous build of this index; replaced in place after a successful build. */
  cache?: { value?: BuildCache };
  /**
   * The only files that may have changed (a watch batch): they are checked and every other file
   * stands as indexed, without walking the tree. A settings file among them walks it anyway.
   */
  paths?: string[];
  /** Load the warm state even when nothing changed (a daemon's catch-up build at start). */
  warm?: boolean;
  /** Check the index's pages before building on it (a user's build); see OpenStoreOptions.check. */
  check?: boolean;
  /**
   * A background job re-clusters later (the daemon's build thread, `reclusterIndex`): communities
   * are carried however much changed, and the result says when re-clustering is due.
   */
  deferRecluster?: boolean;
  optimize?: boolean;
  embedder: Embedder;
  pool?: ParsePool;
  onProgress?: (p: BuildProgress) => void;
  /** Stops the build at its next checkpoint (between files, embedding batches, phases), always before its one write. */
  signal?: AbortSignal;
  /**
   * Asked once, right before the write; false cancels the build. A build thread asks the daemon, which
   * knows of a cancel the thread has not read yet (it resolves without a turn of its event loop).
   */
  mayWrite?: () => Promise<boolean>;
  /**
   * Takes the fill of a whole-tree build (a first or forced one of a local index): the build counts
   * no tokens and embeds nothing before its write, so it is answerable (lexical and graph) when it
   * returns; the job it hands here counts the tokens, embeds the nodes and writes both, and its
   * result is the complete build's. Without it everything is done before the write.
   */
  fill?: (job: () => Promise<BuildResult>) => void;
  /** Stops a fill between its parts (the daemon stops): what it wrote stays, and the next build resumes it. */
  fillStop?: AbortSignal;
  /**
   * Called as the fill starts (the build's extracts and graph are garbage then) and again once it has
   * made its work and let go of the build's nodes: a process that exits after its build collects its
   * garbage there (Go's src: 900 MB → 320 MB), not whenever V8 gets to it.
   */
  fillReleased?: () => void;
}

/** What a whole-tree build writes after it is answerable (meta `filling` until then). */
export const FILLING = ["vectors", "tokens"] as const;

export interface BuildResult {
  /** Files whose nodes were replaced (internal: lets warm readers refresh just those). */
  changed_paths: string[];
  /** Files whose row changed, nodes or not (internal: a touched but identical file only moves its mtime). */
  rows_changed: string[];
  /** True when communities were re-detected (every node may have moved). */
  reclustered: boolean;
  /** Internal: carrying has moved enough nodes that communities should be detected again (with deferRecluster). */
  recluster_due?: boolean;
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
  /** Source files in languages the graph does not read, by extension (most first). */
  unsupported: UnsupportedCount[];
  graph_source: "builtin" | "external";
  embedder: string;
  index_version: string;
  /** What the build's fill is still writing after this result (vectors, token totals, graph.json); empty or absent once complete. */
  filling?: string[];
  /** A complete result's time to answerable (seconds), when its fill ran after it (in-process builds). */
  answerable_s?: number;
}

/** A file to index with its content (redacted when asked), or only its row when just the mtime moved. */
interface Changed {
  row: FileRow;
  source?: string;
}

/** What scanning the project found against the index. */
interface Scan {
  changed: Changed[];
  removed: string[];
  /** Every file the index should hold after this build. */
  current: Set<string>;
  skipped: Skipped[];
  /** Files left out for their content (generated, minified, binary, unparsable), by size and mtime: freshness must not call them pending. */
  contentSkipped: Record<string, string>;
  /** Files the parser failed on, by size and mtime: not parsed again until they change. */
  parseFailed: Record<string, string>;
  /** Source files of unsupported languages, by extension (a build of hinted paths carries the last walk's). */
  unsupported: Record<string, number>;
}

/** The graph's change as the store applies it. */
interface GraphChange {
  /** Complete nodes of every touched file. */
  nodes: NodeRecord[];
  touched: Set<string>;
  edgesAdded: GraphEdge[];
  edgesRemoved: GraphEdge[];
  nodeCount: number;
  edgeCount: number;
  resolver?: GraphResolver;
}

/** The vector width an embedder id records after its last colon (`builtin-code-1a2b3c4d:384`). */
function widthOf(embedderId: string): number {
  return Number(embedderId.slice(embedderId.lastIndexOf(":") + 1));
}

/** Full or incremental build of one project's index. The caller ensures one build at a time. */
export async function buildIndex(cfg: ResolvedConfig, opts: BuildOptions): Promise<BuildResult> {
  const t0 = performance.now();
  const phases: Record<string, number> = {};
  /** Memory at each phase's end (MB): the process's RSS, this thread's heap, and buffers outside it; what the peak is made of. */
  const memory: Record<string, { rss: number; heap: number; external: number }> = {};
  /** The process's CPU time in each phase (ms, every thread): beside its wall time, how busy the cores were. */
  const cpu: Record<string, number> = {};
  let mark = t0;
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let cpuMark = cpuNow();
  const lap = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - mark);
    mark = now;
    const cpuAt = cpuNow();
    cpu[name] = Math.round(cpuAt - cpuMark);
    cpuMark = cpuAt;
    const m = process.memoryUsage();
    memory[name] = { rss: Math.round(m.rss / 1048576), heap: Math.round(m.heapUsed / 1048576), external: Math.round(m.external / 1048576) };
  };
  const embedder = opts.embedder;
  const source = graphSourceOf(cfg);
  /** The result with the fields every build reports, logged with the phase timings. */
  const finish = (r: Omit<BuildResult, "time_elapsed" | "files_skipped" | "skipped" | "unsupported" | "graph_source" | "embedder" | "index_version">, scan: Pick<Scan, "skipped" | "unsupported">): BuildResult => {
    const skipped = scan.skipped;
    const result: BuildResult = { ...r, time_elapsed: Math.round(performance.now() - t0) / 1000, files_skipped: skipped.length, skipped, unsupported: unsupportedList(scan.unsupported), graph_source: source, embedder: embedder.id, index_version: INDEX_VERSION };
    log.debug("build finished", { ...result, changed_paths: r.changed_paths.length, rows_changed: r.rows_changed.length, skipped: skipped.length, phases_ms: phases, phases_cpu_ms: cpu, phases_memory_mb: memory });
    return result;
  };
  const report = opts.onProgress ?? (() => {});
  const cancelled = () => new CodememError("BUILD_CANCELLED", "The build was cancelled before it wrote anything; the index is as it was.");
  const checkpoint = () => {
    if (opts.signal?.aborted) throw cancelled();
  };
  // Every progress report is a checkpoint too (embedding batches, phase starts).
  const progress = (p: BuildProgress) => {
    checkpoint();
    report(p);
  };

  ensureOwnDir(stateDirs(cfg.root).graphOut);
  // The previous index stays untouched until the final transaction; any error before that leaves it intact.
  // A watch build leaves the log's checkpoint to the deferred work once edits settle (below).
  const store: IndexStore = await openStore(cfg, { mode: "build", dim: embedder.dim, force: opts.force, check: opts.check, batchSize: cfg.build.batchSize, keepWal: !!opts.deferGraphFile });
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
    // A fresh (or replaced) index has no embedder recorded, one of another version derived its graph
    // differently: everything is built.
    const force = !!opts.force || !builtWith || sourceChanged || secretsChanged || builtinUpgrade || stored.index_version !== INDEX_VERSION;
    // An index whose fill did not finish (its daemon stopped, its process was killed) lacks some
    // vectors and tokens: this build fills in just those after its own work (resumedFill).
    const resume = !force && !!stored.filling && source === "builtin" && cfg.store.backend === "local";
    const resumeFill = async (answerable: BuildResult): Promise<BuildResult> => {
      const job = async () => {
        const pool = opts.pool ?? new ParsePool(cfg.build.workers);
        try {
          return await fillIndex(cfg, { embedder, pool, work: await resumedFill(cfg, embedder.dim, redact), rows: opts.cache?.value?.files, answerable, t0, stop: opts.fillStop });
        } finally {
          if (!opts.pool) await pool.close();
        }
      };
      if (opts.fill) {
        opts.fill(job);
        return { ...answerable, filling: stored.filling!.split(",") };
      }
      return { ...(await job()), answerable_s: answerable.time_elapsed };
    };
    if (builtWith && builtWith !== embedder.id && !opts.force && !builtinUpgrade) {
      throw new CodememError("INDEX_EMBEDDER_MISMATCH", `The index was built with embedder ${builtWith}, but ${embedder.id} is configured; rebuild with \`codemem build --force\` or configure ${builtWith}.`);
    }

    progress({ phase: "scan", done: 0, total: 0 });
    const warmFiles = force ? undefined : opts.cache?.value?.files;
    const previous = warmFiles ?? new Map((await store.files()).map((f) => [f.path, f]));
    // The external generator's graph names nodes of any file: every file is parsed for their code.
    const hinted = opts.paths && !opts.paths.some(isSettingsPath) ? opts.paths : undefined;
    const scan = scanFiles(cfg, previous, { force: force || source === "external", redact, failedBefore: fileStamps(stored.parse_failed), hinted: force ? undefined : hinted, contentSkipped: fileStamps(stored.content_skipped), unsupported: unsupportedCounts(stored.unsupported) });
    // Module aliases: an edit of a tsconfig.json changes how imports resolve (and walks the tree).
    const tsConfigs = new TsConfigs(cfg.root);
    const tsPaths = hinted && stored.ts_paths !== undefined ? stored.ts_paths : tsConfigs.summary([...scan.current, ...scan.changed.map((c) => c.row.path)]);
    lap("scan");
    // Nothing changed on disk since the last build (a daemon's catch-up build, a repeated `codemem
    // build`): the index and graph.json stand, and nothing is loaded, resolved or rewritten. A
    // graph.json missing or older than the index (a daemon stopped before its deferred write) is not.
    const unchanged =
      !force &&
      !opts.optimize &&
      source === "builtin" &&
      scan.changed.length === 0 &&
      scan.removed.length === 0 &&
      stored.content_skipped === sortedJson(scan.contentSkipped) &&
      (stored.unsupported ?? "{}") === sortedJson(scan.unsupported) &&
      stored.ts_paths === tsPaths &&
      graphFileBuiltAt(stateDirs(cfg.root).graphFile) === stored.built_at;
    if (unchanged) {
      if (opts.warm && opts.cache && !opts.cache.value && source === "builtin") {
        const resolver = await storedResolver(store, tsConfigs, (e) => previous.has(e.path));
        // Roles are judged at the first save (fileRolesAfter), not at start-up.
        opts.cache.value = { resolver, tsPaths, ...(await storedCommunities(store)), carried: 0, files: previous };
      }
      const answerable = finish({ changed_paths: [], rows_changed: [], reclustered: false, nodes_processed: 0, nodes_embedded: 0, communities: (await store.communities()).length, node_count: Number(stored.node_count ?? 0), edge_count: Number(stored.edge_count ?? 0), files_indexed: previous.size, files_changed: 0, files_removed: 0 }, scan);
      return resume ? await resumeFill(answerable) : answerable;
    }

    // A whole-tree build of a local index leaves tokens and vectors to its fill (BuildOptions.fill).
    const deferred = force && source === "builtin" && cfg.store.backend === "local" && !!opts.fill;
    const pool = opts.pool ?? new ParsePool(cfg.build.workers);
    let fresh: Map<string, FileExtract>;
    let prepared: Prepared;
    try {
      ({ fresh, prepared } = await parseFiles(pool, scan, progress, opts.signal, source === "builtin" ? embedder.id : undefined, deferred));
      checkpoint();
      // Workers that parsed a large tree hold what it took (their heaps, grammars' memory) through the write: released now, started again when next needed.
      if (fresh.size >= RELEASE_WORKERS_AFTER_FILES) await pool.close();
      lap("parse");
      progress({ phase: "resolve", done: 0, total: scan.current.size });
      const warm = force ? undefined : opts.cache?.value;
      // A file that failed to parse is gone from the index.
      for (const c of scan.changed) if (c.source !== undefined && !fresh.has(c.row.path)) scan.current.delete(c.row.path);
      const removed = [...previous.keys()].filter((p) => !scan.current.has(p));

      let graph: GraphChange;
      let prevHashes = new Map<string, { rowid: number; textHash: string }>();
      let communityOf!: Map<string, number>;
      let communities!: GraphCommunity[];
      /** Communities still being detected on a thread (a large graph's); the write awaits them. */
      let clustering: Promise<Clustering> | undefined;
      let reclustered = true;
      let carried = 0;
      if (source === "external") {
        await runExternalGenerator(cfg);
        const ext = loadExternal(cfg, fresh);
        const oldEdges = await store.edges();
        graph = { nodes: ext.nodes, touched: new Set([...previous.keys(), ...scan.current]), ...diffEdgeLists(oldEdges, ext.edges), nodeCount: ext.nodes.length, edgeCount: ext.edges.length };
        ({ communityOf, communities } = ext);
      } else {
        graph = await resolveChanges({ store, warm, force, storedTsPaths: stored.ts_paths, tsPaths, tsConfigs, fresh, removed, previous });
        // The nodes the touched files had: their vectors may be reused, and those gone leave their community.
        if (!force) prevHashes = await store.nodeHashes([...graph.touched]);
        const prev = force || opts.optimize ? undefined : warm ? { communityOf: warm.communityOf, communities: warm.communities } : await storedCommunities(store);
        const churn = graph.touched.size / Math.max(1, graph.resolver!.fileCount);
        if (!prev || prev.communityOf.size === 0 || (churn > 0.1 && !opts.deferRecluster)) {
          const nodes = graph.resolver!.nodeList();
          if (nodes.length >= CLUSTER_APART_NODES) {
            clustering = detectCommunitiesApart(nodes, graph.resolver!.edges(), [...cfg.index.testPatterns]);
            // Awaited by the write; a build that fails or is cancelled before it leaves no rejection unhandled.
            clustering.catch(() => {});
          } else ({ communityOf, communities } = detectCommunities(nodes, graph.resolver!.edges(), testClassifier(cfg.index.testPatterns)));
        } else {
          // Existing nodes keep their community; new ones join their neighbours' and file's.
          communityOf = prev.communityOf;
          const sizes = new Map(prev.communities.map((c) => [c.id, c.size ?? 0]));
          const count = (id: string, by: number) => {
            const c = communityOf.get(id);
            if (c !== undefined) sizes.set(c, (sizes.get(c) ?? 0) + by);
          };
          const live = new Set(graph.nodes.map((n) => n.id));
          carried = warm?.carried ?? 0;
          for (const id of prevHashes.keys()) {
            if (live.has(id)) continue;
            count(id, -1);
            communityOf.delete(id);
            carried++;
          }
          const placed = graph.nodes.filter((n) => !communityOf.has(n.id));
          carried += placed.length;
          carryCommunities(graph.nodes, graph.edgesAdded, communityOf);
          for (const n of placed) count(n.id, 1);
          communities = recountCommunities(prev.communities, sizes, communityOf, placed, testClassifier(cfg.index.testPatterns));
          reclustered = false;
        }
      }
      lap("resolve");
      // Touched but identical files keep their stored extract; only the row's mtime moves.
      const touchedOnly = scan.changed.filter((c) => c.source === undefined && previous.has(c.row.path)).map((c) => c.row.path);
      const kept = new Map((touchedOnly.length ? await store.extracts(touchedOnly) : []).map((e) => [e.path, e]));
      const upserts = scan.changed.flatMap((c) => {
        const e = fresh.get(c.row.path) ?? kept.get(c.row.path);
        // A file its worker parsed comes with its extract's stored form (prepared.extracts).
        return e ? [{ row: { ...c.row, tokens: e.tokens, line_count: e.lineCount }, extract: leanExtract(e), stored: prepared.extracts.get(c.row.path) }] : [];
      });

      // A module's file words are its file's indexed text's: a worker's, else the scan's text, else the file read again with the index's redaction.
      const scanned = new Map(scan.changed.flatMap((c) => (c.source === undefined ? [] : [[c.row.path, c.source] as const])));
      const fileWords = (rel: string) => prepared.fileWords.get(rel) ?? fileWordsOf(scanned.get(rel) ?? indexedSource(cfg, rel, redact));
      const { delta, embedded } = await embedNodes(cfg, store, embedder, graph, prevHashes, prepared.docs, progress, fileWords, deferred);
      lap("embed");
      checkpoint();
      if (opts.mayWrite && !(await opts.mayWrite())) throw cancelled();
      progress({ phase: "write", done: 0, total: 1 });
      // The index's rows after this build (kept warm), and the tokens of all its source.
      const rows = new Map(previous);
      for (const p of removed) rows.delete(p);
      for (const u of upserts) rows.set(u.row.path, u.row);
      let totalTokens = Number(stored.total_tokens ?? 0);
      if (warmFiles) for (const p of [...removed, ...upserts.map((u) => u.row.path)]) totalTokens += (rows.get(p)?.tokens ?? 0) - (previous.get(p)?.tokens ?? 0);
      else totalTokens = [...rows.values()].reduce((s, f) => s + f.tokens, 0);
      const builtAt = new Date().toISOString();
      const rolesTestPatterns = JSON.stringify(cfg.index.testPatterns);
      const roles = fileRolesAfter(graph, warm, fresh, removed, [...scan.current], cfg.index.testPatterns);
      const change: Omit<BuildDelta, keyof Clustering> = {
        removedFiles: removed,
        upsertFiles: upserts,
        replaceNodesOf: [...graph.touched],
        nodes: delta,
        edgesAdded: graph.edgesAdded,
        edgesRemoved: graph.edgesRemoved,
        // Carried: existing nodes keep their community (new ones are written with theirs).
        communityUpdates: reclustered ? undefined : new Map(),
        meta: {
          embedder: embedder.id,
          built_at: builtAt,
          graph_source: source,
          index_version: INDEX_VERSION,
          total_tokens: String(totalTokens),
          node_count: String(graph.nodeCount),
          edge_count: String(graph.edgeCount),
          file_count: String(scan.current.size),
          project_name: cfg.root.split("/").pop() ?? "",
          exclude_secrets: String(redact),
          content_skipped: sortedJson(scan.contentSkipped),
          parse_failed: sortedJson(scan.parseFailed),
          unsupported: sortedJson(scan.unsupported),
          ts_paths: tsPaths,
          file_roles: sortedJson(roles.roles()),
          filling: deferred ? FILLING.join(",") : resume ? stored.filling : "",
        },
      };
      await store.apply(clustering ? { ...change, clustering } : { ...change, communities, communityOf });
      opts.graphFile?.changed(cfg.root, stored.built_at, builtAt, force || reclustered || !graph.resolver ? "all" : changedInGraph(graph, removed));
      if (clustering) ({ communityOf, communities } = await clustering);
      lap("write");
      if (opts.optimize) await store.optimize();
      if (opts.cache) opts.cache.value = graph.resolver ? { resolver: graph.resolver, tsPaths, communityOf, communities, carried, files: rows, roles, rolesTestPatterns } : undefined;
      await store.close();

      const write = source === "builtin" ? graphWrite(cfg, opts, builtAt) : undefined;
      // A whole-tree build's graph.json is written by its fill: nothing answers from it (Go's src: 2 s
      // of a 38 s build to answerable). A fill that never ran leaves it older than the index, which
      // the next build notices (`unchanged`) and writes.
      if (!deferred) {
        if (opts.deferGraphFile) {
          opts.deferGraphFile(async () => {
            // A local writer's close checkpoints the log that the watch builds' closes left.
            if (cfg.store.backend === "local") await (await openStore(cfg, { mode: "build", dim: embedder.dim })).close();
            await write?.();
          });
        } else if (write) await graphWritten(cfg, write);
      }
      lap("graph_file");
      const due = !!opts.deferRecluster && !reclustered && carried > RECLUSTER_AFTER_SHARE * graph.nodeCount;
      const answerable = finish({ changed_paths: [...graph.touched], rows_changed: [...removed, ...upserts.map((u) => u.row.path)], reclustered, recluster_due: due, nodes_processed: delta.length, nodes_embedded: embedded, communities: communities.length, node_count: graph.nodeCount, edge_count: graph.edgeCount, files_indexed: scan.current.size, files_changed: scan.changed.filter((c) => c.source !== undefined).length, files_removed: removed.length }, scan);
      if (resume) return await resumeFill(answerable);
      if (!deferred) return answerable;
      scheduleFill(opts.fill!, cfg, write!, { delta, sources: new Map([...scanned].filter(([p]) => fresh.has(p))) }, { embedder, pool, rows, answerable, t0, stop: opts.fillStop }, opts.fillReleased);
      return { ...answerable, filling: [...FILLING, "graph.json"] };
    } finally {
      if (!opts.pool) await pool.close();
    }
  } finally {
    await store.close();
  }
}

/**
 * Writes communities detected again over the warm graph (every node's community, the communities
 * table, a new built_at; graph.json follows). The daemon's build thread detects them on a thread
 * once edits settle after carrying has moved enough nodes, so no save waits for clustering.
 */
export async function reclusterIndex(cfg: ResolvedConfig, cache: BuildCache, detected: CommunityResult, opts: Pick<BuildOptions, "embedder" | "writeGraph" | "graphFile" | "deferGraphFile">): Promise<BuildResult> {
  const t0 = performance.now();
  const { communityOf, communities } = detected;
  const store = await openStore(cfg, { mode: "build", dim: opts.embedder.dim, batchSize: cfg.build.batchSize });
  const builtAt = new Date().toISOString();
  let meta: Record<string, string | undefined>;
  try {
    meta = await store.meta();
    await store.apply({ removedFiles: [], upsertFiles: [], replaceNodesOf: [], nodes: [], edgesAdded: [], edgesRemoved: [], communities, communityOf, meta: { built_at: builtAt } });
  } finally {
    await store.close();
  }
  opts.graphFile?.changed(cfg.root, meta.built_at, builtAt, "all");
  Object.assign(cache, { communityOf, communities, carried: 0 });
  const write = graphWrite(cfg, opts, builtAt);
  if (opts.deferGraphFile) opts.deferGraphFile(write);
  else await write();
  const result: BuildResult = {
    changed_paths: [],
    rows_changed: [],
    reclustered: true,
    nodes_processed: 0,
    nodes_embedded: 0,
    communities: communities.length,
    time_elapsed: Math.round(performance.now() - t0) / 1000,
    node_count: Number(meta.node_count ?? 0),
    edge_count: Number(meta.edge_count ?? 0),
    files_indexed: cache.files.size,
    files_changed: 0,
    files_removed: 0,
    files_skipped: 0,
    skipped: [],
    unsupported: unsupportedOf(meta),
    graph_source: "builtin",
    embedder: opts.embedder.id,
    index_version: INDEX_VERSION,
  };
  log.info("communities detected again in the background", { communities: communities.length, ms: Math.round(performance.now() - t0) });
  return result;
}

/**
 * Compares the project's files with the index's rows: unchanged ones (same size and mtime) are not
 * read; changed ones are hashed, and only real content changes are handed on with their text.
 * With `hinted` paths only those are checked; the other files and their skip records stand.
 */
function scanFiles(cfg: ResolvedConfig, previous: Map<string, FileRow>, opts: { force: boolean; redact: boolean; failedBefore: Record<string, string>; hinted?: string[]; contentSkipped: Record<string, string>; unsupported: Record<string, number> }): Scan {
  const scan: Scan = { changed: [], removed: [], current: new Set(), skipped: [], contentSkipped: {}, parseFailed: {}, unsupported: opts.unsupported };
  let candidates: Candidate[];
  if (opts.hinted) {
    const hinted = new Set(opts.hinted);
    for (const p of previous.keys()) if (!hinted.has(p)) scan.current.add(p);
    for (const [p, stamp] of Object.entries(opts.contentSkipped)) if (!hinted.has(p)) scan.contentSkipped[p] = stamp;
    for (const [p, stamp] of Object.entries(opts.failedBefore)) if (!hinted.has(p)) scan.parseFailed[p] = stamp;
    candidates = [];
    for (const p of hinted) {
      const r = checkFile(cfg, p);
      if (r && "skipped" in r) scan.skipped.push(r.skipped);
      else if (r) candidates.push(r.file);
    }
  } else {
    const found = discover(cfg);
    scan.skipped.push(...found.skipped);
    scan.unsupported = found.unsupported;
    candidates = found.files;
  }
  for (const c of candidates) {
    const prev = previous.get(c.path);
    if (!opts.force && prev && prev.size === c.size && prev.mtime_ms === c.mtimeMs) {
      scan.current.add(c.path);
      continue;
    }
    const stamp = sizeStamp(c.size, c.mtimeMs);
    if (!opts.force && !prev && opts.failedBefore[c.path] === stamp) {
      scan.skipped.push({ path: c.path, reason: "unreadable", detail: "parse failed in an earlier build; unchanged since" });
      scan.contentSkipped[c.path] = scan.parseFailed[c.path] = stamp;
      continue;
    }
    let buf: Buffer;
    try {
      buf = fs.readFileSync(c.abs);
    } catch (err) {
      scan.skipped.push({ path: c.path, reason: "unreadable", detail: (err as NodeJS.ErrnoException).code });
      continue;
    }
    const bad = inspectContent(c.path, buf);
    if (bad) {
      scan.skipped.push({ path: c.path, ...bad });
      scan.contentSkipped[c.path] = stamp;
      continue;
    }
    scan.current.add(c.path);
    const hash = createHash("sha1").update(buf).digest("hex");
    const row: FileRow = { path: c.path, hash, size: c.size, language: c.language.id, tokens: 0, line_count: 0, mtime_ms: c.mtimeMs };
    if (!opts.force && prev && prev.hash === hash) {
      // Touched but identical: refresh mtime only, no re-parse.
      scan.changed.push({ row: { ...prev, mtime_ms: c.mtimeMs } });
      continue;
    }
    scan.changed.push({ row, source: indexedText(buf.toString("utf8"), c.path, opts.redact) });
  }
  scan.removed = [...previous.keys()].filter((p) => !scan.current.has(p));
  return scan;
}

/** A file's text as indexed: with secrets redacted when asked (line numbers kept, so citations stay right). */
function indexedText(text: string, rel: string, redact: boolean): string {
  return redact ? redactSecrets(text, rel).text : text;
}

/** Parses the files whose content changed; a file the parser fails on is skipped (and remembered). */
async function parseFiles(
  pool: ParsePool,
  scan: Scan,
  progress: (p: BuildProgress) => void,
  signal: AbortSignal | undefined,
  embedder: string | undefined,
  light: boolean,
): Promise<{ fresh: Map<string, FileExtract>; prepared: Prepared }> {
  const toParse = scan.changed.filter((c): c is Required<Changed> => c.source !== undefined);
  progress({ phase: "parse", done: 0, total: toParse.length });
  const r = await pool.extractAll(
    toParse.map((c) => ({ path: c.row.path, language: c.row.language as FileExtract["language"], source: c.source })),
    // Reported, not checked, here: the pool stops handing out files itself once the signal fires.
    (n) => !signal?.aborted && progress({ phase: "parse", done: n, total: toParse.length }),
    signal,
    embedder,
    light,
    // A whole-tree build of a local index (light) has its workers make the stored texts too.
    light,
  );
  for (const f of r.failed) {
    scan.skipped.push({ path: f.path, reason: "unreadable", detail: `parse failed: ${f.error}` });
    const row = toParse.find((c) => c.row.path === f.path)!.row;
    scan.contentSkipped[f.path] = scan.parseFailed[f.path] = sizeStamp(row.size, row.mtime_ms);
  }
  for (const e of r.extracts) {
    if (e.tooDeep) scan.skipped.push({ path: e.path, reason: "too_deep", detail: `indexed to ${MAX_DEF_DEPTH} nested definitions; ${e.tooDeep} nested deeper left out` });
  }
  return { fresh: new Map(r.extracts.map((e) => [e.path, e])), prepared: r.prepared };
}

/** A graph.json write whose full disk is said as such (the index is written; a build writes the file again). */
function graphWritten(cfg: ResolvedConfig, write: () => Promise<void>): Promise<void> {
  return write().catch((err) => {
    if (!isDiskFullError(err)) throw err;
    const file = stateDirs(cfg.root).graphFile;
    throw new CodememError("DISK_FULL", `The index is written, but no space is left on the disk holding ${file} to write it (${(err as Error).message}). Free space, then run \`codemem build\` (it writes graph.json again).`, { file });
  });
}

/** The write of graph.json for the index at `builtAt`: from the builder's last file where it can. */
function graphWrite(cfg: ResolvedConfig, opts: Pick<BuildOptions, "writeGraph" | "graphFile">, builtAt: string): () => Promise<void> {
  const meta = { built_at: builtAt, index_version: INDEX_VERSION };
  const writer = opts.writeGraph ?? writeGraphFile;
  return async () => void (await (opts.graphFile ? opts.graphFile.write(cfg, meta, writer) : writer(cfg, meta)));
}

/**
 * Files whose nodes or outgoing edges a build changed: what graph.json's next write serialises
 * again. An edge's source may lie in a file the build did not parse (a Go method's receiver type
 * contains it); a source gone with the build was a node of a file it touched.
 */
function changedInGraph(graph: GraphChange, removed: string[]): Set<string> {
  const files = new Set([...graph.touched, ...removed]);
  for (const edges of [graph.edgesAdded, graph.edgesRemoved]) {
    for (const e of edges) {
      const f = graph.resolver!.fileOf(e.source);
      if (f !== undefined) files.add(f);
    }
  }
  return files;
}

/**
 * Brings the graph up to date with the parsed files. The resolver is the daemon's warm one, else
 * the index's graph rebuilt from its stored extracts; its update re-resolves only the files the
 * change can affect, and its delta is what the store applies. A forced build, or new module
 * aliases, resolve every file and compare with the stored edges instead.
 */
async function resolveChanges(a: {
  store: IndexStore;
  warm: BuildCache | undefined;
  force: boolean;
  storedTsPaths: string | undefined;
  tsPaths: string;
  tsConfigs: TsConfigs;
  fresh: Map<string, FileExtract>;
  removed: string[];
  previous: Map<string, FileRow>;
}): Promise<GraphChange> {
  const aliasesChanged = a.storedTsPaths !== a.tsPaths;
  const whole = a.force || aliasesChanged;
  let resolver = a.warm && !whole && a.warm.tsPaths === a.tsPaths ? a.warm.resolver : undefined;
  if (!resolver) {
    // The files the index holds, as it holds them; the update below brings in this build's changes.
    // With new aliases the stored edges are the baseline instead, so changed and removed files stay out.
    const gone = new Set(a.removed);
    resolver = a.force ? new GraphResolver({ tsPaths: (file) => a.tsConfigs.forFile(file) }) : await storedResolver(a.store, a.tsConfigs, (e) => a.previous.has(e.path) && !(whole && (a.fresh.has(e.path) || gone.has(e.path))));
  }
  const delta = resolver.update([...a.fresh.values()], whole ? [] : a.removed);
  const touched = new Set([...a.fresh.keys(), ...a.removed]);
  const nodes = delta.nodes;
  // Methods whose receiver type moved to another file: their unchanged files' nodes are rewritten,
  // as the index holds those files (the disk may have moved on: a checkout whose other events are
  // still queued; its new text is the next batch's).
  const moved = [...new Set([...delta.parentUpdates.keys()].map((id) => resolver!.fileOf(id)!))].filter((p) => !touched.has(p));
  if (moved.length) {
    const rows = await a.store.nodeHashes(moved);
    for (const ex of await a.store.extracts(moved)) {
      for (const n of resolver.recordsOf(ex)) {
        const rowid = n.type === "module" ? undefined : rows.get(n.id)?.rowid;
        nodes.push(rowid === undefined ? n : { ...n, code: await a.store.code(rowid) });
      }
      touched.add(ex.path);
    }
  }
  let { edgesAdded, edgesRemoved } = delta;
  if (whole) {
    // Every file was resolved anew (or with new aliases): the stored edges are the baseline.
    ({ edgesAdded, edgesRemoved } = diffEdgeLists(await a.store.edges(), resolver.edges()));
    if (a.force) for (const p of a.previous.keys()) touched.add(p);
  }
  return { nodes, touched, edgesAdded, edgesRemoved, nodeCount: resolver.nodeCount, edgeCount: resolver.edgeCount, resolver };
}

/**
 * The files' roles after a build: the warm ones updated with the files it parsed and removed when
 * the build updated the warm graph, else judged from every file the graph holds (or, for an
 * external graph, from paths alone).
 */
function fileRolesAfter(graph: GraphChange, warm: BuildCache | undefined, fresh: Map<string, FileExtract>, removed: string[], current: string[], testPatterns: readonly string[]): FileRoles {
  const isTest = testClassifier(testPatterns);
  if (!graph.resolver) return new FileRoles(current.map((path) => ({ path, copyMark: false, defs: [] })), isTest);
  if (warm?.roles && graph.resolver === warm.resolver && warm.rolesTestPatterns === JSON.stringify(testPatterns)) {
    warm.roles.update([...fresh.values()].map(roleFacts), removed);
    return warm.roles;
  }
  return new FileRoles(graph.resolver.fileFacts(), isTest);
}

/**
 * Readies a warm state for the next save (the daemon, once a start's or a whole-tree build's warm
 * load has settled): the files' roles judged, which fileRolesAfter otherwise does at the first save
 * (Go's src: ~0.4 s), and a file of the project's most common language parsed and embedded, which
 * loads its grammar, compiles its query (0.05–0.5 s) and the embedder. A daemon's first save paid
 * all of it: Go's src 1.1 s of build against 0.1–0.2 s for the next ones.
 */
export async function prepareForSaves(cfg: ResolvedConfig, cache: BuildCache, pool: ParsePool, embedder: Embedder): Promise<void> {
  const rolesTestPatterns = JSON.stringify(cfg.index.testPatterns);
  if (!cache.roles || cache.rolesTestPatterns !== rolesTestPatterns) {
    cache.roles = new FileRoles(cache.resolver.fileFacts(), testClassifier(cfg.index.testPatterns));
    cache.rolesTestPatterns = rolesTestPatterns;
  }
  const files = new Map<string, FileRow[]>();
  for (const f of cache.files.values()) push(files, f.language, f);
  const [most] = [...files].sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1));
  // A file of an ordinary size (the first by path), read as the index reads it; none readable: the grammar alone.
  const sample = most?.[1].filter((f) => f.size > 0 && f.size <= 64 * 1024).sort((a, b) => (a.path < b.path ? -1 : 1))[0];
  // Nothing of it is stored: the text is read as it is, unredacted.
  const source = sample ? indexedSource(cfg, sample.path, false) : "";
  if (most) await pool.prepare(most[0] as LanguageId, source ? { path: sample!.path, source } : undefined);
  await embedder.embed([source.slice(0, 400) || "prepare"]);
}

/** The graph of the index as stored, resolved again from its extracts (those `keep` keeps). */
async function storedResolver(store: IndexStore, tsConfigs: TsConfigs, keep: (e: FileExtract) => boolean): Promise<GraphResolver> {
  const resolver = new GraphResolver({ tsPaths: (file) => tsConfigs.forFile(file) });
  resolver.update((await store.extracts()).filter(keep), [], { load: true });
  return resolver;
}

/** Which edges a store holding `before` must add and remove to hold `after`. */
function diffEdgeLists(before: GraphEdge[], after: GraphEdge[]): { edgesAdded: GraphEdge[]; edgesRemoved: GraphEdge[] } {
  // A first or forced build writes a new index: nothing to diff (Go's src: 240K keys made for nothing, 0.4 s).
  if (before.length === 0) return { edgesAdded: after, edgesRemoved: [] };
  // A changed dispatch confidence replaces the edge.
  const key = (e: GraphEdge) => `${e.source}\0${e.target}\0${e.type}\0${e.dispatch ?? ""}`;
  const was = new Set(before.map(key));
  const is = new Set(after.map(key));
  return { edgesAdded: after.filter((e) => !was.has(key(e))), edgesRemoved: before.filter((e) => !is.has(key(e))) };
}

/** The communities the index holds, for a build without warm state. */
async function storedCommunities(store: IndexStore): Promise<{ communityOf: Map<string, number>; communities: GraphCommunity[] }> {
  return { communityOf: new Map((await store.catalog()).map((n) => [n.id, n.community])), communities: await store.communities() };
}

/**
 * Hands a whole-tree build's fill to `fill`: graph.json first (once `stats` shows nothing filling, it
 * is written too), then the vectors and token counts. The job is made here, outside buildIndex, so
 * it holds what the fill needs and no more: none of the build's extracts, sources and graph, which a
 * closure made in buildIndex kept alive through the fill (Go's src: the build's process at 741 MB
 * when it answered, 1,060 MB while writing graph.json). The nodes and sources become the fill's work
 * (the nodes' embedding texts, 1 s at Go's src) once the build has answered, then are let go.
 */
function scheduleFill(
  fill: NonNullable<BuildOptions["fill"]>,
  cfg: ResolvedConfig,
  write: () => Promise<void>,
  input: { delta: BuildDelta["nodes"]; sources: Map<string, string> },
  a: Omit<Parameters<typeof fillIndex>[1], "work">,
  released?: () => void,
): void {
  let held: typeof input | undefined = input;
  fill(async () => {
    released?.();
    const work = buildFill(held!.delta, held!.sources, a.rows ?? new Map());
    held = undefined;
    released?.();
    await graphWritten(cfg, write);
    return fillIndex(cfg, { ...a, work });
  });
}

/**
 * Texts of the nodes to write, with their vectors: reused when the node's text is unchanged, taken
 * from the parse workers' prepared documents, or embedded here.
 */
async function embedNodes(
  cfg: ResolvedConfig,
  store: IndexStore,
  embedder: Embedder,
  graph: GraphChange,
  prevHashes: Map<string, { rowid: number; textHash: string }>,
  prepared: Prepared["docs"],
  progress: (p: BuildProgress) => void,
  fileWords: (rel: string) => string,
  deferred: boolean,
): Promise<{ delta: BuildDelta["nodes"]; embedded: number }> {
  const children = childNamesByParent(graph.nodes);
  const texts = graph.nodes.map((n) => {
    const doc = n.type === "module" ? undefined : prepared.get(docKey(n));
    if (doc) return { n, text: "", lexical: doc.lexical, hash: doc.hash, vector: doc.vector, words: undefined, stored: doc.stored };
    const words = n.type === "module" ? fileWords(n.file_path) : undefined;
    return { n, ...nodeDocuments(n, children.get(n.id) ?? [], words), vector: undefined, words };
  });
  const reusable = await store.vectors(texts.flatMap((t) => {
    const prev = prevHashes.get(t.n.id);
    return prev && prev.textHash === t.hash ? [prev.rowid] : [];
  }));
  const delta: BuildDelta["nodes"] = [];
  const toEmbed: { i: number; text: string }[] = [];
  let embedded = 0;
  for (const { n, text, lexical, hash, vector, words, stored } of texts) {
    const prev = prevHashes.get(n.id);
    const reused = prev && prev.textHash === hash ? reusable.get(prev.rowid) : undefined;
    // A module carries its whole file's words (identifiers split, comments included) for the file-level lexical index.
    delta.push({ node: n, textHash: hash, lexical, vector: reused ?? vector ?? new Float32Array(0), fileWords: words, stored });
    // A deferred build's vectors are its fill's (fillIndex); what it writes now has none.
    if (deferred) continue;
    if (!reused) embedded++;
    if (!reused && !vector) toEmbed.push({ i: delta.length - 1, text });
  }
  const batch = cfg.build.batchSize;
  for (let s = 0; s < toEmbed.length; s += batch) {
    const slice = toEmbed.slice(s, s + batch);
    const vecs = await embedder.embed(slice.map((x) => x.text));
    slice.forEach((x, k) => (delta[x.i].vector = vecs[k]));
    progress({ phase: "embed", done: Math.min(s + batch, toEmbed.length), total: toEmbed.length });
  }
  return { delta, embedded };
}

/** A node a fill embeds: its text hash as written, and its embedding text. */
interface FillNode {
  id: string;
  textHash: string;
  text: string;
}

/** What a fill does: the nodes it embeds by file, and the files whose tokens it counts (their hash as indexed) with their text. */
interface FillWork {
  byFile: Map<string, FillNode[]>;
  counts: Map<string, string>;
  /** A file's indexed text, asked once when its part comes (undefined: it is no longer the indexed one). */
  sourceOf: (path: string) => string | undefined;
}

/**
 * A fill's parts, each written in a transaction of its own: files in order, each part holding at
 * least `batch` nodes to embed (a file counts one more for its tokens), the last one fewer; always
 * one part, which clears `filling`. A fill stopped between parts (its daemon stopped, its process
 * killed) keeps the parts it wrote, and `filling`: the next build resumes it with what is left
 * (resumedFill) instead of building the whole tree again.
 */
function fillParts(paths: string[], byFile: Map<string, FillNode[]>, batch: number): string[][] {
  const parts: string[][] = [[]];
  let held = 0;
  for (const p of paths) {
    if (held >= batch) {
      parts.push([]);
      held = 0;
    }
    parts[parts.length - 1].push(p);
    held += (byFile.get(p)?.length ?? 0) + 1;
  }
  return parts;
}

/** The fill of a whole-tree build just written: every node of `delta`, every file parsed. */
function buildFill(delta: BuildDelta["nodes"], sources: Map<string, string>, rows: Map<string, FileRow>): FillWork {
  const children = childNamesByParent(delta.map((d) => d.node));
  const byFile = new Map<string, FillNode[]>();
  for (const d of delta) {
    // The very text an inline build embeds (a script's module carries its file's words too).
    const text = embeddingText(d.node, children.get(d.node.id) ?? [], d.fileWords);
    push(byFile, d.node.file_path, { id: d.node.id, textHash: d.textHash, text });
  }
  const counts = new Map([...sources.keys()].flatMap((p) => (rows.has(p) ? [[p, rows.get(p)!.hash] as const] : [])));
  // Each text is let go once its part has it.
  const sourceOf = (p: string) => {
    const text = sources.get(p);
    sources.delete(p);
    return text;
  };
  return { byFile, counts, sourceOf };
}

/**
 * What an unfinished fill left, from the index (LocalStore.unfilled): its nodes' embedding texts
 * made again from their stored fields, and the files whose tokens are due, read again from disk
 * while they still hold the indexed text (a file changed since is the next build's, counted inline).
 */
async function resumedFill(cfg: ResolvedConfig, dim: number, redact: boolean): Promise<FillWork> {
  const store = await openStore(cfg, { mode: "build", dim });
  let left: Unfilled;
  try {
    left = await store.unfilled!();
  } finally {
    await store.close();
  }
  const byFile = new Map<string, FillNode[]>();
  let remade = 0;
  for (const n of left.nodes) {
    const docs = nodeDocuments(n, left.childNames.get(n.id) ?? [], n.fileWords);
    // Written under the stored hash either way: a text that reads back differently (children of
    // another file listed in another order) still gets the nearest vector there is.
    if (docs.hash !== n.text_hash) remade++;
    push(byFile, n.file_path, { id: n.id, textHash: n.text_hash, text: docs.text });
  }
  if (remade) log.debug("fill resumed: some texts read back differently from the index", { nodes: remade });
  const counts = new Map(left.files.map((f) => [f.path, f.hash]));
  const sourceOf = (p: string) => {
    try {
      const buf = fs.readFileSync(`${cfg.root}/${p}`);
      return createHash("sha1").update(buf).digest("hex") === counts.get(p) ? indexedText(buf.toString("utf8"), p, redact) : undefined;
    } catch {
      return undefined;
    }
  };
  return { byFile, counts, sourceOf };
}

function push<T>(m: Map<string, T[]>, k: string, v: T): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/**
 * The second half of a deferred whole-tree build (or what is left of one): each file's tokens
 * counted and each node embedded (on the parse workers where the embedder runs there), written
 * part by part (FILL_PART_FILES); the last part also sets the token total and clears `filling`. A
 * node or file replaced meanwhile keeps what its own build wrote (the store matches text hashes and
 * file hashes). `stop` ends it between parts (BUILD_CANCELLED). The result is the complete build's:
 * the answerable one's, with the time to here and the nodes embedded.
 */
async function fillIndex(
  cfg: ResolvedConfig,
  a: { embedder: Embedder; pool: ParsePool; work: FillWork; rows?: Map<string, FileRow>; answerable: BuildResult; t0: number; stop?: AbortSignal },
): Promise<BuildResult> {
  const t1 = performance.now();
  const { byFile, counts, sourceOf } = a.work;
  const paths = [...new Set([...counts.keys(), ...byFile.keys()])].sort();
  const inWorkers = /^(builtin|trained)-/.test(a.embedder.id) ? a.embedder.id : undefined;
  const { countTokens } = await tokenCounter();
  const store = await openStore(cfg, { mode: "build", dim: a.embedder.dim, batchSize: cfg.build.batchSize });
  let total = 0;
  let embedded = 0;
  let counted = 0;
  const parts = fillParts(paths, byFile, cfg.build.batchSize);
  const ask = (part: string[]) => a.pool.fillAll(part.map((p) => ({ path: p, source: counts.has(p) ? sourceOf(p) : undefined, texts: (byFile.get(p) ?? []).map((n) => n.text) })), inWorkers, countTokens);
  let asked: ReturnType<typeof ask> | undefined;
  try {
    for (const [i, part] of parts.entries()) {
      // A turn of the event loop between parts: a part done in this thread awaits nothing that waits,
      // and the daemon's word to stop (or its disconnect) is only read here.
      if (i > 0) await new Promise((r) => setImmediate(r));
      if (a.stop?.aborted) throw new CodememError("BUILD_CANCELLED", "The build's fill was stopped between its parts; what it wrote stays, and the next build fills the rest.");
      const filled = await (asked ?? ask(part));
      // The workers take the next part while this one is written (a stop drops what they made of it).
      asked = i + 1 < parts.length ? ask(parts[i + 1]) : undefined;
      asked?.catch(() => {});
      const vectors: { id: string; textHash: string; vector: Float32Array }[] = [];
      const toEmbed: { i: number; text: string }[] = [];
      for (const p of part) {
        const got = filled.get(p)?.vectors;
        for (const [k, n] of (byFile.get(p) ?? []).entries()) {
          vectors.push({ id: n.id, textHash: n.textHash, vector: got?.[k] ?? new Float32Array(0) });
          if (!got) toEmbed.push({ i: vectors.length - 1, text: n.text });
        }
      }
      for (let e = 0; e < toEmbed.length; e += cfg.build.batchSize) {
        const slice = toEmbed.slice(e, e + cfg.build.batchSize);
        const vecs = await a.embedder.embed(slice.map((x) => x.text));
        slice.forEach((x, k) => (vectors[x.i].vector = vecs[k]));
      }
      const tokens = part.flatMap((p) => {
        const n = filled.get(p)?.tokens;
        return counts.has(p) && n !== undefined ? [{ path: p, hash: counts.get(p)!, tokens: n }] : [];
      });
      total = await store.fill!({ vectors, tokens }, { last: i === parts.length - 1 });
      embedded += vectors.length;
      counted += tokens.length;
      // The warm rows carry the counts: an incremental build's total moves by a file's count from here.
      for (const t of tokens) {
        const row = a.rows?.get(t.path);
        if (row?.hash === t.hash) a.rows!.set(t.path, { ...row, tokens: t.tokens });
      }
    }
  } finally {
    a.pool.idle();
    await store.close();
  }
  const result: BuildResult = { ...a.answerable, filling: [], nodes_embedded: a.answerable.nodes_embedded + embedded, time_elapsed: Math.round(performance.now() - a.t0) / 1000 };
  log.debug("build filled", { nodes_embedded: embedded, files_counted: counted, total_tokens: total, fill_ms: Math.round(performance.now() - t1), time_elapsed: result.time_elapsed });
  return result;
}

/** JSON with keys in order: the same set of files always gives the same text. */
function sortedJson(o: Record<string, string | number>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/** A file's indexed text, read again (redacted under the index's policy); empty when it cannot be read. */
function indexedSource(cfg: ResolvedConfig, rel: string, redact: boolean): string {
  try {
    return indexedText(fs.readFileSync(`${cfg.root}/${rel}`, "utf8"), rel, redact);
  } catch {
    return "";
  }
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
  const communities = g.communities.length ? g.communities : nameCommunities(nodes, degreeMap(g.edges), communityOf, testClassifier(cfg.index.testPatterns));
  return { nodes, edges: g.edges, communityOf, communities };
}

function degreeMap(edges: GraphEdge[]): Map<string, number> {
  const d = new Map<string, number>();
  for (const e of edges) {
    d.set(e.source, (d.get(e.source) ?? 0) + 1);
    d.set(e.target, (d.get(e.target) ?? 0) + 1);
  }
  return d;
}
