import { hash } from "node:crypto";
import type { LexicalFields } from "../store/types.js";
import type { NodeRecord } from "./resolve.js";
import { identifiersOf, joinedWords } from "./text.js";
import type { FileExtract } from "./types.js";

/** The fields of a node its documents are made of. */
type DocFields = Pick<NodeRecord, "name" | "qualified_name" | "type" | "signature" | "docstring" | "file_path" | "code">;

/** A module of fewer definitions is a script (commands, not functions): its own words say what it does. */
export const SCRIPT_MAX_DEFS = 3;
/** Distinct words of a script's text its module's documents carry (its comments, messages and commands, in order). */
const SCRIPT_WORDS = 150;

/**
 * A node's documents: its embedding text, lexical fields and their hash (its code's identifiers read
 * once for both). `fileWords`: a module's file words, of which a script's module carries the first.
 */
export function nodeDocuments(n: DocFields, childNames: string[], fileWords = ""): { text: string; lexical: LexicalFields; hash: string } {
  const identifiers = wordsOf(n, childNames, fileWords, 80);
  const text = textOf(n, childNames, identifiers.slice(0, 40));
  const lexical = lexicalFields(n, childNames, identifiers);
  return { text, lexical, hash: textHash(text, lexical) };
}

/** The content words a module's documents carry: a script's first distinct words, none for a module of definitions (their names say it). */
function scriptWords(childNames: string[], fileWords: string): string[] {
  if (childNames.length >= SCRIPT_MAX_DEFS || !fileWords) return [];
  const out = new Set<string>();
  for (const w of fileWords.split(" ")) {
    if (w.length < 2) continue;
    out.add(w);
    if (out.size >= SCRIPT_WORDS) break;
  }
  return [...out];
}

/**
 * nodeDocuments' embedding text alone, for a fill (whose lexical fields and hash are written already):
 * the same text without splitting the words of the lexical fields or hashing (~0.7 s of Go's src).
 */
export function embeddingText(n: DocFields, childNames: string[], fileWords = ""): string {
  return textOf(n, childNames, wordsOf(n, childNames, fileWords, 40).slice(0, 40));
}

/** The words a node's documents carry beside its names: a module's script words, a definition's code's first `limit` identifiers. */
function wordsOf(n: DocFields, childNames: string[], fileWords: string, limit: number): string[] {
  return n.type === "module" ? scriptWords(childNames, fileWords) : identifiersOf(n.code, limit);
}

/** What a node *is*, as text for the embedder: name, kind, signature, docstring, path, body identifiers (its code's first 40; a module's definitions, and a script's first words). */
function textOf(n: DocFields, childNames: string[], identifiers: string[]): string {
  const doc = n.docstring.split(/\n\s*\n/)[0].slice(0, 400);
  const body = n.type === "module" ? [...childNames.slice(0, 60), ...identifiers].join(" ") : identifiers.join(" ");
  // The name twice: what a thing is called is the strongest signal of what it does.
  return `${n.name} ${n.name} ${n.qualified_name} | ${n.type} | ${n.signature} | ${doc} | ${n.file_path} | ${body}`;
}

/** Columns of the lexical (FTS5) index, identifiers (the code's first 80) split into words. */
function lexicalFields(n: DocFields, childNames: string[], identifiers: string[]): LexicalFields {
  return {
    name: `${n.name} ${joinedWords(n.name)}`,
    qualified: joinedWords(n.qualified_name),
    signature: joinedWords(n.signature),
    doc: n.docstring.slice(0, 2000),
    path: joinedWords(n.file_path.replace(/\.[^./]+$/, "")),
    body: n.type === "module" ? joinedWords([...childNames, ...identifiers].join(" ")) : joinedWords(identifiers.join(" ")),
  };
}

function textHash(embedding: string, lexical: LexicalFields): string {
  // One string hashed at once: the bytes a streamed hash of the three parts reads (a lone surrogate at a seam is U+FFFD either way), without a Hash object per node.
  return hash("sha1", `${embedding}\u0000${JSON.stringify(lexical)}`, "hex");
}

export function childNamesByParent(nodes: NodeRecord[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const n of nodes) {
    if (!n.parent) continue;
    const l = m.get(n.parent) ?? [];
    l.push(n.name);
    m.set(n.parent, l);
  }
  return m;
}

/** A module's file words: its file's identifiers split into words, comments included (the file-level lexical index). */
export function fileWordsOf(text: string): string {
  return joinedWords(text.slice(0, 400_000));
}

/**
 * A definition's documents (text hash, lexical fields, vector) made by the parse worker that read
 * its file, while the other worker parses: a full build's embed phase then only looks them up.
 * Module nodes are left to the build (their text lists the file's own definitions, which resolution
 * may attach elsewhere).
 */
export interface PreparedDoc {
  hash: string;
  lexical: LexicalFields;
  /** Absent when the build embeds after it is answerable (fill). */
  vector?: Float32Array;
  /** The node's text in a local index's stored form, when the build asked the worker for it (BuildDelta.nodes' `stored`). */
  stored?: Buffer;
}

/** What identifies a definition's node across the worker and the build: file, first line, kind and qualified name. */
export function docKey(n: Pick<NodeRecord, "file_path" | "line_start" | "type" | "qualified_name">): string {
  return `${n.file_path}\0${n.line_start}\0${n.type}\0${n.qualified_name}`;
}

/** The documents of a file's definitions, embedded with `embed` when given; definitions sharing a key are left out (the build makes theirs). */
export function prepareDocs(ex: FileExtract, embed?: (text: string) => Float32Array): Map<string, PreparedDoc> {
  const out = new Map<string, PreparedDoc>();
  const twice = new Set<string>();
  for (const d of ex.defs) {
    const fields = { name: d.name, qualified_name: d.qualifiedName, type: d.kind, signature: d.signature, docstring: d.docstring, file_path: ex.path, code: d.code };
    const key = docKey({ file_path: ex.path, line_start: d.lineStart, type: d.kind, qualified_name: d.qualifiedName });
    if (out.has(key)) twice.add(key);
    const { text, lexical, hash } = nodeDocuments(fields, []);
    out.set(key, embed ? { hash, lexical, vector: embed(text) } : { hash, lexical });
  }
  for (const k of twice) out.delete(k);
  return out;
}
