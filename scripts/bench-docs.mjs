#!/usr/bin/env node
// Document extraction throughput: the 10-page fixture PDF ×N copies plus the DOCX ×N, extracted
// and chunked (no embedding, no SQLite), then one full DocsIndex.update over the same files.
// Usage: npm run build && node scripts/bench-docs.mjs [copies=20]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "..", "dist");
const fixtures = path.join(here, "..", "test", "fixtures", "docs");
const { extractDocument } = await import(path.join(dist, "daemon/docs/extract.js"));
const { chunkUnits } = await import(path.join(dist, "daemon/docs/chunk.js"));
const { DocsIndex } = await import(path.join(dist, "daemon/docs/index.js"));
const { BuiltinEmbedder } = await import(path.join(dist, "daemon/index/embed/builtin.js"));
const { resolveConfig } = await import(path.join(dist, "shared/config.js"));

const copies = Number(process.argv[2] ?? 20);
const pdf = fs.readFileSync(path.join(fixtures, "manual.pdf"));
const docx = fs.readFileSync(path.join(fixtures, "report.docx"));

// Warm-up: pdf.js and mammoth load lazily; loading is not throughput.
await extractDocument("pdf", pdf);
await extractDocument("docx", docx);

async function run(kind, data) {
  const t0 = performance.now();
  let pages = 0;
  let chunks = 0;
  for (let i = 0; i < copies; i++) {
    const ex = await extractDocument(kind, data);
    pages += ex.pages;
    chunks += chunkUnits(`copy-${i}`, ex.units).length;
  }
  const s = (performance.now() - t0) / 1000;
  return { pages, chunks, s };
}

const p = await run("pdf", pdf);
const d = await run("docx", docx);
console.log(`PDF  ${copies} × manual.pdf: ${p.pages} pages, ${p.chunks} chunks in ${p.s.toFixed(2)} s → ${(p.pages / p.s).toFixed(1)} pages/s (extract + chunk)`);
console.log(`DOCX ${copies} × report.docx: ${d.pages} sections, ${d.chunks} chunks in ${d.s.toFixed(2)} s → ${(copies / d.s).toFixed(1)} documents/s`);

// End to end: walk, hash, extract, chunk, embed, write docs.db.
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-bench-docs-")));
try {
  fs.mkdirSync(path.join(root, "docs"));
  for (let i = 0; i < copies; i++) {
    fs.writeFileSync(path.join(root, "docs", `manual-${i}.pdf`), pdf);
    fs.writeFileSync(path.join(root, "docs", `report-${i}.docx`), docx);
  }
  const index = DocsIndex.open(root, new BuiltinEmbedder());
  const cfg = resolveConfig(root);
  const full = await index.update(cfg);
  const again = await index.update(cfg);
  index.close();
  const pdfPages = copies * 10;
  console.log(`update: ${full.documents} documents, ${full.chunks} chunks, ${full.pages} pages+sections in ${full.seconds.toFixed(2)} s → ${(pdfPages / full.seconds).toFixed(1)} PDF pages/s end to end`);
  console.log(`no-op update: ${again.changed} changed in ${again.seconds.toFixed(3)} s`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
