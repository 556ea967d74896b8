import { log } from "../../shared/log.js";
import { fileStamp } from "../../shared/paths.js";
import { collectWhenIdle } from "../../shared/memory.js";
import type { Embedder } from "../index/embed/embedder.js";
import type { FileRole } from "../index/file-role.js";
import { askedText, seeksTests, testClassifier, type TestClassifier } from "../index/test-code.js";
import { contentWords, stem } from "../index/text.js";
import type { GraphCommunity, GraphEdge } from "../index/types.js";
import type { CatalogNode, FileRow, IndexStore, LexicalHit } from "../store/types.js";
import { featureVector, type Signals } from "./features.js";
import { NameIndex, WEAK, type Mention } from "./mentions.js";
import { HAND_RANKER_ID, LearnedRanker, SHIPPED_MODEL, type RankerKind } from "./ranker.js";
import type { Focus } from "../synapse/focus.js";

/** A node as kept in memory for ranking; code is fetched on demand. */
export type MemNode = CatalogNode;

export interface Hit {
  node: MemNode;
  score: number;
  via: string[];
  /** Grouped by file: the file's next best hits. */
  also?: Hit[];
}

/** How search lists what it found: the best nodes (a file's further nodes discounted), or the best files with their best nodes. */
export type GroupBy = "node" | "file";

/**
 * Weights of the three candidate lists in the fused score. Each list's scores are first scaled to
 * [0, 1] within the question (a convex combination of normalised scores): unlike reciprocal rank
 * fusion it keeps how far the best match stands out (on the tuning questions, MRR 0.865 → 0.882).
 */
const LEXICAL_WEIGHT = 1.0;
const VECTOR_WEIGHT = 0.7;
/** Whole-file BM25, shared by every node of the file (hierarchical evidence). */
const FILE_WEIGHT = 1.0;
const CANDIDATES = 120;
/** Words of a question used by lexical search (a long question's most telling ones). */
const TERMS = 24;
const FILE_CANDIDATES = 30;
/**
 * A word is common (Retriever.common) beyond this share of the nodes and this many of them: only then
 * does scoring its rows cost (small projects answer in a few ms, and leaving rows out there moved
 * rankings of the small language sets).
 */
const COMMON_SHARE = 0.05;
const COMMON_MIN_NODES = 1000;
/**
 * A number of one or two digits (`3` of `CodememSaved3`, `8` of `utf8`) is in nearly every file's text,
 * though rarely in names (so not counted common by the nodes' frequencies): it only re-ranks. At 300K
 * nodes a whole-file query with a `3` beside rare words took 37 ms, 2.4 ms without it.
 */
const SHORT_NUMBER = /^[0-9]{1,2}$/;
/** Share of the best hit's score a fully activated synaptic neighbour receives. */
const RECALL_WEIGHT = 0.15;
/** Share of the best hit's score a candidate in the file most worked in lately gains (fixed before measuring). */
const FOCUS_WEIGHT = 0.3;
/** Synapse recall for one question: spreading activation from its best hits, and the sessions' focus (file → [0, 1]). */
export interface Recall {
  neighbors: (seeds: string[]) => Map<string, number>;
  focus?: Focus;
}
/** Share of the best fused score a node the question names surely (strength 1) gains. */
const MENTION_WEIGHT = 0.7;
/** Share of a documented method's score its undocumented overrides get: just below it, so a base the question names stays first. */
const OVERRIDE_SHARE = 0.95;
/** Factor by which each earlier hit of the same file discounts the next one in the result order. */
const FILE_REPEAT = 0.7;
/**
 * Factor on the final score of test code when the question is not about tests. Measured with the
 * corpora's real tests put back (questions, dev and heldout), search MRR by factor — go-net with
 * its 142 *_test.go files (86 questions): 1 → 0.838 (a test first for 6), 0.8 → 0.858,
 * 0.6 → 0.864, 0.5 to 0.1 → 0.865; python-stdlib with Debian's libpython3.11-testsuite (82
 * questions): 1 → 0.834 (a test first for 13), 0.8 → 0.894, 0.6 to 0.2 → 0.911. 0.5 is the
 * largest factor at both plateaus: relevant tests stay in the list (0.58 and 0.73 per top 10;
 * 0.07 and 0.04 at 0.2) for a caller who wants them.
 */
export const TEST_FACTOR = 0.5;

/**
 * Hits in files that copy or serve the project's code rather than being it (file-role.ts: generated
 * copies, vendored code, benchmarks, build scripts, examples) rank below its own source, as tests do, unless the
 * question asks for that kind of file or names the hit. Not measured on the benchmark: TEST_FACTOR's value.
 */
export const ROLE_FACTOR = TEST_FACTOR;
/** C and C++ headers: the files whose prototypes declare definitions elsewhere. */
const HEADER = /\.(h|hh|hpp|hxx|h\+\+)$/i;
const ROLE_ASKED: Record<Exclude<FileRole, "source">, RegExp> = {
  "generated-copy": /amalgamat|single[- ]?header|single_include|generated/i,
  vendored: /third[ _-]?party|vendor|bundled|\bdeps\b|\bextern/i,
  bench: /\bbench/i,
  "build-script": /\bbuild\b|setup\.py|AssemblyInfo|InternalsVisibleTo|build\.rs|gradle|package\.swift|mix\.exs|\b(jest|babel|karma|eslint|prettier|postcss|tailwind|vitest|playwright|webpack|rollup|vite|esbuild)\b/i,
  // Not the example.com of a URL in a report.
  example: /\b(examples?|samples?|demos?|recipes?|snippets?|docs?|documentation)\b(?!\.(com|org|net)\b)/i,
};

/**
 * The warm, read-only view of one index used to answer questions: the catalog (ranking metadata of
 * every node), the graph's adjacency, communities and file rows stay in memory; lexical and vector
 * candidates and code come from the store, whatever its backend.
 */
export class Retriever {
  readonly byId = new Map<string, MemNode>();
  private readonly byRowid = new Map<number, MemNode>();
  /** Nodes by file, in rowid order: what a save replaces, and a file's outline. */
  private readonly byFile = new Map<string, MemNode[]>();
  private allNodes?: MemNode[];
  /** Nodes of each language and the symbols (non-module nodes), kept with the lookups. */
  private readonly languageCounts = new Map<string, number>();
  private symbolCount = 0;
  private names = new NameIndex([]);
  communities: GraphCommunity[] = [];
  meta: Record<string, string> = {};
  /** Indexed files by path (size and mtime answer freshness; tokens the baselines). */
  files = new Map<string, FileRow>();
  /** Which files are test code (the project's `[index] test_patterns` set by the engine). */
  isTest: TestClassifier = testClassifier();
  private roles?: { of: Record<string, string>; map: Record<string, FileRole> };

  /** Candidates declared by candidate C/C++ headers (`declares` edges), with the best declaring header's score. */
  private async declaredScores(scores: Map<string, Hit>): Promise<Map<MemNode, number>> {
    const out = new Map<MemNode, number>();
    const headers = [...scores.values()].filter((h) => h.node.type === "module" && HEADER.test(h.node.file_path));
    if (headers.length === 0) return out;
    for (const e of await this.store.neighbors(headers.map((h) => h.node.id))) {
      const def = e.type === "declares" && scores.has(e.target) ? this.byId.get(e.target) : undefined;
      const s = scores.get(e.source)?.score ?? 0;
      if (def && s > (out.get(def) ?? 0)) out.set(def, s);
    }
    return out;
  }

  /** A file's role as the last build recorded it (meta `file_roles`). */
  roleOf(file: string): FileRole {
    if (this.roles?.of !== this.meta) {
      let map: Record<string, FileRole> = {};
      try {
        map = JSON.parse(this.meta.file_roles ?? "{}");
      } catch {
        // an index from before roles: every file is source
      }
      this.roles = { of: this.meta, map };
    }
    return this.roles.map[file] ?? "source";
  }

  /** Parts still loading after a quick open (`background`): answers go on without them and say so. */
  readonly warming = new Set<string>();
  /** Refreshes applied while the term weights and names were built from the opening catalog. */
  private missed?: { gone: MemNode[]; fresh: MemNode[] }[];

  private constructor(readonly store: IndexStore) {}

  /**
   * Opens the index's catalog. Term weights, the names questions mention and the backend's search
   * caches (the local vector matrix) are built in slices after it; with `background` the reader is
   * returned before they are ready (a daemon's first answers after a start), else once they are.
   * `gentle`: the catalog too is read in slices (a reader opened beside one that answers meanwhile).
   */
  static async open(store: IndexStore, opts: { background?: boolean; gentle?: boolean; warmDelayMs?: number } = {}): Promise<Retriever> {
    const r = new Retriever(store);
    const all = await store.catalog(undefined, { slice: opts.gentle ? GENTLE_CATALOG_SLICE : undefined });
    r.patchNodes([], all);
    await r.reloadRows();
    const warm = r.warm(all, opts.background ? (opts.warmDelayMs ?? WARM_DELAY_MS) : 0);
    r.warmed = warm.catch(() => undefined);
    if (opts.background) warm.catch((err) => log.warn("warming the index reader failed; answers go on without what it lacks", { error: (err as Error).message }));
    else await warm;
    return r;
  }

  /** Settles when the warming started at open has ended (loaded or failed). */
  private warmed: Promise<void> = Promise.resolve();
  /** Settles when its term weights and names are built (the vectors may still be loading). */
  private wordsWarmed: Promise<void> = Promise.resolve();

  /**
   * Waits, at most `ms`, for the term weights, names and vectors to load: an answer given while they
   * load is lexical, and differs from the same question's answer a second later. While a build's fill
   * writes the vectors, answers are lexical whatever is loaded: only the words are waited for (the
   * first answer after a full build of Go's src waited 0.25 s more for a vector thread with nothing to use).
   */
  async whenWarm(ms: number): Promise<void> {
    const words = this.filling.includes(FILLING_VECTORS);
    if (![...this.warming].some((p) => p !== REEMBEDDING && !(words && p === VECTOR_SEARCH))) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((r) => (timer = setTimeout(r, ms)));
    await Promise.race([words ? this.wordsWarmed : this.warmed, late]);
    clearTimeout(timer);
  }

  private async warm(catalog: MemNode[], delayMs: number): Promise<void> {
    const parts = ["term weights", "identifier mentions", VECTOR_SEARCH];
    for (const p of parts) this.warming.add(p);
    let wordsDone!: () => void;
    this.wordsWarmed = new Promise<void>((r) => (wordsDone = r));
    this.missed = [];
    if (delayMs > 0) await new Promise<void>((r) => setTimeout(r, delayMs));
    // The vectors load on their own thread beside the words (one after the other, a start's reader on
    // Go's src was warm 3.2 s after its catalog, with them side by side 1.0 s).
    const vectors = Promise.resolve(this.store.warm?.()).finally(() => this.warming.delete(parts[2]));
    // Awaited below; if the words fail first, its rejection is not left unhandled.
    vectors.catch(() => {});
    const df = new Map<string, number>();
    const names = new NameIndex([]);
    try {
      for (let i = 0; i < catalog.length; i += WARM_SLICE) {
        const slice = catalog.slice(i, i + WARM_SLICE);
        countTerms(df, slice, 1);
        names.add(slice);
        await new Promise<void>((r) => setImmediate(r));
      }
      for (const { gone, fresh } of this.missed) {
        countTerms(df, gone, -1);
        countTerms(df, fresh, 1);
        names.remove(gone);
        names.add(fresh);
      }
      this.df = df;
      this.names = names;
    } finally {
      this.missed = undefined;
      this.warming.delete(parts[0]);
      this.warming.delete(parts[1]);
      wordsDone();
    }
    try {
      await vectors;
    } finally {
      collectWhenIdle();
    }
  }

  /**
   * The index's vectors are an earlier built-in embedder's (codemem was upgraded): searches leave them
   * out, and the freshness names them as not ready, until a build re-embeds them.
   */
  set staleVectors(stale: boolean) {
    if (stale) this.warming.add(REEMBEDDING);
    else this.warming.delete(REEMBEDDING);
  }

  /** What a whole-tree build is still filling in after it became answerable (meta `filling`, see build.ts): vectors, token totals. */
  get filling(): string[] {
    return this.meta.filling ? this.meta.filling.split(",") : [];
  }

  /** Languages (sorted) and symbol count of the index, for the answer's heading; fixed between refreshes. */
  summary = { languages: [] as string[], symbols: 0 };

  /**
   * Every node (opening catalog order, re-indexed files' nodes last), made when asked for: a save
   * patches the lookups in proportion to its files, and only whole-index readers (the wakeup's key
   * symbols, the benchmark) pay for the list.
   */
  get nodes(): MemNode[] {
    this.allNodes ??= [...this.byRowid.values()];
    return this.allNodes;
  }

  get nodeCount(): number {
    return this.byRowid.size;
  }

  /** A file's nodes, in index order. */
  nodesOf(file: string): MemNode[] {
    return this.byFile.get(file) ?? [];
  }

  /** The lookups drop `gone` and take `fresh`, the rest stands. */
  private patchNodes(gone: MemNode[], fresh: MemNode[]): void {
    this.allNodes = undefined;
    const count = (n: MemNode, sign: 1 | -1) => {
      const c = (this.languageCounts.get(n.language) ?? 0) + sign;
      if (c > 0) this.languageCounts.set(n.language, c);
      else this.languageCounts.delete(n.language);
      if (n.type !== "module") this.symbolCount += sign;
    };
    for (const n of gone) {
      this.byId.delete(n.id);
      this.byRowid.delete(n.rowid);
      this.byFile.delete(n.file_path);
      count(n, -1);
    }
    for (const n of fresh) {
      this.byId.set(n.id, n);
      this.byRowid.set(n.rowid, n);
      push(this.byFile, n.file_path, n);
      count(n, 1);
    }
    this.summary = { languages: [...this.languageCounts.keys()].sort(), symbols: this.symbolCount };
  }

  /** Re-reads the small tables (meta, communities, file rows): all a build that changed no node moves. */
  async reloadRows(): Promise<void> {
    this.meta = await this.store.meta();
    this.communities = await this.store.communities({ files: false });
    this.files = new Map((await this.store.files()).map((f) => [f.path, f]));
  }

  /**
   * Applies a small build without a full reload: the nodes of `files` and the rows of `rows` are
   * re-read, and everything else is kept (nodes of other files keep their community: a build that
   * re-clusters reloads the reader instead).
   */
  async refresh(files: string[], rows: string[]): Promise<void> {
    const changed = new Set(files);
    const fresh = await this.store.catalog(files);
    await this.store.refresh(files);
    const gone = [...changed].flatMap((f) => this.nodesOf(f));
    // While names and term weights are built from the opening catalog, changes wait to be replayed on them.
    if (this.missed) this.missed.push({ gone, fresh });
    else {
      countTerms(this.df, gone, -1);
      countTerms(this.df, fresh, 1);
      this.names.remove(gone);
      this.names.add(fresh);
    }
    this.patchNodes(gone, fresh);
    for (const f of rows) this.files.delete(f);
    for (const row of await this.store.files(rows)) this.files.set(row.path, row);
    this.meta = await this.store.meta();
    this.communities = await this.store.communities({ files: false });
  }

  /** Document frequencies of stems over the catalog, for `termWeight`; patched per file on refresh. */
  private df = new Map<string, number>();

  /**
   * How telling a word is in this project: inverse document frequency over the nodes' names,
   * signatures, docstrings and paths ("observable" says little in rxjs, "debounce" much).
   */
  termWeight(): (stem: string) => number {
    const N = this.nodeCount;
    const unseen = Math.log(N + 1) + 1;
    return (w) => {
      const d = this.df.get(w);
      return d === undefined ? unseen : Math.log((N + 1) / (d + 1)) + 1;
    };
  }

  /** The graph around these nodes (imports left out), from the index: nothing of it stays in memory. */
  async neighborsOf(ids: string[]): Promise<Map<string, { id: string; type: string }[]>> {
    return adjacent(await this.store.neighbors(ids), ids);
  }

  /**
   * Undocumented methods overriding a documented seed method in a direct subclass (`App.add_url_rule`
   * for `Scaffold.add_url_rule`): they carry out the contract the base's doc describes, so a candidate
   * among them answers as the base does (OVERRIDE_SHARE of its score), as Python's `inspect.getdoc`
   * and Javadoc give them the base's doc. `bases` are documented method seeds, `edges` include their classes'.
   */
  private overrides(bases: Hit[], edges: GraphEdge[]): Map<MemNode, number> {
    const out = new Map<MemNode, number>();
    for (const s of bases) {
      for (const e of edges) {
        if (e.type !== "inherits" || e.target !== s.node.parent) continue;
        for (const m of this.nodesOf(this.byId.get(e.source)?.file_path ?? "")) {
          if (m.parent === e.source && m.name === s.node.name && !m.docstring.trim()) out.set(m, Math.max(out.get(m) ?? 0, s.score * OVERRIDE_SHARE));
        }
      }
    }
    return out;
  }

  code(n: MemNode): Promise<string> {
    return this.store.code(n.rowid);
  }

  /**
   * The words a question's lexical search uses: all of a short question's (up to TERMS); of a longer
   * one, the TERMS most telling of the words the project has (idf × (1 + ln tf)), so the prose of a
   * pasted report neither slows the full-text search nor outvotes its rare words.
   */
  private words(query: string): string[] {
    const counts = new Map<string, number>();
    for (const w of contentWords(query)) counts.set(w, (counts.get(w) ?? 0) + 1);
    // Until the term weights are loaded after a start, the first words stand in for the most telling.
    if (counts.size <= TERMS || this.warming.has("term weights")) return [...counts.keys()].slice(0, TERMS);
    const weight = this.termWeight();
    const scored = [...counts].flatMap(([w, c]) => (this.df.has(stem(w)) ? [{ w, s: weight(stem(w)) * (1 + Math.log(c)) }] : []));
    return scored.sort((a, b) => b.s - a.s || (a.w < b.w ? -1 : a.w > b.w ? 1 : 0)).slice(0, TERMS).map((x) => x.w);
  }

  /** Module nodes of the files matching by whole-file BM25, with their normalised scores. */
  async fileMatches(q: LexicalQuery): Promise<Scored[]> {
    return this.scored(normalised(await this.store.lexicalFiles(q.words, FILE_CANDIDATES, q.common), 0));
  }

  /** Nodes matching by BM25 over their fields, with normalised scores. */
  async lexical(q: LexicalQuery): Promise<Scored[]> {
    return this.scored(normalised(await this.store.lexicalNodes(q.words, CANDIDATES, q.common), 0));
  }

  /** A question's words for lexical search, and which of them are common. */
  private lexicalQuery(query: string): LexicalQuery {
    const words = this.words(query);
    return { words, common: this.common(words) };
  }

  /**
   * The words in more than COMMON_SHARE of the nodes, and COMMON_MIN_NODES (by names, signatures,
   * docstrings and paths), and short numbers (SHORT_NUMBER): beside a rarer word they only re-rank,
   * and the rows holding nothing else need not be scored.
   */
  private common(words: string[]): Set<string> {
    // Until the term weights are loaded, only short numbers are known to be common.
    const floor = this.warming.has("term weights") ? Infinity : Math.max(COMMON_SHARE * this.nodeCount, COMMON_MIN_NODES);
    return new Set(words.filter((w) => SHORT_NUMBER.test(w) || (this.df.get(stem(w)) ?? 0) > floor));
  }

  /**
   * Nearest nodes by cosine, normalised against the last candidate's similarity: a cosine has no
   * natural zero, and the 120th neighbour stands for "unrelated" in this question.
   */
  async vector(q: Float32Array): Promise<Scored[]> {
    const near = (await this.store.nearest(q, CANDIDATES)).map((r) => ({ rowid: r.rowid, score: r.sim }));
    return this.scored(normalised(near, near.at(-1)?.score ?? 0));
  }

  private scored(hits: RowScore[]): Scored[] {
    return hits.flatMap(({ rowid, score }) => {
      const node = this.byRowid.get(rowid);
      return node ? [{ node, score }] : [];
    });
  }

  /** Hybrid ranking: normalised BM25, vector and whole-file scores combined, then boosted around strong seeds; ordered by `ranker`'s score. */
  async search(query: string, embedder: Embedder, limit: number, recall?: Recall, groupBy: GroupBy = "node"): Promise<Hit[]> {
    const ranker = this.learned();
    const cands = await this.candidates(query, embedder, recall);
    if (ranker) rerank(cands, ranker);
    const sorted = cands.map((c) => c.hit).sort(byScore);
    return groupBy === "file" ? byFile(sorted, limit) : diversify(sorted, limit);
  }

  /** How answers are ranked (`[query] ranker` and `ranker_model`, set by the engine's readers). */
  rankBy: { kind: RankerKind; model?: string } = { kind: "hand" };
  private model?: { file: string; stamp: string; ranker: LearnedRanker };

  /**
   * The learned ranker when configured, loaded on first use and again when its file changes (a stat
   * per answer); RANKER_MODEL_INVALID when the file is missing or malformed.
   */
  private learned(): LearnedRanker | undefined {
    if (this.rankBy.kind !== "learned") return undefined;
    const file = this.rankBy.model ?? SHIPPED_MODEL;
    const stamp = fileStamp(file);
    if (this.model?.file !== file || this.model.stamp !== stamp) this.model = { file, stamp, ranker: LearnedRanker.load(file) };
    return this.model.ranker;
  }

  /** The identity of what ranks answers: HAND_RANKER_ID, or the learned model's family and file hash. */
  rankerId(): string {
    return this.learned()?.id ?? HAND_RANKER_ID;
  }

  /**
   * Every candidate of a question with the hand ranking's score and the signals each list and rule
   * gave it (features.ts): what search orders, and what scripts/train-ranker.mjs learns from.
   */
  async candidates(query: string, embedder: Embedder, recall?: Recall): Promise<Candidate[]> {
    const qv = embedder.embedQuery ? embedder.embedQuery(query, this.termWeight()) : (await embedder.embed([query]))[0];
    // Until the vectors are loaded after a start (or re-embedded after an upgrade), answers are lexical
    // (and their freshness says so).
    const lq = this.lexicalQuery(query);
    // The vector and whole-file queries are asked first: the local index answers them on a thread of
    // its own while the node query runs here.
    const vectors = !this.warming.has(VECTOR_SEARCH) && !this.warming.has(REEMBEDDING) && !this.filling.includes(FILLING_VECTORS);
    const [vec, files, lex] = await Promise.all([vectors ? this.vector(qv) : [], this.fileMatches(lq), this.lexical(lq)]);
    const scores = new Map<string, Hit>();
    const sig = new Map<string, Signals>();
    const signals = (node: MemNode): Signals => {
      let x = sig.get(node.id);
      if (!x) sig.set(node.id, (x = { node, lexical: 0, vector: 0, file: 0, name: 0, path: 0, graph: 0, override: false, test: false, seeksTests: false, named: false, fileOnly: false, hand: 0, boost: 0 }));
      return x;
    };
    const add = (node: MemNode, s: number, via: string) => {
      const h = scores.get(node.id);
      if (h) {
        h.score += s;
        if (!h.via.includes(via)) h.via.push(via);
      } else scores.set(node.id, { node, score: s, via: [via] });
    };
    for (const { node, score } of lex) {
      add(node, LEXICAL_WEIGHT * score, "lexical");
      signals(node).lexical = score;
    }
    for (const { node, score } of vec) {
      add(node, VECTOR_WEIGHT * score, "vector");
      signals(node).vector = score;
    }
    // File-level evidence: the file's whole-text score lifts every candidate in it, and the file itself.
    const fileScore = new Map(files.map((f) => [f.node.file_path, f.score]));
    for (const h of scores.values()) h.score += FILE_WEIGHT * (fileScore.get(h.node.file_path) ?? 0);
    for (const f of files) {
      if (!scores.has(f.node.id)) {
        add(f.node, FILE_WEIGHT * f.score, "file");
        signals(f.node).fileOnly = true;
      }
    }
    for (const x of sig.values()) x.file = fileScore.get(x.node.file_path) ?? 0;
    // A header's evidence (its prototypes and their comments) counts for the definitions it declares in
    // other files (`declares` edges) that the question found too: the definitions rank, the header stays.
    for (const [def, s] of await this.declaredScores(scores)) add(def, s, "declared");

    // An identifier the question names (`wait_for`, `Response.Write`, `textwrap.dedent`) is the strongest
    // signal it gives: named nodes gain a share of the best fused score on top of their own.
    const best = Math.max(0, ...[...scores.values()].map((h) => h.score));
    const mentions = this.names.find(query);
    for (const m of mentions) {
      add(m.node, best * MENTION_WEIGHT * m.strength, "name");
      const x = signals(m.node);
      x[m.by] = Math.max(x[m.by], m.strength);
    }

    // Graph-aware re-ranking: neighbours of strong seeds (1 hop) gain a share of the seed's score.
    let ranked = [...scores.values()].sort(byScore);
    const top = ranked[0]?.score ?? 0;
    // Synapse recall: code used together with the best hits joins with a share of the top score;
    // the answer's budget is unchanged, so recalled nodes displace the weakest hits.
    if (recall && ranked.length > 0) {
      const recalled = recall.neighbors(ranked.slice(0, 5).map((h) => h.node.id));
      // Activations are relative (weight × damping / √degree): scale so the strongest recall gets RECALL_WEIGHT.
      const peak = Math.max(0, ...recalled.values());
      for (const [id, activation] of recalled) {
        const n = this.byId.get(id);
        if (!n || peak <= 0) continue;
        // Candidates the question already found are re-ranked toward code used with the best hits;
        // nodes it did not find enter at half weight, so they displace only the weakest hits.
        const share = (scores.has(id) ? RECALL_WEIGHT : RECALL_WEIGHT / 2) * (activation / peak);
        add(n, top * share, "synapse");
        signals(n).boost += share;
      }
      // Focus: candidates in the files the sessions under way work in (or that change with them) rise;
      // nothing enters for it, so it only reorders what the question found.
      for (const h of scores.values()) {
        const f = recall.focus?.(h.node.file_path);
        if (f) {
          h.score += top * FOCUS_WEIGHT * f;
          signals(h.node).boost += FOCUS_WEIGHT * f;
          if (!h.via.includes("focus")) h.via.push("focus");
        }
      }
      ranked = [...scores.values()].sort(byScore);
    }
    const seeds = ranked.slice(0, 8);
    const bonus = new Map<string, number>();
    // Documented methods among the seeds: their undocumented overrides (below) answer as they do. One
    // read for the seeds' edges and their classes' (whose subclasses hold the overrides).
    const bases = seeds.filter((s) => s.node.docstring.trim() && CLASSES.has(this.byId.get(s.node.parent ?? "")?.type ?? ""));
    const seedIds = seeds.map((s) => s.node.id);
    const edges = await this.store.neighbors([...new Set([...seedIds, ...bases.map((s) => s.node.parent!)])]);
    const around = adjacent(edges, seedIds);
    for (const s of seeds) {
      for (const nb of around.get(s.node.id) ?? []) {
        // Not hub-damped: measured on the retrieval benchmark, damping pushed gold definitions down (MRR 0.825 → 0.799).
        const w = nb.type === "contains" ? 0.06 : 0.1;
        // The strongest seed counts, not their sum: in dense areas sums let neighbours outrank direct matches.
        bonus.set(nb.id, Math.max(bonus.get(nb.id) ?? 0, s.score * w));
      }
    }
    for (const [id, b] of bonus) {
      const h = scores.get(id);
      if (h) {
        h.score += b;
        signals(h.node).graph = top > 0 ? b / top : 0;
        if (!h.via.includes("graph")) h.via.push("graph");
      }
    }
    for (const [m, score] of this.overrides(bases, edges)) {
      const h = scores.get(m.id);
      if (h && h.score < score) {
        h.score = score;
        signals(m).override = true;
        h.via.push("override");
      }
    }
    // Tests rank below the code they exercise unless the question is about tests, or names the test
    // code by identifier (`TestParseDuration`, a helper of a test file). Applied last: a test still
    // lifts, as a seed above, the functions it calls. A path or traceback frame in a test file is
    // context (a failing test's report), not a request for the test.
    const named = namedCode(mentions, (file) => !this.isTest(file) && this.roleOf(file) === "source");
    const asksTests = seeksTests(query);
    // A report's body tells what was done ("Add a micro-benchmark"), its first line what it asks for.
    const asked = askedText(query);
    // So a test the body names is one the fix ran or changed ("use toString() in testUriDeserialization"):
    // only its first line naming a test asks for it.
    const askedNames = asked === query.trim() ? undefined : new Set(this.names.find(asked).map((m) => m.node.id));
    for (const h of scores.values()) {
      const x = signals(h.node);
      Object.assign(x, { test: this.isTest(h.node.file_path), seeksTests: asksTests, named: named.has(h.node.id) });
      if (x.test && !asksTests && !(x.named && (!askedNames || askedNames.has(h.node.id)))) h.score *= TEST_FACTOR;
      // Generated copies, vendored code, benchmarks, build scripts and examples (file-role.ts) are where a fix rarely goes.
      const role = this.roleOf(h.node.file_path);
      if (role !== "source" && !x.named && !ROLE_ASKED[role].test(asked)) h.score *= ROLE_FACTOR;
    }
    const handBest = Math.max(0, ...[...scores.values()].map((h) => h.score));
    return [...scores.values()].map((hit) => {
      const x = signals(hit.node);
      x.hand = handBest > 0 ? hit.score / handBest : 0;
      return { hit, signals: x };
    });
  }
}

/**
 * Nodes the question names by identifier, for the exemptions from TEST_FACTOR and ROLE_FACTOR: surely
 * (a guess, WEAK, is none: `host.c_str()` named every `c_str` of a bundled copy of fmt), and a test's,
 * copy's, sample's or vendored node only when its name names none of the project's own source
 * (`own`): `SimpleJson` names the project's SimpleJson.cs, not a test project's copy of it, `gzip()`
 * RequestBody.gzip, not a recipe's helper; `TestUnwrap` names its test.
 */
function namedCode(mentions: Mention[], own: (file: string) => boolean): Set<string> {
  const byName = mentions.filter((m) => m.by === "name" && m.strength > WEAK);
  const ownTokens = new Set(byName.filter((m) => own(m.node.file_path)).map((m) => m.token));
  return new Set(byName.filter((m) => own(m.node.file_path) || !ownTokens.has(m.token)).map((m) => m.node.id));
}

/** A candidate of a question: its hit (scored by the hand rules) and its signals. */
export interface Candidate {
  hit: Hit;
  signals: Signals;
}

/**
 * Scores candidates by the learned model (its probability that the candidate's file is gold); the
 * sessions' recall and focus then add their shares of the best model score, as they do by hand.
 */
function rerank(cands: Candidate[], ranker: LearnedRanker): void {
  for (const c of cands) c.hit.score = ranker.score(featureVector(c.signals));
  const top = Math.max(0, ...cands.map((c) => c.hit.score));
  for (const c of cands) {
    c.hit.score += top * c.signals.boost;
    c.hit.via.push("model");
  }
}

/**
 * Best score first; equal scores by node id. Every ranking sort uses it: the seeds of recall and of
 * the graph bonus are cut from this order, so a tie left to arrival order (which list found a node
 * first) could change the answer between two runs on the same index.
 */
export function byScore(a: Hit, b: Hit): number {
  return b.score - a.score || (a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0);
}

/** The edges of `ids`, by node: each edge's other end and type. */
function adjacent(edges: GraphEdge[], ids: string[]): Map<string, { id: string; type: string }[]> {
  const out = new Map<string, { id: string; type: string }[]>();
  const wanted = new Set(ids);
  for (const e of edges) {
    // Recursion is no neighbour of itself; a dispatch candidate is a possible call only (overrides are found apart).
    if (e.source === e.target || e.dispatch) continue;
    if (wanted.has(e.source)) push(out, e.source, { id: e.target, type: e.type });
    if (wanted.has(e.target)) push(out, e.target, { id: e.source, type: e.type });
  }
  return out;
}

/** Node types whose methods a subclass can override. */
const CLASSES = new Set(["class", "interface", "struct"]);

/** Files ranked by their best hit, each carrying its next best ones (ALSO_PER_FILE). */
function byFile(sorted: Hit[], limit: number): Hit[] {
  const files = new Map<string, Hit>();
  for (const h of sorted) {
    const f = files.get(h.node.file_path);
    if (!f) {
      if (files.size < limit) files.set(h.node.file_path, { ...h, also: [] });
    } else if (f.also!.length < ALSO_PER_FILE) f.also!.push(h);
  }
  return [...files.values()];
}

/** Further nodes a file's result names when search groups by file. */
const ALSO_PER_FILE = 2;

/**
 * The best hits in an order that shows more files: each further hit of a file already listed
 * counts FILE_REPEAT times less per earlier one, so a class and its methods do not fill the top.
 * Hits carry the discounted score, so the list stays sorted by score.
 */
function diversify(sorted: Hit[], limit: number): Hit[] {
  const pool = sorted.slice(0, Math.max(limit * 4, 40));
  const shown = new Map<string, number>();
  const out: Hit[] = [];
  while (out.length < limit && pool.length > 0) {
    let best = 0;
    let bestScore = -Infinity;
    for (let i = 0; i < pool.length; i++) {
      const s = pool[i].score * FILE_REPEAT ** (shown.get(pool[i].node.file_path) ?? 0);
      if (s > bestScore) {
        bestScore = s;
        best = i;
      }
    }
    const [h] = pool.splice(best, 1);
    shown.set(h.node.file_path, (shown.get(h.node.file_path) ?? 0) + 1);
    out.push({ ...h, score: bestScore });
  }
  return out;
}

/** The words a question's lexical search uses, and those of them common in the project (Retriever.common). */
interface LexicalQuery {
  words: string[];
  common: Set<string>;
}

/** A candidate with its score normalised to [0, 1] within one question. */
interface Scored {
  node: MemNode;
  score: number;
}

/** A store's answer row: lexical or vector, higher is better. */
type RowScore = Pick<LexicalHit, "rowid" | "score">;

/** Scales scores (best first) to [0, 1]: `floor` and below map to 0, the best to 1. */
function normalised(hits: RowScore[], floor: number): RowScore[] {
  const span = (hits[0]?.score ?? floor) - floor;
  return hits.map((h) => ({ rowid: h.rowid, score: span > 0 ? Math.max(0, (h.score - floor) / span) : 1 }));
}

/** The part of `filling` whose absence turns searches lexical. */
export const FILLING_VECTORS = "vectors";
/** What a reader's freshness says while its vectors load (`warming`). */
const VECTOR_SEARCH = "vector search";

/** What a reader lacks while the index's vectors are an earlier built-in embedder's (staleVectors). */
const REEMBEDDING = "re-embedded vectors";

/** Slices of the catalog a warming reader handles between yields to answers. */
const WARM_SLICE = 2000;
/**
 * A daemon's reader starts warming this long after it opens: the question that opened it (the
 * first after a start) is answered first, its slices not interleaved with the warming's.
 */
const WARM_DELAY_MS = 300;
/** Catalog rows a gentle open reads at a time: 60K nodes read at once held the thread ~0.4 s. */
const GENTLE_CATALOG_SLICE = 4000;

/** Adds (or takes back) the nodes' stems to document frequencies. */
function countTerms(df: Map<string, number>, nodes: MemNode[], sign: 1 | -1): void {
  for (const n of nodes) {
    for (const w of termsOf(n)) {
      const c = (df.get(w) ?? 0) + sign;
      if (c > 0) df.set(w, c);
      else df.delete(w);
    }
  }
}

/** The stems a node counts for in the document frequencies (each once). */
function termsOf(n: MemNode): Set<string> {
  return new Set(contentWords(`${n.qualified_name} ${n.signature} ${n.docstring.slice(0, 1000)} ${n.file_path}`).map(stem));
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
