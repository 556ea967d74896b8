import fs from "node:fs";
import path from "node:path";
import type { z } from "zod";
import { log } from "../shared/log.js";
import { recordStoreChoice, resolveConfig, type ConfigFlags, type ResolvedConfig } from "../shared/config.js";
import { CodememError } from "../shared/errors.js";
import * as ops from "../shared/operations.js";
import { fileStamp, resolveProjectRoot, stateDirs, toProjectPath, writeFileAtomic } from "../shared/paths.js";
import type { FreshnessT } from "../shared/schemas.js";
import { countTokens, TOKENIZER } from "../shared/tokens.js";
import type { BuildProgress, BuildResult } from "./index/build.js";
import { LocalBuilder, ThreadBuilder, type Builder } from "./index/builder.js";
import { BuildQueue } from "./index/build-queue.js";
import type { Embedder } from "./index/embed/embedder.js";
import { createEmbedder, isBuiltinUpgrade } from "./index/embed/select.js";
import { unsupportedOf } from "./index/languages/unsupported.js";
import { assembleQuery, assembleWakeup } from "./retrieve/context.js";
import { renderSkeleton } from "./retrieve/skeleton.js";
import type { DocsIndex } from "./docs/index.js";
import type { SynapseStore } from "./synapse/store.js";
import { ProjectMemory } from "./synapse/memory.js";
import { fillAfter, testPairs, type NeighbourReason } from "./synapse/fill.js";
import { Freshness } from "./retrieve/freshness.js";
import { Readers } from "./retrieve/readers.js";
import type { Recall, Retriever } from "./retrieve/retriever.js";
import { appendEvent } from "../shared/events.js";
import { nodesOf } from "../shared/activity.js";

type Input<O extends ops.Operation> = z.input<O["input"]>;
type Output<O extends ops.Operation> = z.infer<O["output"]>;

export interface EngineOptions {
  flags?: ConfigFlags;
  /** False for benchmark and evaluation runs: no synapse reinforcement, no events. */
  sideEffects?: boolean;
  onProgress?: (p: BuildProgress) => void;
  /** codemem.toml changed and was read again (the daemon re-applies its watch rules). */
  onConfigChange?: () => void;
  /**
   * Serving as the daemon: builds run on a thread of their own, so answers keep flowing during
   * them, and a reader answers as soon as its catalog is read, while the rest warms up.
   */
  daemon?: boolean;
}

/**
 * Tool calls that teach the synapse store: those that open code (an outline). An answer's list
 * (query, search, neighbours) teaches nothing: recall made it, and learning it back would let the
 * answer reinforce itself into the next one (docs/synapses.md, "What counts as evidence").
 */
const REINFORCING = new Set(["skeleton"]);
/** After this engine built the index, an answer waits this long at most for its reader's vectors. */
const VECTOR_WAIT_MS = 30_000;

/** All operations for one project. The daemon holds one warm engine per project root. */
export class ProjectEngine {
  private embedderP?: Promise<Embedder>;
  /** The warm reader of the index, and the one taking over after a forced build. */
  private readonly readers: Readers;
  /** What is changed on disk and not indexed yet. */
  private readonly fresh: Freshness;
  private docs?: DocsIndex;
  /** Runs builds and keeps the warm state between incremental ones. */
  readonly builder: Builder;
  /** Builds one at a time, each cancellable by the client that asked. */
  private readonly queue: BuildQueue;
  /** The learned associations: what teaches them, what they recall. */
  readonly memory: ProjectMemory;

  /** codemem.toml's size and mtime when `cfg` was resolved, and of a version that failed to parse. */
  private configStamp: string;
  private brokenStamp?: string;

  private constructor(
    readonly root: string,
    public cfg: ResolvedConfig,
    private readonly opts: EngineOptions,
  ) {
    this.builder = opts.daemon ? new ThreadBuilder() : new LocalBuilder(cfg.build.workers, () => this.embedder());
    // The daemon's build thread re-clusters between builds; readers then load the new communities.
    if (opts.daemon) this.builder.onBackground = (r) => void this.afterBuild(r).catch((err) => log.warn("refreshing readers after background work failed", { error: (err as Error).message }));
    // A whole-tree build's vectors and tokens are written after it answered: readers load them then.
    this.builder.onFilled = () => {
      this.fresh.forget();
      void this.readers.afterFill().catch((err) => log.warn("refreshing readers after a build's fill failed", { error: (err as Error).message }));
    };
    this.configStamp = fileStamp(stateDirs(root).configFile);
    this.memory = new ProjectMemory(root, () => this.retrieverOrUndefined(), this.sideEffects);
    this.fresh = new Freshness(root);
    this.readers = new Readers(() => this.cfg, !!opts.daemon);
    this.queue = new BuildQueue(this.builder);
  }

  /**
   * Reads codemem.toml again when it changed since the settings in use were resolved, so an edit
   * (exclude_patterns, budgets, the embedder) applies to the next request without a restart. A
   * broken file fails builds with CONFIG_INVALID and leaves the index as it is; answers go on with
   * the last good settings.
   */
  private refreshConfig(forBuild: boolean): void {
    const stamp = fileStamp(stateDirs(this.root).configFile);
    // While a setting is refused it is read again on each request: `codemem trust` edits no project file.
    const refused = this.cfg.store.refused ?? this.cfg.llm.refused;
    if ((stamp === this.configStamp && !refused) || (!forBuild && stamp === this.brokenStamp)) return;
    let cfg: ResolvedConfig;
    try {
      cfg = resolveConfig(this.root, this.opts.flags ?? {});
    } catch (err) {
      if (forBuild) throw err;
      this.brokenStamp = stamp; // said once, not on every answer
      log.warn("codemem.toml is invalid; answering with the last good settings", { error: (err as Error).message });
      return;
    }
    this.configStamp = stamp;
    if (refused && JSON.stringify(cfg) === JSON.stringify(this.cfg)) return;
    if (JSON.stringify(cfg.embedder) !== JSON.stringify(this.cfg.embedder)) this.embedderP = undefined;
    this.cfg = cfg;
    this.readers.settingsChanged();
    this.fresh.forget();
    log.info("codemem.toml changed; settings read again", { file: stateDirs(this.root).configFile });
    this.opts.onConfigChange?.();
  }

  static async open(projectPath: string, opts: EngineOptions = {}): Promise<ProjectEngine> {
    const root = resolveProjectRoot(projectPath);
    return new ProjectEngine(root, resolveConfig(root, opts.flags ?? {}), opts);
  }

  embedder(): Promise<Embedder> {
    this.embedderP ??= createEmbedder(this.cfg).catch((err) => {
      this.embedderP = undefined;
      throw err;
    });
    return this.embedderP;
  }

  /** The warm read view of the index; opened on first use, reopened after large builds. */
  retriever(): Promise<Retriever> {
    return this.readers.current();
  }

  /** This engine built (or brought up to date) the index: it has the vectors, so its answers use them. */
  private built = false;

  /**
   * The reader for a ranked answer. After this engine's own build it waits (VECTOR_WAIT_MS at most)
   * for the reader's vectors and term weights: a lexical answer there would differ from the same
   * question's a second later, and from a run whose reader happened to be warm.
   */
  private async answering(): Promise<Retriever> {
    const r = await this.retriever();
    if (this.built) await r.whenWarm(VECTOR_WAIT_MS);
    return r;
  }

  /**
   * Settles once the reader is warm as answers wait for it (whenWarm, VECTOR_WAIT_MS at most; at once
   * when there is no index). The daemon starts watching then, after a start or a first build: the
   * watcher's walk of the tree beside the warming held the first answer after Go's src's build 1.3 s
   * longer, and a start's reader was warm 2.1 s after its catalog instead of 1.0 s.
   */
  async readerWarm(): Promise<void> {
    await this.retriever()
      .then((r) => r.whenWarm(VECTOR_WAIT_MS))
      .catch(() => undefined);
  }

  private retrieverOrUndefined(): Promise<Retriever | undefined> {
    return this.readers.currentOrNone();
  }

  /** Validates input against the operation's declaration and checks it targets this project. */
  private parse<O extends ops.Operation>(op: O, input: unknown): z.infer<O["input"]> {
    const r = op.input.safeParse(input);
    if (!r.success) {
      const issue = r.error.issues[0];
      const where = issue.path.join(".") || "arguments";
      throw new CodememError("INVALID_ARGUMENT", `${op.tool}: ${where}: ${issue.message}${issue.code === "unrecognized_keys" ? ` (allowed: ${Object.keys(op.input.shape).join(", ")})` : ""}.`);
    }
    const data = r.data as { project_path: string };
    if (resolveProjectRoot(data.project_path) !== this.root) {
      throw new CodememError("INVALID_ARGUMENT", `project_path ${data.project_path} is not this engine's project ${this.root}.`);
    }
    return r.data as z.infer<O["input"]>;
  }

  /**
   * `owner` is the client process that asked (a daemon's request): its Ctrl-C cancels this build,
   * whether it runs or still waits behind another (a watch batch's).
   */
  async build(input: Input<typeof ops.build>, opts: { deferGraphFile?: boolean; paths?: string[]; warm?: boolean; owner?: number } = {}): Promise<Output<typeof ops.build>> {
    const a = this.parse(ops.build, input);
    this.refreshConfig(true);
    // A build naming a backend moves the project to it; later commands follow (`.codemem/store.json`).
    const base = a.backend !== undefined || a.db_url !== undefined ? resolveConfig(this.root, { ...this.opts.flags, backend: a.backend ?? this.cfg.store.backend, dbUrl: a.db_url }) : this.cfg;
    const cfg = { ...base, build: { ...base.build, batchSize: a.batch_size ?? base.build.batchSize, excludeSecrets: a.exclude_secrets ?? base.build.excludeSecrets } };
    const r = await this.queue.run(opts.owner, async (report) => {
      const moved = cfg.store.backend !== this.cfg.store.backend || cfg.store.dbUrl !== this.cfg.store.dbUrl || cfg.store.schema !== this.cfg.store.schema;
      if (moved) this.builder.reset(); // the warm state describes the other backend's index
      // A user's build (the daemon's own pass deferGraphFile) checks the index's pages first: a save's would pay for it each time.
      let r = await this.builder.build(cfg, { force: a.force, optimize: a.optimize, deferGraphFile: opts.deferGraphFile, paths: opts.paths, warm: opts.warm, check: !opts.deferGraphFile }, (p) => {
        report(p);
        this.opts.onProgress?.(p);
      });
      // In-process (tests, benchmarks, no daemon) a build answers complete: its fill is awaited, its time kept as answerable_s.
      if (!this.opts.daemon && r.filling?.length) r = await this.completed(r);
      recordStoreChoice(this.root, cfg.store);
      if (moved) {
        this.cfg = base;
        await this.invalidate();
      } else await this.afterBuild(r);
      this.built = true;
      // The repository's history teaches co-change: asked for, it is read before the answer;
      // otherwise new commits are read in the background, after the build has answered.
      const { historyMaxFiles: maxFiles, historyHalfLife: file, historyProjectHalfLife: project } = this.cfg.synapses;
      const halfLife = { file, project };
      if (a.history !== undefined) return { ...r, history: await this.memory.learnHistory({ commits: a.history, maxFiles, halfLife, reread: true }) };
      this.memory.learnInBackground({ commits: this.cfg.synapses.historyCommits, maxFiles, halfLife });
      return r;
    });
    return { ...r, skipped: r.skipped.slice(0, 50) };
  }

  /** The complete result of a build answered before its fill: the fill's, with the time it was answerable. */
  private async completed(answerable: BuildResult): Promise<BuildResult> {
    let complete: BuildResult | undefined;
    const told = this.builder.onFilled;
    this.builder.onFilled = (c) => {
      complete = c;
      told?.(c);
    };
    try {
      await this.builder.filled?.();
    } finally {
      this.builder.onFilled = told;
    }
    return complete ? { ...complete, answerable_s: answerable.time_elapsed } : answerable;
  }

  /** The running build's phase, for `codemem build`'s progress bar (via the daemon's status). */
  get buildProgress(): (BuildProgress & { started_at: string }) | undefined {
    return this.queue.progress;
  }

  /** Stops a client's build (or, without `owner`, the running one) before its write; see BuildQueue.cancel. */
  cancelBuild(owner?: number): boolean {
    return this.queue.cancel(owner);
  }

  /** Brings warm readers up to date after a build (see Readers.afterBuild); freshness is asked again. */
  private async afterBuild(r: Pick<BuildResult, "changed_paths" | "rows_changed" | "reclustered">): Promise<void> {
    this.fresh.forget();
    await this.readers.afterBuild(r);
  }

  /** Drops the warm reader after the index changed underneath (see Readers.invalidate). */
  invalidate(opts: { now?: boolean } = {}): Promise<void> {
    this.fresh.forget();
    return this.readers.invalidate(opts);
  }

  /**
   * Answers' freshness comes from the watcher from now on (it has caught up with the disk): no walk
   * of the tree on the answer path. `pending` answers undefined when the watcher cannot vouch (it is
   * being replaced, or its last batch failed); then the tree is walked as without one.
   */
  watchWith(pending: () => string[] | undefined): void {
    this.fresh.watchWith(pending);
  }

  /**
   * Files changed on disk since the last build, what the reader is still loading, and what the last
   * build is still filling in. `used`: the reader that answered (a handover may have swapped readers
   * since: the answer's freshness is its reader's).
   */
  async freshness(used?: Retriever): Promise<FreshnessT> {
    const r = used ?? (await this.retriever());
    const warming = r.warming.size ? { warming: [...r.warming] } : {};
    const filling = r.filling.length ? { filling: r.filling } : {};
    return { ...(await this.fresh.of(r, this.cfg)), ...warming, ...filling };
  }

  /** Starts listing the tree on another thread: a daemon calls it as it opens its reader. */
  prefetchFreshness(): void {
    this.fresh.prefetch(this.cfg);
  }

  markChanged(): void {
    this.fresh.markChanged();
  }

  async stats(input: Input<typeof ops.stats>): Promise<Output<typeof ops.stats>> {
    this.parse(ops.stats, input);
    // The index as last built, not the replaced one still answering during a handover.
    const r = await this.readers.latest();
    const m = r.meta;
    return {
      node_count: r.nodeCount,
      community_count: r.communities.length,
      last_build: m.built_at ?? "",
      edge_count: Number(m.edge_count ?? 0),
      file_count: r.files.size,
      source_tokens: Number(m.total_tokens ?? 0),
      backend: r.store.backend,
      index_path: r.store.location,
      index_bytes: await r.store.sizeBytes(),
      synapse_store: stateDirs(this.root).synapseDb,
      graph_source: m.graph_source ?? "builtin",
      embedder: m.embedder ?? "",
      ranker: rankerOf(r),
      unsupported: unsupportedOf(m),
      freshness: await this.freshness(r),
    };
  }

  private async checkEmbedder(): Promise<Embedder> {
    const e = await this.embedder();
    const r = await this.retriever();
    const built = r.meta.embedder;
    // Vectors of an earlier built-in embedder (codemem was upgraded): answers are lexical, and say so,
    // until the next build re-embeds them (a daemon's catch-up build after its start does).
    const upgrade = !!built && isBuiltinUpgrade(built, e.id);
    r.staleVectors = upgrade;
    if (built && built !== e.id && !upgrade) {
      throw new CodememError("INDEX_EMBEDDER_MISMATCH", `The index was built with ${built} but ${e.id} is configured; rebuild with \`codemem build --force\` or configure the original embedder.`);
    }
    return e;
  }

  async search(input: Input<typeof ops.search>): Promise<Output<typeof ops.search>> {
    const a = this.parse(ops.search, input);
    const e = await this.checkEmbedder();
    const r = await this.answering();
    const hits = await r.search(a.query, e, a.limit, this.recall(r), a.group_by);
    const score = (x: number) => Math.round(x * 1e5) / 1e5;
    return {
      results: hits.map((h) => ({
        id: h.node.id,
        name: h.node.name,
        type: h.node.type,
        file_path: h.node.file_path,
        line_start: h.node.line_start,
        line_end: h.node.line_end,
        score: score(h.score),
        community: h.node.community,
        qualified_name: h.node.qualified_name,
        signature: h.node.signature,
        description: h.node.description,
        via: h.via,
        is_test: r.isTest(h.node.file_path),
        ...(r.roleOf(h.node.file_path) === "source" ? {} : { role: r.roleOf(h.node.file_path) }),
        ...(h.also ? { also: h.also.map((x) => ({ id: x.node.id, qualified_name: x.node.qualified_name, type: x.node.type, line_start: x.node.line_start, line_end: x.node.line_end, score: score(x.score) })) } : {}),
      })),
      ranker: r.rankerId(),
      freshness: await this.freshness(r),
    };
  }

  async query(input: Input<typeof ops.query>): Promise<Output<typeof ops.query>> {
    const a = this.parse(ops.query, input);
    const e = await this.checkEmbedder();
    const r = await this.answering();
    const budget = a.budget ?? this.cfg.query.budget;
    const hits = await r.search(a.question, e, 40, this.recall(r));
    const freshness = await this.freshness(r);
    const out = await assembleQuery(r, hits, budget, freshness, a.question, this.memory.coChangePartners());
    const sourceTokens = Number(r.meta.total_tokens ?? 0);
    return { ...out, ranker: r.rankerId(), tokenizer: TOKENIZER, reduction_ratio: ratio(sourceTokens, out.tokens), source_tokens: sourceTokens, freshness };
  }

  async wakeup(input: Input<typeof ops.wakeup>): Promise<Output<typeof ops.wakeup>> {
    this.parse(ops.wakeup, input);
    const freshness = await this.freshness();
    const read = (rel: string) => fs.promises.readFile(path.join(this.root, rel), "utf8").catch(() => "");
    const out = await assembleWakeup(await this.retriever(), read, this.cfg.query.wakeupBudget, freshness);
    return { ...out, tokenizer: TOKENIZER, freshness };
  }

  /** A file named in a call, as its project path, when it exists and is indexed (else PATH_OUTSIDE_PROJECT, PATH_NOT_FOUND or FILE_NOT_INDEXED). */
  private indexedFile(r: Retriever, file: string): string {
    const rel = toProjectPath(this.root, file);
    if (!fs.existsSync(`${this.root}/${rel}`)) {
      throw new CodememError("PATH_NOT_FOUND", `${file} does not exist in ${this.root}; pass a path inside the project.`, { value: file });
    }
    if (!r.files.has(rel)) {
      throw new CodememError("FILE_NOT_INDEXED", `${rel} is not in the index (not a supported language, excluded, or added since the last build); run \`codemem build\` or check exclude_patterns.`, { value: rel });
    }
    return rel;
  }

  async skeleton(input: Input<typeof ops.skeleton>): Promise<Output<typeof ops.skeleton>> {
    const a = this.parse(ops.skeleton, input);
    const r = await this.retriever();
    const rel = this.indexedFile(r, a.file_path);
    const sk = renderSkeleton(r, rel);
    return { ...sk, tokens: countTokens(sk.outline), file_tokens: r.files.get(rel)?.tokens ?? 0, freshness: await this.freshness() };
  }

  async recursive_query(input: Input<typeof ops.recursiveQuery>): Promise<Output<typeof ops.recursiveQuery>> {
    const a = this.parse(ops.recursiveQuery, input);
    const e = await this.checkEmbedder();
    const r = await this.answering();
    const freshness = await this.freshness();
    const { recursiveQuery } = await import("./retrieve/recursive.js");
    const out = await recursiveQuery(r, e, this.cfg, a.question, a.budget ?? Math.round(this.cfg.query.budget * 1.5), freshness);
    const sourceTokens = Number(r.meta.total_tokens ?? 0);
    return { ...out, tokenizer: TOKENIZER, reduction_ratio: ratio(sourceTokens, out.tokens), source_tokens: sourceTokens, freshness };
  }

  /** Reference documents live in their own index, refreshed (by content hash) before each search. */
  async query_docs(input: Input<typeof ops.queryDocs>): Promise<Output<typeof ops.queryDocs>> {
    const a = this.parse(ops.queryDocs, input);
    // Documents follow the code index's secret policy (recorded by its last build); a change of
    // policy rebuilds the documents index, which only holds derivable data.
    const redact = this.cfg.build.excludeSecrets ?? (await this.retrieverOrUndefined())?.meta.exclude_secrets === "true";
    // Loaded on first use: PDF and DOCX readers are heavy, and most sessions never ask documents.
    const { DocsIndex } = await import("./docs/index.js");
    const policyFile = DocsIndex.fileFor(this.root) + ".redact";
    const previous = fs.existsSync(policyFile) ? fs.readFileSync(policyFile, "utf8").trim() : undefined;
    if (previous !== undefined && previous !== String(redact)) {
      this.docs?.close();
      this.docs = undefined;
      for (const suffix of ["", "-wal", "-shm"]) fs.rmSync(DocsIndex.fileFor(this.root) + suffix, { force: true });
    }
    this.docs ??= DocsIndex.open(this.root, await this.embedder());
    await this.docs.update({ ...this.cfg, build: { ...this.cfg.build, excludeSecrets: redact } });
    writeFileAtomic(policyFile, String(redact));
    const r = await this.docs.search(a.question, a.limit, a.budget);
    return { ...r, tokenizer: TOKENIZER, documents_indexed: this.docs.documentsIndexed(), skipped: this.docs.skipped() };
  }

  async trace(input: Input<typeof ops.trace>): Promise<Output<typeof ops.trace>> {
    const a = this.parse(ops.trace, input);
    const r = await this.retriever();
    const { resolveSymbol, traceCalls, entryOf } = await import("./retrieve/trace.js");
    const start = resolveSymbol(r, a.symbol);
    const levels = await traceCalls(r, start, a.direction, a.depth);
    return { symbol: entryOf(start), direction: a.direction, levels, freshness: await this.freshness() };
  }

  /** What changing symbols, files or the working tree since a git ref affects (docs/graph-questions.md). */
  async impact(input: Input<typeof ops.impact>): Promise<Output<typeof ops.impact>> {
    const a = this.parse(ops.impact, input);
    if (!a.symbols?.length && !a.files?.length && a.diff === undefined) {
      throw new CodememError("INVALID_ARGUMENT", "codemem_impact needs `symbols`, `files` or `diff` (a git ref such as HEAD) to say what changed.");
    }
    const r = await this.retriever();
    const [{ resolveSymbol, entryOf }, { impactOf, seedsOfDiff }] = await Promise.all([import("./retrieve/trace.js"), import("./retrieve/impact.js")]);
    const seeds = (a.symbols ?? []).map((s) => resolveSymbol(r, s));
    const files = (a.files ?? []).map((f) => this.indexedFile(r, f));
    // A file stands for its module in the answer; all its definitions are walked.
    const shown = [...seeds, ...files.flatMap((f) => r.nodesOf(f).filter((n) => n.type === "module"))];
    for (const f of files) seeds.push(...r.nodesOf(f));
    let changed: string[] = [];
    if (a.diff !== undefined) {
      const { changedSince } = await import("./retrieve/git-diff.js");
      const lines = await changedSince(this.root, a.diff);
      changed = [...lines.keys()].sort();
      const touched = seedsOfDiff(r, lines);
      seeds.push(...touched);
      shown.push(...touched);
      files.push(...changed.filter((f) => r.files.has(f)));
    }
    const unique = [...new Map(seeds.map((s) => [s.id, s])).values()];
    const head = { seeds: [...new Map(shown.map((s) => [s.id, s])).values()].slice(0, IMPACT_SEEDS_SHOWN).map(entryOf), changed_files: changed.slice(0, IMPACT_SEEDS_SHOWN) };
    const freshness = await this.freshness();
    const rest = countTokens(JSON.stringify({ ...head, freshness })) + 40;
    const partners = this.memory.historyPartners();
    const out = await impactOf(r, { seeds: unique, files: [...new Set(files)], depth: a.depth, budget: Math.max(0, (a.budget ?? 1000) - rest), partners });
    return { ...head, ...out, freshness };
  }

  /** The synapse store (.codemem/synapses.db); only the daemon's engine writes it. */
  synapses(): SynapseStore {
    return this.memory.store();
  }

  /** Spreading activation for ranking, when configured and a store exists. */
  private recall(r: Retriever): Recall | undefined {
    return this.cfg.query.synapseRecall ? this.memory.recall(r) : undefined;
  }

  async synaptic_neighbors(input: Input<typeof ops.synapticNeighbors>): Promise<Output<typeof ops.synapticNeighbors>> {
    const a = this.parse(ops.synapticNeighbors, input);
    if (!a.query && !a.node_ids?.length) throw new CodememError("INVALID_ARGUMENT", "codemem_synaptic_neighbors needs `query` or `node_ids` to choose the seed nodes.");
    const r = await this.retriever();
    const nodes = a.node_ids?.length ? a.node_ids.map((id) => (r.byId.has(id) ? id : this.memory.fileNode(id))).filter((id): id is string => !!id) : (await r.search(a.query!, await this.checkEmbedder(), 5)).map((h) => h.node.id);
    // Git co-change is learned between files: a symbol seeds its file (the module node) too, or a
    // query's hits (symbols) and a symbol asked for would never reach the history.
    const seeds = [...new Set(nodes.flatMap((id) => [id, r.byId.get(id)?.file_path ?? id]))];
    const store = this.memory.existing();
    const found = store?.neighbors(seeds, { depth: a.depth as 1 | 2, k: a.k }) ?? [];
    const brief = (id: string) => {
      const m = r.byId.get(id)!;
      return { id: m.id, name: m.qualified_name, type: m.type, file_path: m.file_path, line_start: m.line_start, line_end: m.line_end };
    };
    const neighbors = found.flatMap((n) => {
      if (!r.byId.has(n.id) || !store) return [];
      const evidence = store.evidence(n.via, n.id);
      return [{ ...brief(n.id), activation: Math.round(n.activation * 1e4) / 1e4, depth: n.depth, via: n.via, reason: "associated" as NeighbourReason, ...evidence }];
    });
    // Associations run out (a file new to the history, few partners): the seeds' tests by name, then
    // what the project changes lately. Seeds that are not symbols are files, indexed yet or not.
    const files = seeds.filter((s) => r.files.has(s) || !r.byId.has(s));
    const pairsOf = (s: string) => (files.includes(s) ? testPairs(s, r.files.keys(), r.isTest) : []);
    const recent = () => store?.recentlyChanged(a.k + seeds.length + neighbors.length) ?? [];
    const more = fillAfter(neighbors.map((n) => n.id), a.k, seeds, pairsOf, recent, (f) => r.files.has(f) && r.byId.has(f));
    for (const m of more) neighbors.push({ ...brief(m.file), activation: 0, depth: 0, via: m.via, reason: m.reason, co_activations: 0, commits: 0, last_at: null });
    return { seeds, neighbors };
  }

  async synapse_stats(input: Input<typeof ops.synapseStats>): Promise<Output<typeof ops.synapseStats>> {
    const a = this.parse(ops.synapseStats, input);
    const st = this.synapses().stats(a.top);
    const describe = await this.memory.describer();
    return {
      ...st,
      top_hubs: st.top_hubs.map((h) => {
        const d = describe(h.id);
        return { ...h, ...(d ? { name: d.name, file_path: d.file_path } : {}) };
      }),
      history: this.synapses().historyStats(),
      store: stateDirs(this.root).synapseDb,
    };
  }

  async synapse_decay(input: Input<typeof ops.synapseDecay>): Promise<Output<typeof ops.synapseDecay>> {
    const a = this.parse(ops.synapseDecay, input);
    const r = this.synapses().decay(a.ticks > 0 ? { ticks: a.ticks } : {});
    if (this.sideEffects) appendEvent(this.root, { source: "daemon", kind: "decay", ticks: r.ticks, pruned: r.pruned });
    return { ...r, edges: this.synapses().stats(1).edges };
  }

  async export_synapse_memory(input: Input<typeof ops.exportSynapseMemory>): Promise<Output<typeof ops.exportSynapseMemory>> {
    const a = this.parse(ops.exportSynapseMemory, input);
    const { exportSynapseMemory, renderSynapseMarkdown } = await import("./synapse/export.js");
    const markdown = renderSynapseMarkdown(this.synapses(), await this.memory.describer(), { limit: a.limit });
    const { written } = exportSynapseMemory(this.root, markdown);
    return { written, tokens: countTokens(markdown), markdown };
  }

  /** Hooks report touched files: their module nodes and the symbols cited for them reinforce together. */
  async hook_event(input: Input<typeof ops.hookEvent>): Promise<Output<typeof ops.hookEvent>> {
    const a = this.parse(ops.hookEvent, input);
    return this.memory.hookEvent(a.files, a.event);
  }

  /** A watch batch: the files changed together are associated. */
  recordWatchBatch(files: string[]): Promise<void> {
    return this.memory.watchBatch(files);
  }

  async benchmark(input: Input<typeof ops.benchmark>): Promise<Output<typeof ops.benchmark>> {
    const a = this.parse(ops.benchmark, input);
    const [{ runBenchmark }, { questionList }] = await Promise.all([import("./retrieve/benchmark.js"), import("../shared/benchmark-questions.js")]);
    return runBenchmark(this, a.questions ? questionList(a.questions, "questions") : a.questions_file, a.limit);
  }

  /** Runs an operation by name with raw (unvalidated) input; `ctx.owner` is the client process that asked (see build). */
  async dispatch(name: string, input: unknown, ctx: { owner?: number } = {}): Promise<unknown> {
    const op = ops.operationByName(name);
    if (!op) throw new CodememError("UNKNOWN_OPERATION", `Unknown operation "${name}"; known: ${ops.OPERATIONS.map((o) => o.name).join(", ")}.`);
    if (op.name !== "build") this.refreshConfig(false);
    const fn = (this as unknown as Record<string, (i: unknown, ctx: { owner?: number }) => Promise<unknown>>)[op.name];
    // What crosses the boundary is exactly the declared output: undeclared fields are dropped.
    // Only build takes a second argument: who asked, so that their Ctrl-C finds it.
    const result = op.output.parse(await fn.call(this, input, { owner: ctx.owner }));
    // Hebbian co-activation: the code opened together is associated, and is the session's focus.
    if (REINFORCING.has(op.name)) this.memory.reinforce(nodesOf(result).slice(0, 12), `tool:${op.name}`);
    if (op.name === "build" && this.sideEffects) {
      const b = result as Output<typeof ops.build>;
      appendEvent(this.root, { source: "daemon", kind: "build", files_changed: b.files_changed, files_removed: b.files_removed, ms: Math.round(b.time_elapsed * 1000) });
    }
    return result;
  }

  get sideEffects(): boolean {
    return this.opts.sideEffects !== false;
  }

  /** The daemon stops: see BuildQueue.stop. */
  stopBuilds(graceMs: number): Promise<void> {
    return this.queue.stop(graceMs);
  }

  async close(): Promise<void> {
    await this.queue.settled();
    await this.memory.close();
    await this.builder.close();
    this.fresh.forget();
    await this.readers.close();
    if (this.opts.daemon && this.cfg.store.backend === "local") {
      // Its readers could not fold the log in (a full disk after a build's commit left it): the stop does.
      try {
        const { LocalStore } = await import("./store/local.js");
        if (LocalStore.foldLog(stateDirs(this.root).dbFile)) log.info("folded the index's log into it at stop");
      } catch (err) {
        log.warn("the index's log stays beside it (folded in by the next build)", { error: (err as Error).message });
      }
    }
    this.docs?.close();
    const e = this.embedderP ? await this.embedderP.catch(() => undefined) : undefined;
    await e?.close?.();
  }
}

/** Seeds and changed files an impact answer lists (all of them are walked). */
const IMPACT_SEEDS_SHOWN = 20;

/** The ranker's identity for stats: a model that does not load is named by its error code, so stats still answer. */
function rankerOf(r: Retriever): string {
  try {
    return r.rankerId();
  } catch (err) {
    return `unavailable (${(err as { code?: string }).code ?? "INTERNAL"})`;
  }
}

function ratio(source: number, used: number): number {
  return used > 0 ? Math.round((source / used) * 10) / 10 : 0;
}
