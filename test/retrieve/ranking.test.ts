import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject } from "../helpers.js";

// Lexically, every question below matches journal.py better than the code it names.
const FILES = {
  "books/ledger.py": `"""Double-entry ledger."""


class Ledger:
    """Accounts and their balances."""

    def post(self, entry):
        """Record one entry."""
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

// Convert turns an amount into another currency.
func Convert(amount float64, rate float64) float64 { return amount * rate }
`,
};

let p: ReturnType<typeof makeProject>;
let engine: ProjectEngine;
beforeAll(async () => {
  p = makeProject(FILES);
  engine = await ProjectEngine.open(p.root, { sideEffects: false });
  await engine.build({ project_path: p.root });
});
afterAll(async () => {
  await engine.close();
  p.cleanup();
});

const first = async (query: string) => (await engine.search({ project_path: p.root, query })).results[0];

describe("identifiers named in the question", () => {
  it("a qualified name, a module-prefixed name and a called name put their node first", async () => {
    expect(await first("How does Ledger.post handle a journal entry with tax?")).toMatchObject({ id: "books/ledger.py::Ledger.post", via: expect.arrayContaining(["name"]) });
    expect(await first("what does ledger.Ledger do with a journal entry with tax")).toMatchObject({ id: "books/ledger.py::Ledger" });
    expect(await first("Is the journal entry tax rounded when Convert() runs?")).toMatchObject({ id: "books/fx.go::Convert" });
  });

  it("a module named as such counts; prose words and other cases do not", async () => {
    expect((await first("In the ledger module, where is a journal entry with tax kept?")).file_path).toBe("books/ledger.py");
    for (const q of ["How is a journal entry with tax posted to the ledger?", "Does LEDGER.POST round the journal entry tax?", "journal entry with tax and convert"]) {
      const r = await engine.search({ project_path: p.root, query: q });
      expect(r.results.filter((x) => x.via.includes("name")), q).toEqual([]);
    }
  });
});

describe("result order", () => {
  it("shows another file before a third hit of the same file", async () => {
    const q = makeProject({
      "cache/lru.py": `"""Least-recently-used cache."""\n\n\nclass LruCache:\n    """A cache that evicts the least recently used entry."""\n\n    def get(self, key):\n        """Return the cached entry for key and mark it recently used."""\n\n    def put(self, key, value):\n        """Cache an entry, evicting the least recently used entry when full."""\n\n    def evict(self):\n        """Evict the least recently used cache entry."""\n`,
      "cache/ttl.py": `"""Entries that expire."""\n\n\ndef expire_entries(entries, now):\n    """Drop cached entries whose time to live has passed."""\n`,
    });
    const e = await ProjectEngine.open(q.root, { sideEffects: false });
    await e.build({ project_path: q.root });
    const r = (await e.search({ project_path: q.root, query: "how are least recently used cache entries evicted or expired", limit: 5 })).results;
    expect(r[0].file_path).toBe("cache/lru.py");
    expect(r.slice(0, 3).map((x) => x.file_path)).toContain("cache/ttl.py");
    // Diversity only reorders: every hit is still there.
    expect(r.filter((x) => x.file_path === "cache/lru.py").length).toBeGreaterThanOrEqual(3);
    await e.close();
    q.cleanup();
  });
});

describe("query term weights", () => {
  it("weigh a word by how rare it is in this project, and an unknown word most", async () => {
    const r = await engine.retriever();
    const w = r.termWeight();
    // "entry" is in four nodes' signatures and docstrings here, "balance" in one, "zeppelin" in none.
    expect(w("entry")).toBeLessThan(w("balance"));
    expect(w("balance")).toBeLessThan(w("zeppelin"));
    expect(w("entry")).toBeGreaterThan(0);
  });
});

describe("short numbers in a question", () => {
  it("only re-rank: code holding a 3 but none of the question's words gains nothing from it", async () => {
    const q = makeProject({
      "jobs/saved.py": `def codemem_saved3_report(rows):\n    """Summarise saved rows."""\n    return len(rows)\n`,
      "jobs/matrix.py": `def rotate(m):\n    """Turn a grid."""\n    return [[m[3][0], m[2][0]], [m[3][1], m[2][1]]]\n\n\nSIZE = 3\n`,
    });
    const e = await ProjectEngine.open(q.root, { sideEffects: false });
    try {
      await e.build({ project_path: q.root });
      const { results } = await e.search({ project_path: q.root, query: "where is codemem saved 3 report" });
      expect(results[0].name).toBe("codemem_saved3_report");
      // matrix.py is a result only as a faint vector neighbour: its 3s lift it no more (they lifted its
      // hits to 12 % of the best score, as a whole-file match).
      const matrix = results.filter((r) => r.file_path === "jobs/matrix.py");
      for (const r of matrix) expect(r.via).not.toContain("lexical");
      expect(Math.max(0, ...matrix.map((r) => r.score))).toBeLessThan(0.05 * results[0].score);
    } finally {
      await e.close();
      q.cleanup();
    }
  });
});
