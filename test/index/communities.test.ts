import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectCommunities } from "../../daemon/index/communities.js";
import { isTestPath } from "../../daemon/index/test-code.js";
import { Extractor } from "../../daemon/index/extract.js";
import { languageForPath } from "../../daemon/index/languages/registry.js";
import { resolveGraph } from "../../daemon/index/resolve.js";
import type { FileExtract } from "../../daemon/index/types.js";

const repo = path.resolve(__dirname, "../..");

/** Real trees with their tests: this repository (TypeScript) and Python's standard library with its test package. */
const TREES = [
  { name: "this repository", root: repo, dirs: ["daemon", "shared", "client", "hooks", "test", "scripts"] },
  { name: "python", root: "/usr/lib/python3.11", dirs: ["email", "json", "http", "logging", "importlib", "asyncio", "unittest", "test", "concurrent", "urllib", "xml", "multiprocessing"] },
];

async function graphOf(root: string, dirs: string[]) {
  const extractor = new Extractor();
  const extracts: FileExtract[] = [];
  const walk = async (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!["__pycache__", "fixtures", "node_modules"].includes(e.name)) await walk(p);
      } else if (languageForPath(p) && !p.endsWith(".d.ts")) {
        extracts.push(await extractor.extract(p, fs.readFileSync(path.join(root, p), "utf8"), languageForPath(p)!));
      }
    }
  };
  for (const d of dirs) await walk(d);
  return resolveGraph(extracts);
}

describe.each(TREES)("areas of $name", ({ root, dirs }) => {
  it("no area holds more than 15 % of a large tree's symbols; tests never name an area or stand among its central symbols; names are directories", async () => {
    const { nodes, edges } = await graphOf(root, dirs);
    expect(nodes.length).toBeGreaterThan(1000);
    expect(nodes.some((n) => isTestPath(n.file_path))).toBe(true);
    const { communityOf, communities } = detectCommunities(nodes, edges);
    expect(communities.length).toBeGreaterThan(5);

    const dirsOf = new Map<number, Set<string>>();
    const codeNames = new Map<number, Set<string>>();
    const onlyTests = new Map<number, boolean>();
    for (const n of nodes) {
      const c = communityOf.get(n.id)!;
      (dirsOf.get(c) ?? dirsOf.set(c, new Set()).get(c)!).add(path.posix.dirname(n.file_path));
      const test = isTestPath(n.file_path);
      onlyTests.set(c, (onlyTests.get(c) ?? true) && test);
      if (!test) (codeNames.get(c) ?? codeNames.set(c, new Set()).get(c)!).add(n.name);
    }
    for (const c of communities) {
      // The cap holds from 2,000 symbols; below, modularity alone decides.
      if (nodes.length >= 2000) expect(c.size, c.name).toBeLessThanOrEqual(nodes.length * 0.15);
      const [where, central = ""] = c.name.split(" · ");
      const named = where.replace(/ \(tests\)$/, "").split(", ");
      for (const d of named) {
        // A directory of the tree that holds the area's code (or one of its ancestors).
        expect(fs.statSync(path.join(root, d)).isDirectory(), c.name).toBe(true);
        expect([...dirsOf.get(c.id)!].some((m) => m === d || m.startsWith(`${d}/`)), c.name).toBe(true);
        if (!onlyTests.get(c.id)) expect(isTestPath(`${d}/x`), c.name).toBe(false);
      }
      expect(where.endsWith(" (tests)"), c.name).toBe(onlyTests.get(c.id));
      for (const sym of central.split(", ").filter(Boolean)) expect(codeNames.get(c.id)?.has(sym), `${c.name}: ${sym}`).toBe(true);
    }
  });
});
