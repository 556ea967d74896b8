import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { countTokens } from "../../dist/shared/tokens.js";
import { makeProject } from "../helpers.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Python's json and email packages: enough files for the pool's workers (24 or more). */
function stdlibFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of ["json", "email"]) {
    for (const f of fs.readdirSync(path.join("/usr/lib/python3.11", d))) if (f.endsWith(".py")) out[`${d}/${f}`] = fs.readFileSync(path.join("/usr/lib/python3.11", d, f), "utf8");
  }
  return out;
}

describe("file token counts", () => {
  it("a build parsed on workers stores each file's o200k token count and their total", async () => {
    const files = stdlibFiles();
    const p = makeProject(files);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(p.cleanup, () => engine.close());
    await engine.build({ project_path: p.root });
    const db = new Database(path.join(p.root, "codegraph-out/codemem_db/index.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT path, tokens FROM files ORDER BY path").all() as { path: string; tokens: number }[];
      expect(rows).toEqual(Object.keys(files).sort().map((f) => ({ path: f, tokens: countTokens(files[f]) })));
      const total = (db.prepare("SELECT value FROM meta WHERE key = 'total_tokens'").get() as { value: string }).value;
      expect(Number(total)).toBe(rows.reduce((s, r) => s + r.tokens, 0));
    } finally {
      db.close();
    }
  });
});

describe("a save's token counts on the daemon's build thread", () => {
  it("are the daemon thread's counts, exact in each row and in the total", async () => {
    const files = { "a.py": "def alpha():\n    return 1\n", "b.py": "def beta(x):\n    return x * 2\n" };
    const p = makeProject(files);
    // As the daemon opens it: builds run on its build thread, whole trees in a process of their own.
    const engine = await ProjectEngine.open(p.root, { daemon: true, sideEffects: false });
    cleanups.push(p.cleanup, () => engine.close());
    await engine.build({ project_path: p.root });
    const edited = "def alpha():\n    # the édited body, with a 日本語 comment\n    return [i for i in range(10)]\n";
    fs.writeFileSync(path.join(p.root, "a.py"), edited);
    const added = "class Gamma:\n    def delta(self):\n        return 'δ'\n";
    fs.writeFileSync(path.join(p.root, "c.py"), added);
    const r = await engine.build({ project_path: p.root }, { paths: ["a.py", "c.py"] });
    expect(r.files_changed).toBe(2);
    const db = new Database(path.join(p.root, "codegraph-out/codemem_db/index.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT path, tokens FROM files ORDER BY path").all() as { path: string; tokens: number }[];
      const want = { "a.py": edited, "b.py": files["b.py"], "c.py": added } as Record<string, string>;
      expect(rows).toEqual(Object.keys(want).map((f) => ({ path: f, tokens: countTokens(want[f]) })));
      const total = (db.prepare("SELECT value FROM meta WHERE key = 'total_tokens'").get() as { value: string }).value;
      expect(Number(total)).toBe(rows.reduce((s, r) => s + r.tokens, 0));
    } finally {
      db.close();
    }
  });
});
