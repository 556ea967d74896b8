import type { ResolvedConfig } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";

const SYSTEM_PROMPT =
  "You split a developer's question about a code base into 2-5 short, self-contained search questions, " +
  'each about one component or behaviour. Reply with a JSON array of strings only, e.g. ["How is X parsed?", "Where is Y retried?"].';

/** Chooses tiers by difficulty: long, many-clause questions go to the specialist first. */
export function tiersFor(cfg: ResolvedConfig, question: string): { tier: string; model: string }[] {
  const clauses = question.split(/[?;,]| and | then /).filter((s) => s.trim().length > 10).length;
  const first = question.length > 220 || clauses >= 4 ? "specialist" : "fast";
  return [
    { tier: first, model: cfg.llm.models[first as "fast" | "specialist"] },
    { tier: "reliable", model: cfg.llm.models.reliable },
  ];
}

/** Asks a chat-completions-compatible provider for sub-questions; falls through tiers on failure. */
export async function decomposeWithProvider(cfg: ResolvedConfig, question: string): Promise<{ subs: string[]; model: string }> {
  if (!cfg.llm.apiKey || !cfg.llm.baseUrl) throw new CodememError("PROVIDER_FAILED", "no provider configured");
  const url = `${cfg.llm.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const errors: string[] = [];
  for (const { tier, model } of tiersFor(cfg, question)) {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${cfg.llm.apiKey}` },
        body: JSON.stringify({ model, temperature: 0, messages: [{ role: "system", content: SYSTEM_PROMPT }, { role: "user", content: question }] }),
        signal: AbortSignal.timeout(cfg.llm.timeoutMs),
      });
      if (!res.ok) {
        errors.push(`${tier}: HTTP ${res.status}${res.status === 429 ? " (rate limited)" : ""}`);
        continue;
      }
      const body = (await res.json().catch(() => undefined)) as { choices?: { message?: { content?: string } }[] } | undefined;
      const subs = parseSubQuestions(body?.choices?.[0]?.message?.content);
      if (!subs) {
        errors.push(`${tier}: malformed reply`);
        continue;
      }
      return { subs, model };
    } catch (err) {
      const e = err as Error;
      errors.push(`${tier}: ${e.name === "TimeoutError" ? `timed out after ${cfg.llm.timeoutMs} ms` : e.message}`);
    }
  }
  throw new CodememError("PROVIDER_FAILED", errors.join("; "));
}

function parseSubQuestions(content: string | undefined): string[] | undefined {
  if (!content) return undefined;
  const json = content.replace(/^\s*```(?:json)?/i, "").replace(/```\s*$/, "").trim();
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v)) return undefined;
  const subs = v.filter((x): x is string => typeof x === "string" && x.trim().length > 3).map((s) => s.trim()).slice(0, 6);
  return subs.length > 0 ? subs : undefined;
}
