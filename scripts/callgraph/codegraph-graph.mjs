// codegraph's graph of a tree (@colbymchenry/codegraph, a tree-sitter code graph with its own SQLite
// index), in the shape of codemem's graph.json so that compare.mjs scores both the same way.
// Installed apart from the repo's dependencies:
//   npm install --prefix .bench-cache/codegraph @colbymchenry/codegraph@1.6.1
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import Database from "better-sqlite3";

export const CODEGRAPH_VERSION = "1.6.1";

/** The installed CLI (npm's launcher of the platform bundle), or an error saying how to install it. */
export function codegraphCli(root) {
  const dir = path.join(root, ".bench-cache/codegraph/node_modules/@colbymchenry/codegraph");
  const pkg = path.join(dir, "package.json");
  const version = fs.existsSync(pkg) ? JSON.parse(fs.readFileSync(pkg, "utf8")).version : undefined;
  if (version !== CODEGRAPH_VERSION) {
    throw new Error(`codegraph ${CODEGRAPH_VERSION} is not installed (found ${version ?? "none"}): npm install --prefix .bench-cache/codegraph @colbymchenry/codegraph@${CODEGRAPH_VERSION}`);
  }
  return path.join(dir, "npm-shim.js");
}

// No telemetry, no background daemon or watcher, no download of a bundle npm did not install; its
// home (where it may keep settings) inside the work directory.
const envOf = (home) => ({ ...process.env, HOME: home, CODEGRAPH_TELEMETRY: "0", DO_NOT_TRACK: "1", CODEGRAPH_NO_DAEMON: "1", CODEGRAPH_NO_DOWNLOAD: "1" });

/** Indexes a copy of `tree` with codegraph's CLI (`codegraph init --yes`) and returns its graph. */
export function codegraphGraph(cli, tree, work) {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(work), { recursive: true });
  fs.cpSync(tree, work, { recursive: true });
  const home = `${work}.home`;
  fs.mkdirSync(home, { recursive: true });
  const t0 = performance.now();
  execFileSync(process.execPath, [cli, "init", "--yes", work], { cwd: work, env: envOf(home), stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 26 });
  const seconds = (performance.now() - t0) / 1000;
  const db = new Database(path.join(work, ".codegraph/codegraph.db"), { readonly: true });
  try {
    // An index run that was stopped midway still exits 0 with an empty index.
    if (!db.prepare("SELECT 1 FROM nodes LIMIT 1").get()) throw new Error(`codegraph indexed nothing in ${work} (its index run did not finish: see \`codegraph status\`)`);
    return { graph: graphOf(db), seconds };
  } finally {
    db.close();
  }
}

/**
 * codegraph's nodes and call edges as codemem's graph.json has them. Its `instantiates` edges (`new C()`
 * to the class) are calls of the class, as codemem links them. A function or method nested in another
 * (in a lambda's class, an anonymous or local class) makes its calls for the outermost one, the
 * granularity of the truth and of codemem; an edge is kept once per caller and callee.
 */
function graphOf(db) {
  const nodes = db.prepare("SELECT id, kind, name, file_path, start_line FROM nodes").all().map((n) => ({ id: n.id, type: n.kind, name: n.name, file_path: n.file_path, line_start: n.start_line }));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map(db.prepare("SELECT source, target FROM edges WHERE kind = 'contains'").all().map((e) => [e.target, e.source]));
  const isFn = (n) => n && (n.type === "function" || n.type === "method");
  const outermost = (id) => {
    let top = id;
    for (let p = parent.get(id), hops = 0; p !== undefined && hops < 64; p = parent.get(p), hops++) if (isFn(byId.get(p))) top = p;
    return top;
  };
  const seen = new Set();
  const edges = [];
  for (const e of db.prepare("SELECT source, target FROM edges WHERE kind IN ('calls', 'instantiates')").all()) {
    const source = isFn(byId.get(e.source)) ? outermost(e.source) : e.source;
    const k = `${source}>${e.target}`;
    if (seen.has(k)) continue;
    seen.add(k);
    edges.push({ source, target: e.target, type: "calls" });
  }
  // Nested defs are no nodes at this granularity: edges to them are edges to no function.
  const nested = new Set(nodes.filter((n) => isFn(n) && outermost(n.id) !== n.id).map((n) => n.id));
  return { nodes: nodes.map((n) => (nested.has(n.id) ? { ...n, type: "nested" } : n)), edges };
}
