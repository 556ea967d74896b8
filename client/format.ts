/** Human-readable renderings of operation results for the CLI. */

import { describeUnsupported } from "../shared/schemas.js";

const n = (x: number) => x.toLocaleString("en-US");

export function formatBuild(r: Record<string, any>): string {
  const reasons = new Map<string, number>();
  for (const s of r.skipped ?? []) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
  const skipped = r.files_skipped ? ` — ${r.files_skipped} skipped (${[...reasons].map(([k, v]) => `${k} ${v}`).join(", ")}${r.files_skipped > (r.skipped?.length ?? 0) ? ", …" : ""})` : "";
  return [
    `Indexed ${n(r.files_indexed)} files: ${n(r.node_count)} nodes, ${n(r.edge_count)} edges, ${r.communities} communities in ${r.time_elapsed}s`,
    `  ${r.files_changed} parsed, ${r.files_removed} removed, ${n(r.nodes_processed)} nodes written, ${n(r.nodes_embedded)} embedded${skipped}`,
    `  graph: ${r.graph_source}, embedder: ${r.embedder}`,
    ...(r.unsupported?.length ? [`  not indexed: ${describeUnsupported(r.unsupported)}`] : []),
    ...(r.filling?.length ? [`  answerable now (lexical and graph); ${r.filling.slice(0, -1).join(", ")}${r.filling.length > 1 ? " and " : ""}${r.filling.at(-1)} are being written in the background (\`codemem stats\` shows when done)`] : []),
    ...(r.history ? [`  history: ${n(r.history.commits)} git commits read, ${n(r.history.learned)} learned as co-change (${n(r.history.pairs)} file pairs)`] : []),
  ].join("\n");
}

export function formatFreshness(f: Record<string, any>): string {
  const filling = f.filling?.length ? `; still writing ${f.filling.join(" and ")} (answers lexical and graph, token totals partial)` : "";
  return (f.stale ? `STALE — ${f.pending_count} changed file(s) not indexed yet (${f.pending_files.slice(0, 3).join(", ")}${f.pending_count > 3 ? ", …" : ""})` : `fresh (indexed ${f.indexed_at})`) + filling;
}

export function formatStats(r: Record<string, any>): string {
  return [
    `nodes          ${n(r.node_count)}`,
    `communities    ${n(r.community_count)}`,
    `edges          ${n(r.edge_count)}`,
    `files          ${n(r.file_count)} (${n(r.source_tokens)} source tokens)`,
    `last build     ${r.last_build}`,
    `index          ${r.backend}: ${r.index_path} (${(r.index_bytes / 1048576).toFixed(1)} MB)`,
    `synapse store  ${r.synapse_store}`,
    `graph source   ${r.graph_source}`,
    `embedder       ${r.embedder}`,
    `ranker         ${r.ranker}`,
    ...(r.unsupported?.length ? [`not indexed    ${describeUnsupported(r.unsupported)}`] : []),
    `freshness      ${formatFreshness(r.freshness)}`,
  ].join("\n");
}

export function formatAnswer(r: Record<string, any>): string {
  const ratio = r.reduction_ratio ? `, ${n(r.reduction_ratio)}× smaller than the ${n(r.source_tokens)}-token source` : "";
  // recursive-query: why the provider was not used (e.g. an untrusted [llm] base_url).
  const provider = r.provider_error ? `\n— provider not used: ${r.provider_error}` : "";
  return `${r.context}\n\n— ${r.tokens} tokens (${r.tokenizer})${ratio}; index ${formatFreshness(r.freshness)}${provider}`;
}

export function formatSearch(r: Record<string, any>): string {
  if (!r.results.length) return "No results.";
  return r.results
    .map(
      (x: any) =>
        `${x.score.toFixed(4)}  ${x.file_path}:${x.line_start}-${x.line_end}  ${x.qualified_name} (${x.type}${x.is_test ? ", test" : ""}${x.role ? `, ${x.role}` : ""})${x.description ? `\n        ${x.description}` : ""}` +
        (x.also ?? []).map((y: any) => `\n        also ${y.qualified_name} (${y.type}) :${y.line_start}-${y.line_end}`).join(""),
    )
    .join("\n");
}

export function formatSkeleton(r: Record<string, any>): string {
  return `${r.outline}\n\n— ${r.tokens} tokens instead of ${r.file_tokens}`;
}

export function formatBenchmark(r: Record<string, any>): string {
  const lines = r.results.map(
    (x: any) =>
      `${String(x.tokens).padStart(5)} tok  ${x.latency_ms.toFixed(1).padStart(6)} ms  ${x.recall !== undefined ? `recall ${x.recall.toFixed(2)} rr ${x.reciprocal_rank.toFixed(2)}  ` : ""}${x.question.slice(0, 80)}`,
  );
  const a = r.averages;
  lines.push(
    `\n${r.query_count} questions (${r.question_source}): mean ${a.tokens} tokens, reduction ${a.reduction_ratio}×, query ${a.latency_ms} ms, search ${a.search_latency_ms} ms, ${a.cited_files} files cited` +
      (a.recall !== undefined ? `, recall ${a.recall}, MRR ${a.mrr}` : ""),
  );
  return lines.join("\n");
}

export function formatDocs(r: Record<string, any>): string {
  if (!r.passages.length) return `No passages (${r.documents_indexed} documents indexed).`;
  const out = r.passages.map((x: any) => `## ${x.document}${x.page ? ` p.${x.page}` : ""}${x.heading ? ` — ${x.heading}` : ""} (${x.tokens} tokens)\n${x.text}`);
  if (r.skipped.length) out.push(`\nskipped: ${r.skipped.map((s: any) => `${s.path} (${s.reason})`).join(", ")}`);
  return out.join("\n\n");
}

export function formatNeighbors(r: Record<string, any>): string {
  if (!r.neighbors.length) return `No learned associations yet for ${r.seeds.length} seed node(s).`;
  const evidence = (x: any) =>
    [x.commits ? `${x.commits} commit${x.commits === 1 ? "" : "s"}` : "", x.co_activations ? `${x.co_activations} session co-activation${x.co_activations === 1 ? "" : "s"}` : "", x.last_at ? `last ${x.last_at.slice(0, 10)}` : ""]
      .filter(Boolean)
      .join(", ");
  const why = (x: any) => (x.reason === "test_pair" ? `test pair of ${x.via}` : x.reason === "recent_change" ? "changed lately in the project" : `depth ${x.depth}${evidence(x) ? `; ${evidence(x)}` : ""}`);
  return r.neighbors.map((x: any) => `${x.activation.toFixed(3)}  ${x.file_path}:${x.line_start}-${x.line_end}  ${x.name} (${why(x)})`).join("\n");
}

export function formatTrace(r: Record<string, any>): string {
  const head = `${r.direction} of ${r.symbol.name} (${r.symbol.type}, ${r.symbol.at})`;
  if (!r.levels.some((l: any) => l.entries.length)) return `${head}: none in the index`;
  const lines = [head];
  for (const l of r.levels) {
    lines.push(`depth ${l.depth}:`);
    for (const e of l.entries) lines.push(`  ${e.at}  ${e.name} (${e.type})${dispatchMark(e)}`);
    if (l.truncated) lines.push(`  … ${l.truncated} more`);
  }
  return lines.join("\n");
}

export function formatImpact(r: Record<string, any>): string {
  const lines = [`seeds: ${r.seeds.map((s: any) => `${s.name} (${s.at})`).join(", ") || "none"}`];
  if (r.changed_files.length) lines.push(`changed files: ${r.changed_files.join(", ")}`);
  lines.push("callers:", ...(r.callers.length ? r.callers.map((c: any) => `  ${c.score.toFixed(3)}  depth ${c.depth}  ${c.at}  ${c.name}${dispatchMark(c)}`) : ["  none"]));
  lines.push("tests:", ...(r.tests.length ? r.tests.map((t: any) => `  ${t.score.toFixed(3)}  ${t.file_path}  (${t.via})`) : ["  none"]));
  lines.push("co-change:", ...(r.co_change.length ? r.co_change.map((c: any) => `  ${c.weight.toFixed(3)}  ${c.file_path}  (${c.commits} commits)`) : ["  none learned"]));
  lines.push(`${r.tokens} tokens${r.truncated ? `, ${r.truncated} entries left out for the budget` : ""}`);
  return lines.join("\n");
}

export function formatSynapseStats(r: Record<string, any>): string {
  return [
    `edges ${r.edges} (${r.ltp_edges} long-term), nodes ${r.nodes}, total weight ${r.total_weight.toFixed(2)}, last decay ${r.last_decay_at ?? "never"}`,
    `history ${r.history.commits} git commits read, ${r.history.learned} learned as co-change, ${r.history.edges} file pairs`,
    `store ${r.store}`,
    ...r.top_hubs.map((h: any) => `  hub ${h.name ?? h.id} ${h.file_path ? `(${h.file_path})` : ""}: degree ${h.degree}, strength ${h.strength.toFixed(2)}`),
  ].join("\n");
}

/** A dispatch candidate's mark with its confidence (` [dispatch 0.33]`), or nothing. */
function dispatchMark(e: { dispatch?: boolean; confidence?: number }): string {
  return e.dispatch ? ` [dispatch${e.confidence ? ` ${e.confidence.toFixed(2)}` : ""}]` : "";
}
