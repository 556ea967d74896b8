import { describe, expect, it } from "vitest";
import { builtFixture } from "../index/fixture.js";

/** Debian python3-cryptography 38.0.4's ciphers/base.py: one file of nine classes. */
const FILE = "cryptography/hazmat/primitives/ciphers/base.py";

describe("a file's entry in an answer", () => {
  it("lists what the file defines in the order the question ranks it, with the lines of each", async () => {
    const { engine, root } = await builtFixture("python-cryptography-ciphers");
    const question = "what does the cryptography ciphers base module define";
    const a = await engine.query({ project_path: root, question });
    const defines = a.context.split("\n").find((l) => l.startsWith("defines: "));
    expect(defines).toBeDefined();
    const listed = defines!.slice("defines: ".length).split(", ");
    // The same question's ranking (query ranks 40 hits as search does), restricted to the file's top-level definitions.
    const { results } = await engine.search({ project_path: root, query: question, limit: 40 });
    const ranked = results.filter((r) => r.file_path === FILE && r.type !== "module" && !r.qualified_name.includes("."));
    expect(ranked.length).toBeGreaterThan(2);
    expect(listed.slice(0, ranked.length)).toEqual(ranked.map((r) => `${r.name} (${r.line_start}-${r.line_end})`));
  });
});
