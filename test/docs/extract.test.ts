import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { chunkUnits, MAX_CHUNK_TOKENS, MIN_CHUNK_TOKENS } from "../../dist/daemon/docs/chunk.js";
import { DocSkip, docKindForPath, extractDocument, extractMarkdown } from "../../dist/daemon/docs/extract.js";
import { countTokens } from "../../dist/shared/tokens.js";
import { FIXTURES } from "./helpers.js";

const read = (f: string) => fs.readFileSync(path.join(FIXTURES, f));

async function skipReason(file: string): Promise<string> {
  try {
    await extractDocument("pdf", read(file));
  } catch (err) {
    expect(err).toBeInstanceOf(DocSkip);
    return (err as DocSkip).reason;
  }
  throw new Error(`${file} was extracted`);
}

describe("document extraction", () => {
  it("reads a 10-page PDF page by page, the answer sentence on page 7 only", async () => {
    const ex = await extractDocument("pdf", read("manual.pdf"));
    expect(ex.kind).toBe("pdf");
    expect(ex.pages).toBe(10);
    expect(ex.units.map((u) => u.page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const flat = (s: string) => s.replace(/\s+/g, " ");
    const holders = ex.units.filter((u) => flat(u.text).includes("calibration coefficient of the flux capacitor is 42.7 gigawatts"));
    expect(holders.map((u) => u.page)).toEqual([7]);
    // Lines are kept apart, not glued together.
    expect(ex.units[6].text.split("\n").length).toBeGreaterThan(3);
  });

  it("reads DOCX sections under their headings, tables as ' | ' rows, non-ASCII intact", async () => {
    const ex = await extractDocument("docx", read("report.docx"));
    expect(ex.kind).toBe("docx");
    const byHeading = new Map(ex.units.map((u) => [u.heading, u.text]));
    expect([...byHeading.keys()]).toEqual(["Projektbericht Straße 7", "Projektbericht Straße 7 > Café notes", "Supplier Price Table", "東京 office"]);
    expect(byHeading.get("Supplier Price Table")).toContain("Kessler GmbH | Gate valve DN150 | 1,240 EUR");
    expect(byHeading.get("Supplier Price Table")).toContain("Supplier | Part | Unit price");
    expect(byHeading.get("Projektbericht Straße 7 > Café notes")).toContain("naïve café");
    expect(byHeading.get("東京 office")).toContain("東京の事務所");
  });

  it("splits Markdown on headings but not on '#' lines inside code fences", () => {
    const ex = extractMarkdown(read("notes.md").toString("utf8"));
    expect(ex.units.map((u) => u.heading)).toEqual(["Release checklist", "Release checklist > Database migrations", "Release checklist > Rollback plan"]);
    expect(ex.units[2].text).toContain("# not a heading: code block");
    const setext = extractMarkdown("Title\n=====\n\nintro\n\nPart\n----\nbody\n");
    expect(setext.units).toEqual([{ heading: "Title", text: "intro" }, { heading: "Title > Part", text: "body" }]);
  });

  it("reports encrypted, scanned and corrupt PDFs with their reason", async () => {
    expect(await skipReason("encrypted.pdf")).toBe("encrypted");
    expect(await skipReason("scanned.pdf")).toBe("scanned (no text layer)");
    expect(await skipReason("corrupt.pdf")).toBe("corrupt");
    await expect(extractDocument("docx", Buffer.from("not a zip at all"))).rejects.toMatchObject({ reason: "corrupt" });
  });

  it("knows document kinds by extension", () => {
    expect(docKindForPath("a/B.PDF")).toBe("pdf");
    expect(docKindForPath("x.docx")).toBe("docx");
    expect(docKindForPath("README.md")).toBe("markdown");
    expect(docKindForPath("notes.markdown")).toBe("markdown");
    expect(docKindForPath("old.doc")).toBeUndefined();
  });
});

describe("chunking", () => {
  const sentence = (i: number) => `Sentence number ${i} explains how the pressure valve ${i % 7} is serviced in winter conditions.`;
  const para = (from: number, n: number) => Array.from({ length: n }, (_, k) => sentence(from + k)).join(" ");

  it("never spans two pages and keeps chunks within bounds", () => {
    const long = Array.from({ length: 12 }, (_, p) => para(p * 10, 10)).join("\n\n"); // ~2,400 tokens
    const chunks = chunkUnits("d.pdf", [
      { page: 1, text: long },
      { page: 2, text: "Short page." },
      { page: 3, text: para(500, 60) }, // one paragraph longer than a chunk: sentence splits
    ]);
    for (const c of chunks) {
      expect(c.tokens).toBe(countTokens(c.text));
      expect(c.tokens).toBeLessThanOrEqual(MAX_CHUNK_TOKENS);
    }
    const p1 = chunks.filter((c) => c.page === 1);
    const p3 = chunks.filter((c) => c.page === 3);
    expect(p1.length).toBeGreaterThan(5);
    expect(p3.length).toBeGreaterThan(2);
    for (const c of [...p1, ...p3]) expect(c.tokens).toBeGreaterThanOrEqual(MIN_CHUNK_TOKENS);
    expect(chunks.filter((c) => c.page === 2).map((c) => c.text)).toEqual(["Short page."]);
    // Nothing lost, nothing duplicated: every sentence sits in exactly one chunk of its page.
    for (let i = 500; i < 560; i++) expect(p3.filter((c) => c.text.includes(sentence(i))).length).toBe(1);
    // Splits fall on sentence ends.
    for (const c of p3) expect(c.text).toMatch(/\.$/);
  });

  it("keeps the heading on every chunk of a section", () => {
    const chunks = chunkUnits("d.md", [{ heading: "A > B", text: para(0, 50) }, { heading: "C", text: "tail" }]);
    expect(chunks.length).toBeGreaterThan(2);
    expect(new Set(chunks.slice(0, -1).map((c) => c.heading))).toEqual(new Set(["A > B"]));
    expect(chunks.at(-1)).toMatchObject({ doc: "d.md", heading: "C", text: "tail" });
  });
});
