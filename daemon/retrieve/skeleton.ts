import type { Retriever } from "./retriever.js";

/** A file's outline from the graph: signatures, first docstring lines and line ranges; bodies elided. */
export function renderSkeleton(r: Retriever, rel: string) {
  const nodes = [...r.nodesOf(rel)].sort((a, b) => a.line_start - b.line_start || (a.type === "module" ? -1 : 1));
  const mod = nodes.find((n) => n.type === "module");
  const depth = (id: string | null): number => {
    let d = 0;
    let cur = id ? r.byId.get(id) : undefined;
    while (cur && cur.type !== "module" && cur.file_path === rel) {
      d++;
      cur = cur.parent ? r.byId.get(cur.parent) : undefined;
    }
    return d;
  };
  const lines = [`# ${rel} (${mod?.language ?? "?"}, ${mod?.line_end ?? 0} lines)`];
  const doc = mod?.docstring.split(/\n\s*\n/)[0].replace(/\s+/g, " ").trim();
  if (doc) lines.push(doc);
  const symbols = [];
  for (const n of nodes) {
    if (n.type === "module") continue;
    const indent = "  ".repeat(depth(n.parent));
    const d = n.docstring.split("\n")[0].trim();
    lines.push(`${indent}L${n.line_start}-${n.line_end} ${n.signature || `${n.type} ${n.name}`}${d ? `  # ${d.slice(0, 100)}` : ""}`);
    symbols.push({ id: n.id, name: n.qualified_name, type: n.type, line_start: n.line_start, line_end: n.line_end, signature: n.signature });
  }
  return { file_path: rel, language: mod?.language ?? "unknown", outline: lines.join("\n"), symbols };
}
