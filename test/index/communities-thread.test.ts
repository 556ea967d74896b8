import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { detectCommunities } from "../../dist/daemon/index/communities.js";
import { detectCommunitiesApart } from "../../dist/daemon/index/communities-thread.js";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";
import { testClassifier } from "../../dist/daemon/index/test-code.js";

describe("communities detected on a thread", () => {
  it("are the ones detected in place: every node's, and the areas' names, sizes and files", async () => {
    // Part of Python's standard library (some of it named tests by a pattern): a graph past the size a build clusters apart.
    const lib = "/usr/lib/python3.11";
    const extractor = new Extractor();
    const extracts = [];
    for (const d of ["json", "email", "email/mime", "http", "logging", "asyncio"]) {
      for (const f of fs.readdirSync(path.join(lib, d))) {
        if (f.endsWith(".py")) extracts.push(await extractor.extract(`${d}/${f}`, fs.readFileSync(path.join(lib, d, f), "utf8"), languageForPath(f)!));
      }
    }
    const { nodes, edges } = resolveGraph(extracts);
    expect(nodes.length).toBeGreaterThan(2000);
    const patterns = ["*parser.py", "asyncio/test*"];
    const here = detectCommunities(nodes, edges, testClassifier(patterns));
    const apart = await detectCommunitiesApart(nodes, edges, patterns);
    expect(here.communities.length).toBeGreaterThan(5);
    expect(apart.communities).toEqual(here.communities);
    expect([...apart.communityOf]).toEqual([...here.communityOf]);
  });
});
