import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DocsIndex } from "../../dist/daemon/docs/index.js";
import { BuiltinEmbedder } from "../../dist/daemon/index/embed/builtin.js";
import { resolveConfig } from "../../dist/shared/config.js";
import { QueryDocsInput, QueryDocsOutput } from "../../dist/shared/docs-schema.js";
import { stateDirs } from "../../dist/shared/paths.js";
import { TOKENIZER } from "../../dist/shared/tokens.js";
import { FIXTURES, makeDocsProject, removeProject } from "./helpers.js";

const flat = (s: string) => s.replace(/\s+/g, " ");

describe("documents index over the fixtures", () => {
  let root: string;
  let index: DocsIndex;
  let first: Awaited<ReturnType<DocsIndex["update"]>>;

  beforeAll(async () => {
    root = makeDocsProject();
    index = DocsIndex.open(root, new BuiltinEmbedder());
    first = await index.update(resolveConfig(root));
  });
  afterAll(() => {
    index.close();
    removeProject(root);
  });

  it("indexes the readable documents and reports the others, without failing", () => {
    expect(first.documents).toBe(3);
    expect(first.changed).toBe(3);
    expect(first.pages).toBeGreaterThanOrEqual(10);
    expect(first.chunks).toBeGreaterThanOrEqual(15);
    const reasons = Object.fromEntries(first.skipped.map((s) => [s.path, s.reason]));
    expect(reasons).toEqual({ "docs/corrupt.pdf": "corrupt", "docs/encrypted.pdf": "encrypted", "docs/scanned.pdf": "scanned (no text layer)" });
    expect(index.skipped().map((s) => s.path)).toEqual(["docs/corrupt.pdf", "docs/encrypted.pdf", "docs/scanned.pdf"]);
    expect(index.documentsIndexed()).toBe(3);
  });

  it("lives in its own file, apart from the code index", () => {
    expect(index.file).toBe(path.join(stateDirs(root).dbDir, "docs.db"));
    expect(fs.existsSync(index.file)).toBe(true);
    expect(fs.existsSync(stateDirs(root).dbFile)).toBe(false);
  });

  it("answers a page-7 question with page 7 first", async () => {
    const r = await index.search("What is the calibration coefficient of the flux capacitor?");
    expect(r.passages[0]).toMatchObject({ document: "docs/manual.pdf", page: 7 });
    expect(flat(r.passages[0].text)).toContain("42.7 gigawatts");
    expect(r.passages.length).toBe(5);
    expect(r.tokens).toBe(r.passages.reduce((s, p) => s + p.tokens, 0));
    // Scores descend.
    for (let i = 1; i < r.passages.length; i++) expect(r.passages[i].score).toBeLessThanOrEqual(r.passages[i - 1].score);
  });

  it("finds other pages by their own content", async () => {
    expect((await index.search("error E31 tube over-temperature", 1)).passages[0]).toMatchObject({ page: 9 });
    expect((await index.search("torque of the four M8 housing bolts", 1)).passages[0]).toMatchObject({ page: 4 });
  });

  it("finds DOCX table content with its heading attached", async () => {
    const [top] = (await index.search("unit price of the Kessler gate valve", 3)).passages;
    expect(top.document).toBe("docs/report.docx");
    expect(top.heading).toBe("Supplier Price Table");
    expect(top.text).toContain("Kessler GmbH | Gate valve DN150 | 1,240 EUR");
    expect(top.page).toBeUndefined();
  });

  it("answers non-ASCII questions", async () => {
    const strasse = (await index.search("Straße", 1)).passages[0];
    expect(strasse).toMatchObject({ document: "docs/report.docx", heading: "Projektbericht Straße 7" });
    const cafe = (await index.search("naïve café", 1)).passages[0];
    expect(cafe.heading).toBe("Projektbericht Straße 7 > Café notes");
    // Without the accents too: diacritics are folded.
    expect((await index.search("naive cafe", 1)).passages[0].heading).toBe("Projektbericht Straße 7 > Café notes");
    const tokyo = (await index.search("東京の事務所", 1)).passages[0];
    expect(tokyo.heading).toBe("東京 office");
    expect(tokyo.text).toContain("東京の事務所は設計図面");
  });

  it("finds Markdown sections under their heading path", async () => {
    const [top] = (await index.search("previous container image tag for rollback", 1)).passages;
    expect(top).toMatchObject({ document: "docs/notes.md", heading: "Release checklist > Rollback plan" });
  });

  it("never exceeds the token budget", async () => {
    for (const budget of [1, 10, 40, 60, 100, 150, 250, 400, 1000]) {
      for (const q of ["calibration coefficient flux capacitor", "supplier prices", "maintenance inspection of the discharge tubes"]) {
        const r = await index.search(q, 20, budget);
        const sum = r.passages.reduce((s, p) => s + p.tokens, 0);
        expect(r.tokens).toBe(sum);
        expect(sum).toBeLessThanOrEqual(budget);
        for (const p of r.passages) expect(p.tokens).toBeGreaterThan(0);
      }
    }
    // A budget smaller than the best passage cuts it at a sentence instead of returning nothing.
    const cut = await index.search("What is the calibration coefficient of the flux capacitor?", 1, 80);
    expect(cut.passages).toHaveLength(1);
    expect(cut.tokens).toBeLessThanOrEqual(80);
  });

  it("rejects bad arguments with stable codes", async () => {
    await expect(index.search("   ")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(index.search("x", 0)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(index.search("x", 21)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(index.search("x", 5, 0)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("produces output that the published schema accepts", async () => {
    const input = QueryDocsInput.parse({ project_path: root, question: "flux capacitor calibration" });
    expect(input.limit).toBe(5);
    expect(() => QueryDocsInput.parse({ project_path: "relative/dir", question: "q" })).toThrow();
    expect(() => QueryDocsInput.parse({ project_path: root, question: "q", limit: 21 })).toThrow();
    expect(() => QueryDocsInput.parse({ project_path: root, question: "q", extra: 1 })).toThrow();
    const r = await index.search(input.question, input.limit, input.budget);
    const out = QueryDocsOutput.parse({ ...r, tokenizer: TOKENIZER, documents_indexed: index.documentsIndexed(), skipped: index.skipped() });
    expect(out.passages[0].page).toBe(7);
  });
});

describe("incremental updates", () => {
  let root: string;
  let index: DocsIndex;
  afterEach(() => {
    index?.close();
    if (root) removeProject(root);
  });

  it("skips unchanged documents, replaces modified ones and drops deleted ones", async () => {
    root = makeDocsProject(["manual.pdf", "report.docx", "notes.md", "encrypted.pdf"]);
    const cfg = resolveConfig(root);
    index = DocsIndex.open(root, new BuiltinEmbedder());
    const a = await index.update(cfg);
    expect(a).toMatchObject({ documents: 3, changed: 3, removed: 0 });

    const b = await index.update(cfg);
    expect(b).toMatchObject({ documents: 3, chunks: a.chunks, changed: 0, removed: 0, pages: 0 });
    expect(b.skipped).toEqual([{ path: "docs/encrypted.pdf", reason: "encrypted" }]);

    // Touched but identical content: the hash says unchanged.
    const md = path.join(root, "docs", "notes.md");
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(md, later, later);
    expect((await index.update(cfg)).changed).toBe(0);

    // Modified: the old text is gone, the new text is found.
    fs.writeFileSync(md, "# Release checklist\n\n## Canary\n\nRoute five percent of traffic to the zebra canary pool for one hour.\n");
    const c = await index.update(cfg);
    expect(c).toMatchObject({ documents: 3, changed: 1, removed: 0 });
    const zebra = await index.search("zebra canary pool", 1);
    expect(zebra.passages[0]).toMatchObject({ document: "docs/notes.md", heading: "Release checklist > Canary" });
    const old = await index.search("stable-previous container image rollback", 10);
    expect(old.passages.some((p) => p.text.includes("stable-previous"))).toBe(false);

    // Deleted: removed from the index.
    fs.rmSync(path.join(root, "docs", "report.docx"));
    const d = await index.update(cfg);
    expect(d).toMatchObject({ documents: 2, changed: 0, removed: 1 });
    const prices = await index.search("Kessler gate valve unit price", 20);
    expect(prices.passages.some((p) => p.document === "docs/report.docx")).toBe(false);

    // A reopened index keeps its state.
    index.close();
    index = DocsIndex.open(root, new BuiltinEmbedder());
    expect((await index.update(cfg)).changed).toBe(0);
    expect((await index.search("flux capacitor calibration coefficient", 1)).passages[0].page).toBe(7);
  });

  it("honours .gitignore, exclude_patterns and the always-excluded directories", async () => {
    root = makeDocsProject(["notes.md"]);
    const put = (rel: string, from: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.copyFileSync(path.join(FIXTURES, from), path.join(root, rel));
    };
    put("private/secret-manual.pdf", "manual.pdf");
    put("archive/old-report.docx", "report.docx");
    put("node_modules/pkg/README.md", "notes.md");
    put("dist/guide.md", "notes.md");
    put("codegraph-out/copy.md", "notes.md");
    fs.writeFileSync(path.join(root, ".gitignore"), "private/\n");
    fs.writeFileSync(path.join(root, "codemem.toml"), '[build]\nexclude_patterns = ["archive"]\n');
    index = DocsIndex.open(root, new BuiltinEmbedder());
    const r = await index.update(resolveConfig(root));
    expect(r.documents).toBe(1);
    expect(r.skipped).toEqual([]);
    const hits = await index.search("flux capacitor calibration coefficient Kessler", 20);
    expect(new Set(hits.passages.map((p) => p.document))).toEqual(new Set(["docs/notes.md"]));

    // Lifting the exclusion indexes it at the next update.
    fs.writeFileSync(path.join(root, "codemem.toml"), "[build]\nexclude_patterns = []\n");
    const r2 = await index.update(resolveConfig(root));
    expect(r2).toMatchObject({ documents: 2, changed: 1 });
  });

  it("re-embeds when the embedder changes and refuses to search with another one", async () => {
    root = makeDocsProject(["notes.md"]);
    const cfg = resolveConfig(root);
    index = DocsIndex.open(root, new BuiltinEmbedder());
    await index.update(cfg);
    index.close();
    const builtin = new BuiltinEmbedder();
    const other = { id: "test-other:384", dim: 384, embed: (t: string[]) => builtin.embed(t) };
    index = DocsIndex.open(root, other);
    await expect(index.search("rollback")).rejects.toMatchObject({ code: "INDEX_EMBEDDER_MISMATCH" });
    const r = await index.update(cfg);
    expect(r.changed).toBe(1);
    expect((await index.search("rollback plan", 1)).passages[0].document).toBe("docs/notes.md");
  });

  it("refuses to search an index never built", async () => {
    root = makeDocsProject([]);
    index = DocsIndex.open(root, new BuiltinEmbedder());
    await expect(index.search("anything")).rejects.toMatchObject({ code: "INDEX_MISSING" });
    const r = await index.update(resolveConfig(root));
    expect(r).toMatchObject({ documents: 0, chunks: 0 });
    expect((await index.search("anything")).passages).toEqual([]);
  });
});
