import { countTokens } from "../../shared/tokens.js";
import { describeUnsupported, type CitationT, type CommunityRefT, type FreshnessT, type LayerT } from "../../shared/schemas.js";
import type { Hit, MemNode, Retriever } from "./retriever.js";
import { LANGUAGES } from "../index/languages/registry.js";
import { unsupportedOf } from "../index/languages/unsupported.js";
import { seeksTests } from "../index/test-code.js";
import { excerpt, lineFocus, type LineFocus } from "./excerpt.js";
import { keySymbols, type ReadSource } from "./key-symbols.js";
import * as ops from "../../shared/operations.js";

/** Share of the total budget per layer; L3 (code) takes what the others leave. */
const SHARES = { L0: 0.06, L1: 0.12, L2: 0.12 };
const MAX_FILES = 6;
/** Entries per file: the lead file may show more, others give room to further candidate files. */
const MAX_PER_FILE = [3, 2];
const LEAD_CODE_TOKENS = 0.3; // the best hit may take this share of L3 for its code

export interface Assembled {
  context: string;
  tokens: number;
  layers: LayerT[];
  communities: CommunityRefT[];
  citations: CitationT[];
}

/** Keeps whole lines while they fit; the first line (the heading) is cut to fit rather than lost. */
function fitLines(lines: string[], budget: number): { text: string; items: number } {
  const out: string[] = [];
  for (const l of lines) {
    const next = [...out, l].join("\n");
    if (countTokens(next) > budget) {
      if (out.length === 0) out.push(cutToTokens(l, budget));
      break;
    }
    out.push(l);
  }
  return { text: out.join("\n"), items: Math.max(0, out.length - 1) };
}

/** A heading and its items: the items that fit, or nothing at all (a heading alone says nothing). */
function fitSection(lines: string[], budget: number): { text: string; items: number } {
  const fit = fitLines(lines, budget);
  return fit.items > 0 ? fit : { text: "", items: 0 };
}

/** Text cut at line ends keeps no section heading it cut every item from (the title line stays). */
function dropTrailingHeading(text: string): string {
  const lines = text.split("\n");
  while (lines.length > 1 && /^(##+ |\s*$)/.test(lines[lines.length - 1])) lines.pop();
  return lines.join("\n");
}

function cutToTokens(text: string, budget: number): string {
  let t = text;
  while (t.length > 0 && countTokens(t + "…") > budget) t = t.slice(0, Math.floor(t.length * 0.85));
  return t.length < text.length ? t + "…" : t;
}

export function identityLines(r: Retriever, freshness: FreshnessT): string[] {
  const langs = r.summary.languages.join(", ");
  const files = r.files.size;
  const symbols = r.summary.symbols;
  // Freshness first: it must survive when the line is cut to a small budget.
  const fresh = freshness.stale ? `index STALE (${freshness.pending_count} changed file(s) not yet indexed)` : "index up to date";
  const name = r.meta.project_name || "project";
  if (files === 0) {
    // Files of a language codemem does not read are the likely reason, not the exclusion rules.
    const unsupported = unsupportedOf(r.meta);
    const why = unsupported.length ? describeUnsupported(unsupported) : "check .gitignore and exclude_patterns";
    return [`# ${name} — ${fresh}; no source files indexed: ${why} (codemem reads ${LANGUAGES.map((l) => l.id).join(", ")})`];
  }
  const warming = freshness.warming?.length ? `; warming up after a start (${freshness.warming.join(", ")} not ready, so the answer is lexical)` : "";
  const filling = freshness.filling?.length ? `; the last build is still writing ${freshness.filling.join(" and ")} (the answer is lexical and graph)` : "";
  return [`# ${name} — ${fresh}${warming}${filling}; ${files} files, ${symbols} symbols (${langs})`];
}

export function architectureLines(r: Retriever, max: number): string[] {
  if (r.communities.length === 0) return [];
  return [
    "## Architecture (largest areas)",
    ...[...r.communities]
      .sort((a, b) => (b.size ?? 0) - (a.size ?? 0) || a.id - b.id)
      .slice(0, max)
      .map((c) => `- ${c.name}: ${c.size} symbols, ${c.description.split("; ").slice(-1)[0]}`),
  ];
}

/** Ranks communities by the scores of the hits inside them. */
export function relevantCommunities(r: Retriever, hits: Hit[], max: number): CommunityRefT[] {
  const score = new Map<number, number>();
  for (const h of hits) score.set(h.node.community, (score.get(h.node.community) ?? 0) + h.score);
  return [...score.entries()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, max)
    .map(([id, s]) => {
      const c = r.communities.find((x) => x.id === id);
      return { id, name: c?.name ?? `community ${id}`, description: c?.description ?? "", size: c?.size ?? 0, score: Math.round(s * 10000) / 10000 };
    });
}

function firstParagraph(doc: string, maxChars: number): string {
  const p = doc.split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
  return p.length > maxChars ? p.slice(0, maxChars - 1) + "…" : p;
}

/**
 * Renders one code entry at a given detail: 2 = code (the lines the question asks about first), 1 = signature + doc, 0 = citation line only.
 * A file's entry lists what it defines, the question's hits first (by `rank`, with their lines), then the rest in line order.
 */
async function renderEntry(r: Retriever, n: MemNode, detail: number, codeBudget: number, focus: LineFocus, rank: Map<string, number>): Promise<string> {
  const role = r.roleOf(n.file_path);
  // A copy, vendored code, a benchmark or a build script says so: the reader should not take it for the project's own source.
  const head = `### ${n.file_path}:${n.line_start}-${n.line_end} ${n.type === "module" ? "(file)" : `${n.qualified_name} (${n.type})`}${role === "source" ? "" : ` [${role}]`}`;
  if (detail === 0) return head;
  const doc = firstParagraph(n.docstring, detail === 2 ? 300 : 160);
  if (n.type === "module") {
    const defined = ((await r.neighborsOf([n.id])).get(n.id) ?? []).filter((x) => x.type === "contains").flatMap((x) => r.byId.get(x.id) ?? []);
    const order = (d: MemNode) => rank.get(d.id) ?? Infinity;
    defined.sort((a, b) => order(a) - order(b) || a.line_start - b.line_start || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const names = defined.slice(0, 14).map((d) => (rank.has(d.id) ? `${d.name} (${d.line_start}-${d.line_end})` : d.name));
    return [head, doc, names.length ? `defines: ${names.join(", ")}` : ""].filter(Boolean).join("\n");
  }
  if (detail === 1 || codeBudget <= 0) return [head, n.signature, doc ? `  ${doc}` : ""].filter(Boolean).join("\n");
  const code = await r.code(n);
  const truncated = n.line_end - n.line_start + 1 > code.split("\n").length;
  const body = excerpt(code, n.signature, codeBudget, focus, truncated) || n.signature;
  return [head, "```", body, "```"].join("\n");
}

/** Files that usually change with a file (learned from the git history), strongest first. */
export type CoChangePartners = (file: string) => { file: string; commits: number }[];

/**
 * Assembles the layered answer (L0 identity, L1 architecture, L2 areas, L3 code) within `budget`
 * tokens. Unless the question is about tests, test code only takes what implementation leaves:
 * the code layer's six files and its budget go to the code that matches first. (On go-net with its
 * tests, letting up to 2 test files in by score instead cost recall 0.965 → 0.953.) When the lead
 * file has strong co-change partners, one line after its entry names them; it is paid from L3 like
 * any entry, so the budget does not grow.
 */
export async function assembleQuery(r: Retriever, ranked: Hit[], budget: number, freshness: FreshnessT, question: string, partners?: CoChangePartners): Promise<Assembled> {
  const hits = seeksTests(question) ? ranked : [...ranked.filter((h) => !r.isTest(h.node.file_path)), ...ranked.filter((h) => r.isTest(h.node.file_path))];
  const b0 = Math.floor(budget * SHARES.L0);
  const b1 = Math.floor(budget * SHARES.L1);
  const b2 = Math.floor(budget * SHARES.L2);
  const l0 = fitLines(identityLines(r, freshness), Math.max(b0, r.files.size ? 30 : budget)); // an empty index has nothing but the reason to tell
  const l1 = fitSection(architectureLines(r, 4), b1);
  const comms = relevantCommunities(r, hits.slice(0, 12), 3);
  const l2 = fitSection(comms.length ? ["## Relevant areas", ...comms.map((c) => `- ${c.name}: ${c.description}`)] : [], b2);
  const used = countTokens([l0.text, l1.text, l2.text].filter(Boolean).join("\n\n")) + 4;
  const b3 = budget - used;

  // L3: best hits, at most MAX_FILES distinct files, detail decreasing with rank.
  const entries: string[] = [];
  const citations: CitationT[] = [];
  const files = new Set<string>();
  const perFile = new Map<string, number>();
  let spent = countTokens("## Code") + 1;
  const covered = new Set<string>();
  const focus = lineFocus(question, r.termWeight());
  const rank = new Map(hits.map((h, i) => [h.node.id, i]));
  const leadFile = hits[0]?.node.file_path;
  const known = leadFile && partners ? partners(leadFile).filter((p) => p.file !== leadFile) : [];
  const partnerLine = known.length ? `(usually changed with ${known.map((p, i) => `${p.file} (${p.commits}${i === 0 ? " commits" : ""})`).join(", ")})` : "";
  if (partnerLine) spent += countTokens(partnerLine) + 1;
  for (let i = 0; i < hits.length && spent < b3; i++) {
    const n = hits[i].node;
    if (!files.has(n.file_path) && files.size >= MAX_FILES) continue;
    const cap = files.size === 0 || [...files][0] === n.file_path ? MAX_PER_FILE[0] : MAX_PER_FILE[1];
    if ((perFile.get(n.file_path) ?? 0) >= cap) continue;
    if (covered.has(n.id) || (n.parent && covered.has(n.parent) && entries.length > 0 && inEntryOf(r.byId.get(n.parent), n))) continue;
    const left = b3 - spent;
    const lead = entries.length === 0 ? Math.floor(b3 * LEAD_CODE_TOKENS) : entries.length < 3 ? Math.floor(b3 * 0.12) : 0;
    let text = "";
    for (const detail of lead > 0 ? [2, 1, 0] : [1, 0]) {
      const t = await renderEntry(r, n, detail, lead, focus, rank);
      if (countTokens(t) + 1 <= left) {
        text = t;
        break;
      }
    }
    if (!text) continue;
    if (entries.length === 0 && partnerLine && n.file_path === leadFile) text += `\n${partnerLine}`;
    else if (entries.length === 0 && partnerLine) spent -= countTokens(partnerLine) + 1;
    entries.push(text);
    spent += countTokens(text) + 1;
    files.add(n.file_path);
    perFile.set(n.file_path, (perFile.get(n.file_path) ?? 0) + 1);
    covered.add(n.id);
    citations.push({ node_id: n.id, file_path: n.file_path, line_start: n.line_start, line_end: n.line_end, is_test: r.isTest(n.file_path) });
  }
  const l3text = entries.length ? ["## Code", ...entries].join("\n") : "";
  let parts = [l0.text, l1.text, l2.text, l3text].filter(Boolean);
  let context = parts.join("\n\n");
  let tokens = countTokens(context);
  // Token counts are not additive across joins; trim the last code entry until the total fits.
  while (tokens > budget && entries.length > 0) {
    entries.pop();
    citations.pop();
    parts = [l0.text, l1.text, l2.text, entries.length ? ["## Code", ...entries].join("\n") : ""].filter(Boolean);
    context = parts.join("\n\n");
    tokens = countTokens(context);
  }
  const layers: LayerT[] = [
    { level: "L0", name: "identity", tokens: countTokens(l0.text), budget: b0, items: 1 },
    { level: "L1", name: "architecture", tokens: countTokens(l1.text), budget: b1, items: l1.items },
    { level: "L2", name: "relevant communities", tokens: countTokens(l2.text), budget: b2, items: l2.items },
    { level: "L3", name: "code", tokens: entries.length ? countTokens(["## Code", ...entries].join("\n")) : 0, budget: b3, items: entries.length },
  ];
  return { context, tokens, layers, communities: comms, citations };
}

/**
 * Whether a member is shown by its container's entry: a class's members in its file are, a module's
 * are not (a module entry lists names only), nor is a method defined in another file than its type
 * (Go's methods beside their struct's file, C++'s out-of-line definitions, a C# partial class's other
 * part): `UnixListener.SetUnlinkOnClose` in unixsock_posix.go is nowhere in unixsock.go's entry.
 */
function inEntryOf(parent: { type: string; file_path: string } | undefined, member: { file_path: string }): boolean {
  return !!parent && parent.type !== "module" && parent.file_path === member.file_path;
}

/** How to use codemem, for an assistant that reads the wake-up at session start. */
function toolLines(): string[] {
  return [
    `Ask before reading files: ${ops.query.tool} "how/where …?" → cited code that answers; ${ops.search.tool} "name or words" → symbols, files; ${ops.skeleton.tool} file_path → outline.`,
  ];
}

/**
 * Session-start context: identity and how to use the tools, the main areas, and the entry points
 * a newcomer needs (public implementation used across files, see key-symbols.ts).
 */
export async function assembleWakeup(r: Retriever, read: ReadSource, budget: number, freshness: FreshnessT): Promise<Omit<Assembled, "communities" | "citations">> {
  const b0 = Math.floor(budget * 0.25);
  const b1 = Math.floor(budget * 0.35);
  const identity = identityLines(r, freshness);
  const l0 = fitLines(r.files.size ? [...identity, ...toolLines()] : identity, Math.max(b0, r.files.size ? 40 : budget)); // an empty index has nothing but the reason to tell
  const l1 = fitSection(architectureLines(r, 4), b1);
  const used = countTokens([l0.text, l1.text].join("\n\n")) + 2;
  const central = (await keySymbols(r, read, 12)).map(
    (n) => `- ${n.qualified_name} (${n.type}) ${n.file_path}:${n.line_start}${n.description && !n.description.startsWith(n.type) ? ` — ${firstParagraph(n.description, 60)}` : ""}`,
  );
  const l2 = fitSection(central.length ? ["## Key symbols (entry points)", ...central] : [], budget - used);
  let context = [l0.text, l1.text, l2.text].filter(Boolean).join("\n\n");
  while (countTokens(context) > budget && context.includes("\n")) context = dropTrailingHeading(context.slice(0, context.lastIndexOf("\n")));
  return {
    context,
    tokens: countTokens(context),
    layers: [
      { level: "L0", name: "identity", tokens: countTokens(l0.text), budget: b0, items: 1 },
      { level: "L1", name: "architecture", tokens: countTokens(l1.text), budget: b1, items: l1.items },
      { level: "L2", name: "key symbols", tokens: countTokens(l2.text), budget: budget - used, items: l2.items },
    ],
  };
}
