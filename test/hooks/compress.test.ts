import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compressFast, compressOutput } from "../../dist/hooks/compress.js";

const DIR = path.join(import.meta.dirname, "..", "fixtures", "outputs");
const ERROR_RE = /error|Error|ERROR|FAIL|panic|Traceback|Exception|npm ERR!|fatal:|✗|✘/;
const corpus = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith(".txt"))
  .sort()
  .map((f) => ({
    name: f,
    text: fs.readFileSync(path.join(DIR, f), "utf8"),
    exitCode: Number(fs.readFileSync(path.join(DIR, `${f}.exit`), "utf8").trim()),
  }));

describe("compressOutput on real command outputs", () => {
  it("has a corpus of at least 10 real outputs", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(10);
  });

  for (const { name, text, exitCode } of corpus) {
    it(`${name}: never longer, every error line kept verbatim`, () => {
      const r = compressOutput(text, { exitCode });
      expect(r.text.length).toBeLessThanOrEqual(text.length);
      expect(r.tokens).toBeLessThanOrEqual(r.original_tokens);
      const out = new Set(r.text.split("\n"));
      const errorLines = text.split("\n").filter((l) => ERROR_RE.test(l));
      for (const line of errorLines) expect(out.has(line), `lost: ${line}`).toBe(true);
      const fast = compressFast(text, { exitCode });
      expect(fast.text.length).toBeLessThanOrEqual(text.length);
    });
  }

  const get = (name: string) => {
    const c = corpus.find((x) => x.name === name)!;
    return { ...c, r: compressOutput(c.text, { exitCode: c.exitCode }) };
  };

  it("keeps failing test names, the assertion diff and the summary of a failing vitest run", () => {
    const { r } = get("vitest-failing-nocolor.txt");
    expect(r.kept).toBe("compressed");
    expect(r.tokens).toBeLessThan(r.original_tokens * 0.5);
    for (const name of ["sums an invoice", "rejects negative quantities", "rounds currency"]) {
      expect(r.text.split("\n").filter((l) => l.includes(name)).length).toBeGreaterThanOrEqual(2);
    }
    expect(r.text).toContain('-   "total": 5,');
    expect(r.text).toContain('+   "total": 4,');
    expect(r.text).toContain("Tests  3 failed | 120 passed (123)");
    expect(r.text).toMatch(/… \d+ similar lines omitted \(e\.g\. '✓ test\/calc\.test\.ts/);
  });

  it("keeps pytest and unittest failures with their explanations", () => {
    const py = get("pytest-failing.txt").r;
    expect(py.text).toContain("test_sample.py::test_parse_header FAILED");
    expect(py.text).toContain("E         {'b': 2} != {'b': 3}");
    expect(py.text).toContain("test_sample.py:84: AssertionError");
    expect(py.text).toMatch(/2 failed, 80 passed/);
    const ut = get("unittest-failing.txt").r;
    expect(ut.text).toContain("AssertionError: 2.5 != 2");
    expect(ut.text).toContain("KeyError: 'missing'");
    expect(ut.text).toContain("FAILED (failures=1, errors=1)");
  });

  it("keeps compiler diagnostics with file:line, carets and the make summary", () => {
    const { r, text } = get("gcc-make-large.txt");
    expect(r.kept).toBe("compressed");
    for (const l of text.split("\n").filter((x) => /^mod75\.c:\d+:\d+:/.test(x))) expect(r.text).toContain(l);
    expect(r.text).toMatch(/\^/);
    expect(r.text).toMatch(/make: \*\*\*/);
    expect(r.text).toMatch(/similar lines omitted \(e\.g\. 'gcc -Wall -O2 -c mod/);
  });

  it("collapses a passing run to its summary", () => {
    const { r } = get("vitest-passing.txt");
    expect(r.tokens).toBeLessThan(r.original_tokens * 0.2);
    expect(r.text).toMatch(/Tests .*123 passed/);
  });

  it("passes small outputs through untouched", () => {
    for (const name of ["npm-missing-script.txt", "cargo-build-ok.txt", "cargo-build-failure.txt"]) {
      const { r, text } = get(name);
      expect(r.kept).toBe("all");
      expect(r.text).toBe(text);
      expect(r.dropped_lines).toBe(0);
    }
    const tiny = "error: x\n".repeat(3);
    expect(compressOutput(tiny)).toMatchObject({ text: tiny, kept: "all" });
  });

  it("collapses progress-bar redraws and download lines", () => {
    const lines = ["Downloading packages"];
    for (let i = 0; i < 300; i++) lines.push(`Downloaded crate-${i} v1.${i}.0 (${i * 3} KB)`);
    lines.push("warning: unused import `foo` at src/lib.rs:3:5", "Finished dev [unoptimized] target(s) in 3.2s");
    const text = lines.join("\n");
    const r = compressOutput(text, { kind: "build" });
    expect(r.kept).toBe("compressed");
    expect(r.text).toContain("warning: unused import `foo` at src/lib.rs:3:5");
    expect(r.text).toContain("Finished dev [unoptimized] target(s) in 3.2s");
    expect(r.text.split("\n").length).toBeLessThan(25);
  });
});
