import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { countTokens as tokenizerCount } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { countTokens, pieceEnd } from "../../dist/shared/tokens.js";

/**
 * Token figures are o200k counts (shared/tokens.ts counts each distinct piece of the tokenizer's split
 * once): on every file of the fixture trees (real code in 15 languages, licences, non-ASCII text),
 * ours must equal the tokenizer's over the whole text, cold and with the piece cache warm.
 */
const TREES = path.resolve("test/fixtures/trees");

function textFiles(dir: string): { rel: string; text: string }[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .map((abs) => ({ rel: path.relative(TREES, abs), text: fs.readFileSync(abs, "utf8") }))
    .filter((f) => !f.text.includes("\0"));
}

describe("token counts", () => {
  const files = textFiles(TREES);

  it("equal the o200k tokenizer's count of the whole text, file by file, twice", () => {
    expect(files.length).toBeGreaterThan(100);
    for (let round = 0; round < 2; round++) {
      const ours = files.map((f) => [f.rel, countTokens(f.text)]);
      expect(ours).toEqual(files.map((f) => [f.rel, tokenizerCount(f.text)]));
    }
    // Cut anywhere, even inside a word or a run of spaces, and with text the split treats apart.
    const mixed = "naïve café — 東京 \u00a0\u2003 x\r\n\r\n  \tend's  //\n/**/ 12345678 ";
    for (const f of [...files.slice(0, 20), { rel: "mixed", text: mixed.repeat(3) }]) {
      for (let cut = 0; cut < f.text.length; cut += Math.max(1, Math.floor(f.text.length / 37))) {
        expect([f.rel, cut, countTokens(f.text.slice(cut))]).toEqual([f.rel, cut, tokenizerCount(f.text.slice(cut))]);
      }
    }
  });

  it("are cut into the split pattern's own pieces (ASCII read by hand): on every fixture file and on random text of awkward characters", () => {
    const ends = (text: string) => {
      const out: number[] = [];
      for (let i = 0; i < text.length; i = pieceEnd(text, i)) out.push(pieceEnd(text, i));
      return out;
    };
    const pattern = (text: string) => [...text.matchAll(O200K_TOKEN_SPLIT_REGEX)].map((m) => m.index + m[0].length);
    for (const f of files) expect([f.rel, ends(f.text)]).toEqual([f.rel, pattern(f.text)]);
    // Letters of each case, contractions, digits, every kind of space and line break, slashes, and
    // beyond ASCII: accented and titlecase letters, a modifier letter, a combining mark, no-break and
    // line-separator spaces, an Arabic digit, a superscript, an emoji, a lone surrogate, CJK, an arrow.
    const alphabet = ["a", "b", "Z", "Q", "s", "S", "l", "L", "v", "e", "r", "d", "m", "t", "'", "0", "1", "9", " ", "  ", "\t", "\n", "\r", "\v", "\f", "/", "(", ".", "_", "\u00e9", "\u00c9", "\u01c5", "\u02b0", "\u0301", "\u00a0", "\u2028", "\u0663", "\u00b2", "\ud83d\ude00", "\ud800", "\u4e2d", "\u2192"];
    let seed = 20261126;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    for (let t = 0; t < 50_000; t++) {
      let text = "";
      for (let k = 1 + Math.floor(random() * 12); k > 0; k--) text += alphabet[Math.floor(random() * alphabet.length)];
      expect([text, ends(text)]).toEqual([text, pattern(text)]);
    }
  });

  it("of ASCII pieces (merged by codemem, not the library) equal the tokenizer's, on long random words that need many merges", () => {
    // Letters, digits and the punctuation of code, in words up to 40 characters: pieces the table does
    // not hold whole, so each is merged pair by pair. Every piece is new to the cache.
    const chars = "etaoinshrdlcumwfgypbvkjxqzETAOINSHRDL0123456789_$.:;=+-*/<>(){}[]'\"#@!?%&|^~`";
    let seed = 7;
    const random = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const texts: string[] = [];
    for (let t = 0; t < 4_000; t++) {
      let text = "";
      for (let w = 1 + Math.floor(random() * 6); w > 0; w--) {
        for (let k = 1 + Math.floor(random() * 40); k > 0; k--) text += chars[Math.floor(random() * chars.length)];
        text += random() < 0.3 ? "\n  " : " ";
      }
      texts.push(text);
    }
    expect(texts.map(countTokens)).toEqual(texts.map((t) => tokenizerCount(t, { disallowedSpecial: new Set() })));
  });

  it("count a special token's text as ordinary text (a source file may hold one; the tokenizer refuses it by default)", async () => {
    const text = "const EOT = '<|endoftext|>'; // and <|im_start|>, <| b |>\n";
    expect(() => tokenizerCount(text)).toThrow();
    expect(countTokens(text)).toBe(tokenizerCount(text, { disallowedSpecial: new Set() }));
    const py = "EOT = '<|endoftext|>'  # and <|im_start|>\n";
    const e = await new Extractor().extract("eot.py", py, languageForPath("eot.py")!);
    expect(e.tokens).toBe(tokenizerCount(py, { disallowedSpecial: new Set() }));
  });

  it("of an extracted file are the tokenizer's count of its source", async () => {
    const ex = new Extractor();
    const sources = files.filter((f) => /\.(c|h|cc|py|go|lua|kt)$/.test(f.rel));
    expect(sources.length).toBeGreaterThan(20);
    for (const f of sources) {
      const e = await ex.extract(f.rel, f.text, languageForPath(f.rel)!);
      expect([f.rel, e.tokens]).toEqual([f.rel, tokenizerCount(f.text)]);
    }
  });
});

/**
 * The rank table is read from a copy in the user's cache (shared/tokens.ts): the counts must stay the
 * tokenizer's, and a copy that is stale or damaged must be made again, never used.
 */
describe("the rank table's copy in the user's cache", () => {
  const TOKENS = path.resolve("dist/shared/tokens.js");
  const samples = [...textFiles(TREES).slice(0, 40).map((f) => f.text), "naïve café — 東京 🎉 \u00a0x\r\n\tend's <|endoftext|>"];
  /** Counts of the samples in a fresh process whose user cache is `dir`. */
  const countIn = (dir: string): number[] =>
    JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", `const { countTokens } = await import(${JSON.stringify(TOKENS)}); const s = JSON.parse(await new Promise((r) => { let d = ""; process.stdin.on("data", (c) => (d += c)).on("end", () => r(d)); })); process.stdout.write(JSON.stringify(s.map(countTokens)));`], {
        input: JSON.stringify(samples),
        env: { ...process.env, XDG_CACHE_HOME: dir },
      }).toString(),
    ) as number[];
  const expected = samples.map((t) => tokenizerCount(t, { disallowedSpecial: new Set() }));
  const split = (file: string) => {
    const text = fs.readFileSync(file, "utf8");
    const nl = text.indexOf("\n");
    return { head: JSON.parse(text.slice(0, nl)) as Record<string, unknown>, body: text.slice(nl + 1) };
  };

  it("is written by the first process, used by the next, and made again when stale or damaged", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-test-cache-"));
    try {
      const file = path.join(dir, "codemem", "o200k_base-ranks.json");
      expect(countIn(dir)).toEqual(expected);
      const made = split(file);
      expect(made.head.count).toBe(199998);

      // A mark in the header survives a process that takes the copy: it was not made again.
      fs.writeFileSync(file, `${JSON.stringify({ ...made.head, mark: 1 })}\n${made.body}`);
      expect(countIn(dir)).toEqual(expected);
      expect(split(file).head.mark).toBe(1);

      // Made from another version of the module: replaced.
      fs.writeFileSync(file, `${JSON.stringify({ ...made.head, stamp: "1:1", mark: 1 })}\n${made.body}`);
      expect(countIn(dir)).toEqual(expected);
      expect(split(file)).toEqual(made);

      // A table that does not match its digest (one token changed, still valid JSON), a torn file, garbage.
      for (const damaged of [
        `${JSON.stringify({ ...made.head, mark: 1 })}\n${made.body.replace('" the"', '" teh"')}`,
        `${JSON.stringify({ ...made.head, mark: 1 })}\n${made.body.slice(0, made.body.length / 2)}`,
        "not json at all",
      ]) {
        fs.writeFileSync(file, damaged);
        expect(countIn(dir)).toEqual(expected);
        expect(split(file)).toEqual(made);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
