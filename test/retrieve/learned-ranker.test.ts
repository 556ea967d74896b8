import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FEATURES, featureVector } from "../../dist/daemon/retrieve/features.js";
import { LearnedRanker, RANKER_FORMAT, SHIPPED_MODEL } from "../../dist/daemon/retrieve/ranker.js";
import { byScore } from "../../dist/daemon/retrieve/retriever.js";
import { expectCode, touchLater } from "../helpers.js";
import { builtProject } from "./built-project.js";

// Lexically, "journal entry with tax" matches journal.py's function best; the fixture model below
// (lexical weighed negatively, vector positively) orders the candidates otherwise.
const FILES = {
  "books/ledger.py": `"""Double-entry ledger."""


class Ledger:
    """Accounts and their balances."""

    def post(self, entry):
        """Record one entry in the books."""
        self.entries.append(entry)
        return len(self.entries)
`,
  "books/journal.py": `"""Journal entries with tax."""


def post_journal_entry_with_tax(entry, tax_rate):
    """Post a journal entry with tax, rounding the tax amount of the journal entry."""
    entry.tax = round(entry.amount * tax_rate, 2)
    return entry


def journal_entry_tax_report(entries):
    """Report the tax of every journal entry."""
    return [e.tax for e in entries]
`,
  "books/fx.go": `package books

// Convert turns an amount of a journal into another currency.
func Convert(amount float64, rate float64) float64 { return amount * rate }
`,
};
const QUESTION = "journal entry with tax";
const FIXTURE = { format: RANKER_FORMAT, family: "logistic", features: ["lexical", "vector", "documented"], mean: [0, 0, 0], scale: [1, 1, 1], weights: [-6, 3, 0.5], bias: 0 };

const project = builtProject(FILES);
const engine = () => project.engine();
const root = () => project.root();

/** Rewrites codemem.toml (and a model file); the engine reads both again on its next request. */
function configure(toml: string, model?: string): void {
  if (model !== undefined) fs.writeFileSync(path.join(root(), "model.json"), model);
  const file = path.join(root(), "codemem.toml");
  fs.writeFileSync(file, toml);
  touchLater(file);
}
const LEARNED = `[query]\nranker = "learned"\nranker_model = "model.json"\n`;
// Through dispatch, as clients ask: it reads codemem.toml again, and keeps only the declared output.
type Out = { ranker: string; results: { id: string; via: string[] }[] };
const search = () => engine().dispatch("search", { project_path: root(), query: QUESTION, limit: 10 }) as Promise<Out>;
const stats = () => engine().dispatch("stats", { project_path: root() }) as Promise<{ ranker: string }>;

describe("the shipped model", () => {
  it("loads, and its identity is its family and the file's hash", () => {
    const r = LearnedRanker.load();
    const hash = createHash("sha256").update(fs.readFileSync(SHIPPED_MODEL)).digest("hex").slice(0, 12);
    expect(r.id).toMatch(new RegExp(`^(logistic|pairwise-logistic)-${hash}$`));
  });
});

describe("the learned ranker serves answers", () => {
  it("orders search by the model, not by the hand rules or by a single feature", async () => {
    configure("");
    const hand = await search();
    expect(hand.ranker).toBe("hand-rules");

    configure(LEARNED, JSON.stringify(FIXTURE));
    const learned = await search();
    // What the model should put first, from the candidates' own feature vectors.
    const r = await engine().retriever();
    const ranker = LearnedRanker.load(path.join(root(), "model.json"));
    const cands = await r.candidates(QUESTION, await engine().embedder());
    const byModel = cands.map((c) => ({ ...c.hit, score: ranker.score(featureVector(c.signals)) })).sort(byScore);
    const lexicalAt = FEATURES.indexOf("lexical");
    const byLexical = cands.map((c) => ({ ...c.hit, score: featureVector(c.signals)[lexicalAt] })).sort(byScore);

    expect(byModel[0].node.id).not.toBe(byLexical[0].node.id);
    expect(byModel[0].node.id).not.toBe(hand.results[0].id);
    expect(learned.results[0].id).toBe(byModel[0].node.id);
    expect(learned.results[0].via).toContain("model");
    expect(learned.ranker).toBe(ranker.id);
  });

  it("stats, search and query name the model by its file's hash", async () => {
    configure(LEARNED, JSON.stringify(FIXTURE));
    const text = fs.readFileSync(path.join(root(), "model.json"));
    const id = `logistic-${createHash("sha256").update(text).digest("hex").slice(0, 12)}`;
    expect((await stats()).ranker).toBe(id);
    expect((await search()).ranker).toBe(id);
    expect(((await engine().dispatch("query", { project_path: root(), question: QUESTION })) as Out).ranker).toBe(id);
    configure("");
    expect((await stats()).ranker).toBe("hand-rules");
  });
});

describe("a model that does not load", () => {
  it("a corrupt or missing model file fails answers with RANKER_MODEL_INVALID; stats still answer and name the code", async () => {
    configure(LEARNED, "{ not json");
    await expectCode(search(), "RANKER_MODEL_INVALID");
    expect((await stats()).ranker).toBe("unavailable (RANKER_MODEL_INVALID)");
    fs.rmSync(path.join(root(), "model.json"));
    configure(`[query]\nranker = "learned"\nranker_model = "model.json"\n# missing\n`);
    await expectCode(search(), "RANKER_MODEL_INVALID");
    configure("");
    expect((await search()).ranker).toBe("hand-rules");
  });

  it("a model naming a feature codemem does not compute, or of unequal lengths, is RANKER_MODEL_INVALID", () => {
    const file = path.join(root(), "bad.json");
    fs.writeFileSync(file, JSON.stringify({ ...FIXTURE, features: ["lexical", "vector", "stars"] }));
    expect(() => LearnedRanker.load(file)).toThrow(expect.objectContaining({ code: "RANKER_MODEL_INVALID" }));
    fs.writeFileSync(file, JSON.stringify({ ...FIXTURE, weights: [1] }));
    expect(() => LearnedRanker.load(file)).toThrow(expect.objectContaining({ code: "RANKER_MODEL_INVALID" }));
  });

  it("[query] ranker accepts only hand or learned", async () => {
    configure(`[query]\nranker = "magic"\n`);
    // Answers go on with the last good settings; a build names the broken file.
    await expectCode(engine().build({ project_path: root() }), "CONFIG_INVALID");
    configure("");
  });
});
