import type { MemNode, Retriever } from "./retriever.js";

/**
 * A name the package's entry file re-exports (`from .sessions import Session` in `__init__.py`,
 * `export { map } from './internal/operators/map'` in `index.ts`) counts as this many files using
 * it: it is the public API by the project's own say, where the graph often misses the callers
 * (`requests.Session()` in a test resolves to no definition).
 */
const EXPORT_WEIGHT = 5;
/** Key symbols per file, so that the list maps the project instead of one module. */
const MAX_PER_FILE = 2;
const ENTRY_FILE = /(^|\/)(__init__\.py|index\.[cm]?[jt]sx?|lib\.rs|mod\.rs)$/;
/** Python's private modules and names (`_internal_utils.py`, `_basic_auth_str`); dunder files are not private. */
const PRIVATE_PATH = /(^|\/)_[^_/][^/]*$|(^|\/)_[^_/][^/]*\//;
/** Code that shows the project in use rather than being it. */
const PERIPHERAL = /(^|\/)(examples?|docs?|samples?)\//;

/** A project file's text by its project-relative path ("" when it cannot be read); a module node's stored code is empty. */
export type ReadSource = (file: string) => Promise<string>;

interface Ranked {
  node: MemNode;
  score: number;
}

/**
 * The entry points a newcomer needs: public classes and functions of the implementation (not
 * tests, examples, private helpers or methods), ranked by how many other files use them or
 * their members (calls and inheritance) plus the package's re-exports, at most two per file.
 */
export async function keySymbols(r: Retriever, read: ReadSource, max: number): Promise<MemNode[]> {
  const candidates = r.nodes.filter((n) => n.type !== "module" && n.type !== "method" && isPublic(n) && !r.isTest(n.file_path) && !PERIPHERAL.test(n.file_path));
  const users = new Map<string, Set<string>>();
  const touches = new Map<string, number>();
  for (const e of await r.store.edges()) {
    // Dispatch candidates are possible uses, not uses.
    if ((e.type !== "calls" && e.type !== "inherits") || e.source === e.target || e.dispatch) continue;
    const from = r.byId.get(e.source);
    const to = ownerOf(r, e.target);
    if (!from || !to) continue;
    touches.set(to.id, (touches.get(to.id) ?? 0) + 1);
    if (from.file_path === to.file_path) continue;
    let s = users.get(to.id);
    if (!s) users.set(to.id, (s = new Set()));
    s.add(from.file_path);
  }
  const exported = await reExported(r, read);
  const ranked: Ranked[] = candidates.map((n) => ({ node: n, score: (users.get(n.id)?.size ?? 0) + (exported(n) ? EXPORT_WEIGHT : 0) }));
  ranked.sort((a, b) => b.score - a.score || (touches.get(b.node.id) ?? 0) - (touches.get(a.node.id) ?? 0) || (a.node.id < b.node.id ? -1 : 1));
  const perFile = new Map<string, number>();
  const out: MemNode[] = [];
  for (const { node } of ranked) {
    if (out.length >= max) break;
    const k = perFile.get(node.file_path) ?? 0;
    if (k >= MAX_PER_FILE) continue;
    perFile.set(node.file_path, k + 1);
    out.push(node);
  }
  return out;
}

function isPublic(n: MemNode): boolean {
  if (n.name.startsWith("_") || PRIVATE_PATH.test(n.file_path)) return false;
  // Go exports by capital letter.
  return n.language !== "go" || /^[A-Z]/.test(n.name);
}

/** The class a method belongs to (its users are the class's users), else the node itself. */
function ownerOf(r: Retriever, id: string): MemNode | undefined {
  let n = r.byId.get(id);
  while (n && n.type === "method" && n.parent) n = r.byId.get(n.parent);
  return n;
}

/** Whether an entry file (`__init__.py`, `index.ts`, …) at or above a symbol's directory names it. */
async function reExported(r: Retriever, read: ReadSource): Promise<(n: MemNode) => boolean> {
  const entries: { dir: string; names: Set<string> }[] = [];
  for (const m of r.nodes) {
    if (m.type !== "module" || !ENTRY_FILE.test(m.file_path) || r.isTest(m.file_path)) continue;
    const names = new Set((await read(m.file_path)).match(/[A-Za-z_$][\w$]*/g) ?? []);
    entries.push({ dir: m.file_path.slice(0, m.file_path.lastIndexOf("/") + 1), names });
  }
  return (n) => entries.some((e) => n.file_path.startsWith(e.dir) && e.names.has(n.name));
}
