import type { ResolvedConfig } from "../../shared/config.js";
import type { FreshnessT } from "../../shared/schemas.js";
import type { Embedder } from "../index/embed/embedder.js";
import { contentWords } from "../index/text.js";
import { assembleQuery, type Assembled } from "./context.js";
import { decomposeWithProvider } from "./provider.js";
import type { Hit, Retriever } from "./retriever.js";

/** Deterministic decomposition: clauses joined by "and", ";", "?" or "then", plus named identifiers. */
export function decomposeHeuristically(question: string): string[] {
  const clauses = question
    .split(/\?\s+|;\s*|\s+and then\s+|\s+then\s+|,?\s+and\s+(?=(?:how|what|where|why|which|who|when|does|is|are|can)\b)|\.\s+(?=[A-Z])/i)
    .map((s) => s.trim().replace(/[?.]+$/, ""))
    .filter((s) => contentWords(s).length >= 2);
  const subs = clauses.length > 1 ? clauses : [question.trim()];
  const idents = [...new Set(question.match(/\b(?:[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[a-z]+_[a-z_]+)\b/g) ?? [])];
  for (const id of idents) if (!subs.some((s) => s.includes(id))) subs.push(`Where is ${id} defined and used?`);
  return subs.slice(0, 5);
}

/** Decomposes, answers each sub-question with hybrid search, and merges the hits into one budgeted context. */
export async function recursiveQuery(r: Retriever, e: Embedder, cfg: ResolvedConfig, question: string, budget: number, freshness: FreshnessT) {
  let subs: string[];
  let decomposition: "provider" | "heuristic" = "heuristic";
  let provider_error: string | undefined;
  if (cfg.llm.apiKey && cfg.llm.refused) {
    // The key is not sent; the answer comes from the heuristic decomposition and says why.
    provider_error = `${cfg.llm.refused.code}: ${cfg.llm.refused.message}`;
    subs = decomposeHeuristically(question);
  } else if (cfg.llm.apiKey && cfg.llm.baseUrl) {
    try {
      subs = (await decomposeWithProvider(cfg, question)).subs;
      decomposition = "provider";
    } catch (err) {
      provider_error = (err as Error).message;
      subs = decomposeHeuristically(question);
    }
  } else subs = decomposeHeuristically(question);

  const perSub: Hit[][] = [];
  for (const s of subs) perSub.push(await r.search(s, e, 15));
  // Round-robin merge keeps every sub-question represented before any gets a second hit.
  const merged: Hit[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < 15; i++) {
    for (const hits of perSub) {
      const h = hits[i];
      if (h && !seen.has(h.node.id)) {
        seen.add(h.node.id);
        merged.push(h);
      }
    }
  }
  const out: Assembled = await assembleQuery(r, merged, budget, freshness, question);
  const cited = new Set(out.citations.map((c) => c.node_id));
  return {
    ...out,
    sub_questions: subs.map((q, i) => ({ question: q, citations: perSub[i].filter((h) => cited.has(h.node.id)).length })),
    decomposition,
    ...(provider_error ? { provider_error } : {}),
  };
}
