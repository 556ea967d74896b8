// The one shape every language's ground truth takes, and the cache that keeps it.
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";

/**
 * A truth: `defs` (functions and methods of the project: file, name, first line, line of the
 * name, last line, kind, and for a constructor its class) and `sites` (every call made inside a
 * def: the caller's index, the name called, the call's kind, its line, and what the compiler
 * says it calls). Status of a site:
 *   project   the compiler resolved it to `target`, a def of the project;
 *   outside   resolved to something that is not a def of the project (the standard library, a
 *             dependency, a parameter, a class without a constructor);
 *   local     resolved to a function defined inside another def (no node of the graph);
 *   dispatch  resolved to an interface's or protocol's member: the function run is chosen at run time;
 *   unknown   not resolved (an untyped receiver, a dependency that is not there).
 * Kinds: plain, imported, this (this/self/the Go receiver), method (another receiver),
 * constructor (new, super, a class called in Python, super().m()).
 */
export class TruthBuilder {
  constructor(language, tool) {
    this.language = language;
    this.tool = tool;
    this.defs = [];
    this.index = new Map();
    this.sites = [];
  }

  /** The index of a def, added on first sight. */
  def(d) {
    const k = `${d.file}\0${d.line}\0${d.name}`;
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.defs.length;
      this.index.set(k, i);
      this.defs.push(d);
    }
    return i;
  }

  site(s) {
    this.sites.push(s);
  }

  done(coverage) {
    return { language: this.language, tool: this.tool, coverage, defs: this.defs, sites: this.sites };
  }
}

/** A digest of the files that compute truths (and of `extra`): a cached truth is reused only when they are unchanged. */
export function truthVersion(files, extra = "") {
  const h = crypto.createHash("sha256");
  h.update(extra);
  for (const f of files) h.update(fs.readFileSync(f));
  return h.digest("hex").slice(0, 16);
}

/** The cached truth of a project at its commit, or what `compute` gives (then cached). */
export async function cachedTruth(cacheDir, p, version, compute) {
  const file = path.join(cacheDir, `${p.name}.json`);
  if (fs.existsSync(file)) {
    const t = JSON.parse(fs.readFileSync(file, "utf8"));
    if (t.commit === p.commit && t.version === version) return { ...t, cached: true };
  }
  const t = { commit: p.commit, version, ...(await compute()) };
  fs.mkdirSync(cacheDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(t));
  return t;
}
