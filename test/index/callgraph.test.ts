import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";

/** The resolved graph of a few files given inline; `calls(a, b)` says whether a CALLS edge links them. */
async function graphOf(files: Record<string, string>) {
  const x = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, text]) => x.extract(p, text, languageForPath(p)!)));
  const { nodes, edges } = resolveGraph(extracts);
  const calls = (s: string, t: string) => edges.some((e) => e.source === s && e.target === t && e.type === "calls");
  const callees = (s: string) => edges.filter((e) => e.source === s && e.type === "calls").map((e) => e.target).sort();
  return { nodes, edges, calls, callees };
}

describe("recursion", () => {
  it("a function or method calling itself has a CALLS edge to itself, in TypeScript, Python and Go", async () => {
    const g = await graphOf({
      "a.ts": "export function walk(n: number): number { return n <= 0 ? 0 : walk(n - 1); }\nclass Tree { visit(): void { this.visit(); } }\n",
      "b.py": "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n",
      "c.go": "package c\n\nfunc fib(n int) int {\n\tif n < 2 {\n\t\treturn n\n\t}\n\treturn fib(n-1) + fib(n-2)\n}\n",
    });
    expect(g.calls("a.ts::walk", "a.ts::walk")).toBe(true);
    expect(g.calls("a.ts::Tree.visit", "a.ts::Tree.visit")).toBe(true);
    expect(g.calls("b.py::fact", "b.py::fact")).toBe(true);
    expect(g.calls("c.go::fib", "c.go::fib")).toBe(true);
    // Nothing contains or inherits itself.
    expect(g.edges.filter((e) => e.source === e.target && e.type !== "calls")).toEqual([]);
  });
});
