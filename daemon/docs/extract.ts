import { createRequire } from "node:module";
import path from "node:path";

/** One addressable piece of a document: a PDF page, or a DOCX/Markdown section under a heading. */
export interface DocUnit {
  page?: number;
  heading?: string;
  text: string;
}

export type DocKind = "pdf" | "docx" | "markdown";

export interface Extracted {
  kind: DocKind;
  units: DocUnit[];
  /** Pages for a PDF; sections otherwise (the unit of extraction throughput). */
  pages: number;
}

/** Why a document cannot be indexed; never fatal to an update. */
export type SkipReason = "encrypted" | "scanned (no text layer)" | "corrupt" | "too large" | "unreadable";

export class DocSkip extends Error {
  constructor(
    readonly reason: SkipReason,
    readonly detail?: string,
  ) {
    super(detail ? `${reason}: ${detail}` : reason);
    this.name = "DocSkip";
  }
}

const DOC_EXTENSIONS: Record<string, DocKind> = { ".pdf": "pdf", ".docx": "docx", ".md": "markdown", ".markdown": "markdown" };

/** The document kind of a file name, or undefined when it is not a document codemem reads. */
export function docKindForPath(file: string): DocKind | undefined {
  return DOC_EXTENSIONS[path.extname(file).toLowerCase()];
}

/** Extracts text units from a document's bytes; throws DocSkip when the file cannot be read. */
export async function extractDocument(kind: DocKind, data: Buffer): Promise<Extracted> {
  switch (kind) {
    case "pdf":
      return extractPdf(data);
    case "docx":
      return extractDocx(data);
    case "markdown":
      return extractMarkdown(data.toString("utf8"));
  }
}

// ---------------------------------------------------------------- PDF

/** Below this many non-space characters per page on average, a PDF is taken as scanned images. */
const MIN_CHARS_PER_PAGE = 16;

type PdfJs = typeof import("pdfjs-dist/legacy/build/pdf.mjs");
let pdfjsPromise: Promise<{ lib: PdfJs; cMapUrl: string; standardFontDataUrl: string }> | undefined;

// pdf.js is heavy: load it on first use. Importing the worker module first registers it on
// globalThis, so pdf.js runs it in this thread instead of spawning a worker.
function loadPdfJs() {
  pdfjsPromise ??= (async () => {
    await import("pdfjs-dist/legacy/build/pdf.worker.mjs" as string);
    const lib = await import("pdfjs-dist/legacy/build/pdf.mjs");
    const dir = path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
    // CMaps are needed to decode text in CJK fonts; in Node these are file paths.
    return { lib, cMapUrl: path.join(dir, "cmaps") + path.sep, standardFontDataUrl: path.join(dir, "standard_fonts") + path.sep };
  })();
  return pdfjsPromise;
}

interface PdfTextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

async function extractPdf(data: Buffer): Promise<Extracted> {
  const { lib, cMapUrl, standardFontDataUrl } = await loadPdfJs();
  const task = lib.getDocument({
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice(), // pdf.js transfers (detaches) its input
    disableFontFace: true,
    isEvalSupported: false,
    useSystemFonts: false,
    cMapUrl,
    cMapPacked: true,
    standardFontDataUrl,
    verbosity: 0,
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => undefined);
    const name = (err as Error)?.name;
    if (name === "PasswordException") throw new DocSkip("encrypted");
    throw new DocSkip("corrupt", (err as Error)?.message ?? String(err));
  }
  try {
    const units: DocUnit[] = [];
    let chars = 0;
    for (let n = 1; n <= doc.numPages; n++) {
      let text: string;
      try {
        const page = await doc.getPage(n);
        const content = await page.getTextContent();
        text = joinPdfItems(content.items.filter((i) => "str" in i) as PdfTextItem[]);
        page.cleanup();
      } catch (err) {
        throw new DocSkip("corrupt", `page ${n}: ${(err as Error)?.message ?? String(err)}`);
      }
      chars += text.replace(/\s+/g, "").length;
      if (text.trim()) units.push({ page: n, text });
    }
    if (doc.numPages > 0 && chars < MIN_CHARS_PER_PAGE * doc.numPages) throw new DocSkip("scanned (no text layer)");
    return { kind: "pdf", units, pages: doc.numPages };
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

/** Joins a page's text items into lines (hasEOL or a new baseline) and paragraphs (a tall gap). */
function joinPdfItems(items: PdfTextItem[]): string {
  let out = "";
  let lastY: number | undefined;
  let lastH = 0;
  let eol = false;
  for (const it of items) {
    const y = it.transform[5];
    const h = it.height || Math.abs(it.transform[3]) || lastH;
    if (lastY !== undefined && it.str !== "") {
      const gap = Math.abs(lastY - y);
      const lineH = Math.max(h, lastH, 1);
      if (gap > lineH * 1.9) out = out.replace(/[ \t]*\n?$/, "\n\n");
      else if (eol || gap > lineH * 0.5) {
        if (!out.endsWith("\n")) out += "\n";
      }
      // Items on one baseline are concatenated as pdf.js emits them: it inserts its own spaces.
    }
    if (it.str !== "") {
      out += it.str;
      lastY = y;
      lastH = h;
      eol = false;
    }
    if (it.hasEOL) eol = true;
  }
  return out
    .replace(/-\n(?=[a-z])/g, "") // re-join words hyphenated across lines
    .replace(/[ \t]+\n/g, "\n")
    .trim();
}

// ---------------------------------------------------------------- DOCX

async function extractDocx(data: Buffer): Promise<Extracted> {
  const mammoth = (await import("mammoth")).default;
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: data })).value;
  } catch (err) {
    const msg = (err as Error)?.message ?? String(err);
    // An encrypted DOCX is an OLE compound file, not a zip.
    if (data.subarray(0, 8).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))) throw new DocSkip("encrypted");
    throw new DocSkip("corrupt", msg);
  }
  const units = htmlSections(html);
  return { kind: "docx", units, pages: units.length };
}

/** Splits mammoth's HTML on h1..h6 into sections with their heading path; tables become " | " rows. */
export function htmlSections(html: string): DocUnit[] {
  const units: DocUnit[] = [];
  const trail: string[] = [];
  const re = /<h([1-6])[^>]*>([\s\S]*?)<\/h\1>/gi;
  let pos = 0;
  let heading: string | undefined;
  const flush = (body: string) => {
    const text = htmlToText(body);
    if (text) units.push(heading ? { heading, text } : { text });
  };
  for (let m = re.exec(html); m; m = re.exec(html)) {
    flush(html.slice(pos, m.index));
    const level = Number(m[1]);
    trail.length = Math.min(trail.length, level - 1);
    trail[level - 1] = inlineText(m[2]);
    heading = trail.filter(Boolean).join(" > ") || undefined;
    pos = m.index + m[0].length;
  }
  flush(html.slice(pos));
  return units;
}

function htmlToText(html: string): string {
  const s = html
    .replace(/<tr[^>]*>([\s\S]*?)<\/tr>/gi, (_m, row: string) => {
      const cells = [...row.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/gi)].map((c) => inlineText(c[1]));
      return `${cells.join(" | ")}\n`;
    })
    .replace(/<\/?table[^>]*>/gi, "\n\n")
    .replace(/<li[^>]*>/gi, "\n- ")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|ul|ol|blockquote|pre)>/gi, "\n\n");
  return decodeEntities(s.replace(/<[^>]+>/g, ""))
    .replace(/[ \t]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function inlineText(html: string): string {
  return decodeEntities(html.replace(/<[^>]+>/g, " ")).replace(/\s+/g, " ").trim();
}

function decodeEntities(s: string): string {
  const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === "#") {
      const cp = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : m;
    }
    return named[e.toLowerCase()] ?? m;
  });
}

// ---------------------------------------------------------------- Markdown

/** Splits Markdown on ATX (#..######) and setext headings, ignoring fenced code blocks. */
export function extractMarkdown(source: string): Extracted {
  const lines = source.replace(/^\uFEFF/, "").split(/\r?\n/);
  const units: DocUnit[] = [];
  const trail: string[] = [];
  let heading: string | undefined;
  let body: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    const text = body.join("\n").replace(/\n{3,}/g, "\n\n").trim();
    if (text) units.push(heading ? { heading, text } : { text });
    body = [];
  };
  const open = (level: number, title: string) => {
    flush();
    trail.length = Math.min(trail.length, level - 1);
    trail[level - 1] = title;
    heading = trail.filter(Boolean).join(" > ") || undefined;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (!fence) fence = f[1][0];
      else if (f[1][0] === fence) fence = undefined;
      body.push(line);
      continue;
    }
    if (fence) {
      body.push(line);
      continue;
    }
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      open(atx[1].length, atx[2]);
      continue;
    }
    const next = lines[i + 1];
    const prev = body.at(-1);
    if (line.trim() && next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next) && (prev === undefined || !prev.trim())) {
      open(next.trim()[0] === "=" ? 1 : 2, line.trim());
      i++;
      continue;
    }
    body.push(line);
  }
  flush();
  return { kind: "markdown", units, pages: units.length };
}
