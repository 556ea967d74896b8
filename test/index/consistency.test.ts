import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeProject, touchLater } from "../helpers.js";

const require = createRequire(import.meta.url);
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

describe("readers during a build", () => {
  it("never see a half-built index", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++) files[`pkg/m${i}.py`] = `def f${i}(x):\n    """Step ${i}."""\n    return x + ${i}\n`;
    const p = makeProject(files);
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(p.cleanup, () => engine.close());
    const first = await engine.build({ project_path: p.root });

    // A separate process polls the three tables the build writes together.
    const db = path.join(p.root, "codegraph-out/codemem_db/index.db");
    const reader = spawn(process.execPath, ["-e", `
      const Database = require(${JSON.stringify(require.resolve("better-sqlite3"))});
      const vec = require(${JSON.stringify(require.resolve("sqlite-vec"))});
      const db = new Database(${JSON.stringify(db)}, { readonly: true }); vec.load(db);
      const seen = new Set(); const bad = [];
      const end = Date.now() + 4000;
      while (Date.now() < end) {
        const r = db.transaction(() => [
          db.prepare("select count(*) n from nodes").get().n,
          db.prepare("select count(*) n from vec_nodes").get().n,
          db.prepare("select count(*) n from files").get().n,
        ])();
        seen.add(r.join("/")); if (r[0] !== r[1]) bad.push(r.join("/"));
      }
      console.log(JSON.stringify({ seen: [...seen], bad }));
    `], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    reader.stdout.on("data", (c) => (out += c));
    await new Promise((r) => setTimeout(r, 300));
    for (let i = 0; i < 60; i++) {
      p.write(`pkg/m${i}.py`, `def f${i}(x):\n    return x\n\ndef g${i}():\n    return f${i}(1)\n`);
      touchLater(path.join(p.root, `pkg/m${i}.py`));
    }
    for (let i = 60; i < 80; i++) p.write(`pkg/m${i}.py`, `def f${i}():\n    return ${i}\n`);
    const second = await engine.build({ project_path: p.root });
    await new Promise((r) => reader.on("exit", r));
    const { seen, bad } = JSON.parse(out);
    expect(bad).toEqual([]);
    const allowed = [`${first.node_count}/${first.node_count}/${first.files_indexed}`, `${second.node_count}/${second.node_count}/${second.files_indexed}`];
    for (const s of seen) expect(allowed).toContain(s);
  });
});
