import { createHash } from "node:crypto";
import type { LexicalFields } from "../store/types.js";
import type { NodeRecord } from "./resolve.js";
import { identifiersOf, splitWords } from "./text.js";

/** What a node *is*, as text for the embedder: name, kind, signature, docstring, path, body identifiers. */
export function embeddingText(n: NodeRecord, childNames: string[]): string {
  const doc = n.docstring.split(/\n\s*\n/)[0].slice(0, 400);
  const body = n.type === "module" ? childNames.slice(0, 60).join(" ") : identifiersOf(n.code, 40).join(" ");
  // The name twice: what a thing is called is the strongest signal of what it does.
  return `${n.name} ${n.name} ${n.qualified_name} | ${n.type} | ${n.signature} | ${doc} | ${n.file_path} | ${body}`;
}

/** Columns of the lexical (FTS5) index, identifiers split into words. */
export function lexicalFields(n: NodeRecord, childNames: string[]): LexicalFields {
  const words = (s: string) => splitWords(s).join(" ");
  return {
    name: `${n.name} ${words(n.name)}`,
    qualified: words(n.qualified_name),
    signature: words(n.signature),
    doc: n.docstring.slice(0, 2000),
    path: words(n.file_path.replace(/\.[^./]+$/, "")),
    body: n.type === "module" ? words(childNames.join(" ")) : words(identifiersOf(n.code, 80).join(" ")),
  };
}

export function textHash(embedding: string, lexical: LexicalFields): string {
  return createHash("sha1").update(embedding).update("\u0000").update(JSON.stringify(lexical)).digest("hex");
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
