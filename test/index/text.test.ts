import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { identifiersOf, joinedWords, splitWords } from "../../dist/daemon/index/text.js";

// The definitions the hand-written scanners must equal: every lexical row, vector and query word comes from them.
function splitWordsByPattern(text: string): string[] {
  const out: string[] = [];
  for (const chunk of text.split(/[^A-Za-z0-9]+/)) {
    for (const p of chunk.match(/[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[a-z]+|[0-9]+/g) ?? []) out.push(p.toLowerCase());
  }
  return out;
}

function identifiersByPattern(code: string, limit: number): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)) {
    if (!out.includes(m[0])) out.push(m[0]);
    if (out.length >= limit) break;
  }
  return out;
}

/** Deterministic random text over the characters where the patterns' cases meet. */
function randomTexts(count: number): string[] {
  const alphabet = "aAbBzZqQ09_5 -.\n\té\u00dfK\u212a\u0130\u{1F600}";
  const chars = [...alphabet];
  let seed = 42;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  return Array.from({ length: count }, () => Array.from({ length: Math.floor(next() * 14) }, () => chars[Math.floor(next() * chars.length)]).join(""));
}

/** This repository's own TypeScript: real identifiers, comments and strings. */
function sourceTexts(): string[] {
  const dir = path.resolve(__dirname, "../../daemon");
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".ts")) out.push(fs.readFileSync(p, "utf8"));
    }
  };
  walk(dir);
  return out;
}

describe("splitWords and identifiersOf", () => {
  it("split camel case, capitals, digits and separators", () => {
    expect(splitWords("parseHTTPHeader_v2 XMLHttpRequest ab9Cd éA")).toEqual(["parse", "http", "header", "v", "2", "xml", "http", "request", "ab", "9", "cd", "a"]);
    expect(identifiersOf("if (x1) { foo_bar(9abc, _ok, foo_bar) }", 10)).toEqual(["foo_bar", "abc", "_ok"]);
    expect(identifiersOf("alpha beta gamma delta", 2)).toEqual(["alpha", "beta"]);
  });

  it("equal their patterns on random text and on real source", () => {
    const texts = [...randomTexts(20_000), ...sourceTexts()];
    expect(texts.length).toBeGreaterThan(20_050);
    for (const t of texts) {
      expect(splitWords(t)).toEqual(splitWordsByPattern(t));
      expect(identifiersOf(t, 80)).toEqual(identifiersByPattern(t, 80));
      expect(identifiersOf(t, 3)).toEqual(identifiersByPattern(t, 3));
    }
  });

  it("joinedWords is the pattern's words joined, also after a longer text grew its buffer", () => {
    const texts = [...randomTexts(20_000), ...sourceTexts()];
    const long = texts.join("\n");
    for (const t of [long, ...texts, long.slice(0, 1000)]) expect(joinedWords(t)).toBe(splitWordsByPattern(t).join(" "));
  });
});
