import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { callDaemon, daemonStatus, stopDaemon } from "../../dist/client/rpc.js";
import { trustProject } from "../../dist/shared/config.js";
import { pgTestClient, pgTestSettings } from "../helpers-pg.js";
import { cleanupAll, makeProject, waitFor, watcherReady } from "./helpers.js";

type Hit = { name: string; file_path: string };
type WatchState = { ready: boolean; batches: number; pending: string[]; building: boolean; last_batch?: { files: number; changed: number } };

async function search(root: string, query: string): Promise<Hit[]> {
  return ((await callDaemon(root, "search", { project_path: root, query, limit: 20 })) as { results: Hit[] }).results;
}

async function watchState(root: string): Promise<WatchState> {
  return (await daemonStatus(root)).watcher as WatchState;
}

async function builtProject(): Promise<string> {
  const root = makeProject();
  await callDaemon(root, "build", { project_path: root });
  await watcherReady(root);
  return root;
}

/** The files a function's resolved calls lead to. */
function callsOf(root: string, name: string): { file_path: string }[] {
  const db = new Database(path.join(root, "codegraph-out/codemem_db/index.db"), { readonly: true });
  try {
    return db.prepare("SELECT t.file_path FROM edges e JOIN symbols si ON si.id = e.source JOIN symbols ti ON ti.id = e.target JOIN nodes s ON s.id = si.name JOIN nodes t ON t.id = ti.name WHERE s.name = ? AND e.type = 'calls'").all(name) as { file_path: string }[];
  } finally {
    db.close();
  }
}

/** A process's children (from /proc). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    const c = fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim();
    if (c) out.push(...c.split(/\s+/).map(Number));
  }
  return out;
}

describe("watcher", () => {
  afterAll(cleanupAll);

  it("does nothing before the first build", async () => {
    const root = makeProject();
    await callDaemon(root, "ping", {});
    fs.appendFileSync(path.join(root, "app/store.py"), "\n\ndef never_indexed_fn():\n    return 1\n");
    await new Promise((r) => setTimeout(r, 800));
    const st = await daemonStatus(root);
    expect(st.index_exists).toBe(false);
    expect(st.watcher).toBeNull();
  });

  // How soon is bench:daemon's "save -> searchable"; here, that a save alone makes it searchable.
  it("an edited file becomes searchable without a build", async () => {
    const root = await builtProject();
    expect((await search(root, "brand_new_fn")).some((h) => h.name === "brand_new_fn")).toBe(false);
    fs.appendFileSync(path.join(root, "app/report.py"), '\n\ndef brand_new_fn(rows):\n    """Summarise rows into totals."""\n    return len(rows)\n');
    const hit = await waitFor("brand_new_fn in search", async () => (await search(root, "brand_new_fn")).find((h) => h.name === "brand_new_fn"), 60_000, 100);
    expect(hit.file_path).toBe("app/report.py");
    const st = await watchState(root);
    expect(st.batches).toBeGreaterThanOrEqual(1);
    expect(st.last_batch?.changed).toBeGreaterThanOrEqual(1);
  });

  it("watches a file whose name starts with two dots (..weird.py is inside the project)", async () => {
    const root = await builtProject();
    fs.writeFileSync(path.join(root, "..weird.py"), "def dotted_name_fn():\n    return 1\n");
    const hit = await waitFor("dotted_name_fn in search", async () => (await search(root, "dotted_name_fn")).find((h) => h.name === "dotted_name_fn"), 60_000, 100);
    expect(hit.file_path).toBe("..weird.py");
  });

  it("indexes a new script without an extension by its #! line", async () => {
    const root = await builtProject();
    fs.mkdirSync(path.join(root, "tools"));
    fs.writeFileSync(path.join(root, "tools/reindex"), '#!/usr/bin/env python3\n\ndef reindex_orders_fn(store):\n    """Rebuild the order index."""\n    return store\n');
    const hit = await waitFor("reindex_orders_fn in search", async () => (await search(root, "reindex_orders_fn")).find((h) => h.name === "reindex_orders_fn"), 60_000, 100);
    expect(hit.file_path).toBe("tools/reindex");
  });

  it("queues a new file without an extension while it is still empty: its #! may follow the event", async () => {
    const root = await builtProject();
    fs.mkdirSync(path.join(root, "tools"));
    // Created empty (as an editor or `touch` does), written later: the creation's event must not be the only chance.
    fs.writeFileSync(path.join(root, "tools/migrate"), "");
    const logFile = path.join(root, ".codemem/daemon.log");
    await waitFor("a watch batch of tools/migrate", () => fs.readFileSync(logFile, "utf8").split("\n").some((l) => l.includes('"watch batch"') && l.includes("tools/migrate")), 60_000, 100);
  });

  it("a first build runs in a process of its own that exits; a fresh build thread loads the warm state for the next save", async () => {
    const root = await builtProject();
    const logFile = path.join(root, ".codemem/daemon.log");
    expect(fs.readFileSync(logFile, "utf8")).toContain("building the whole tree in a process of its own");
    const pid = (await daemonStatus(root)).pid as number;
    // The build's process is gone: the daemon keeps no child process at rest (its threads are no processes).
    await waitFor("the build process to exit", () => childPids(pid).length === 0, 60_000, 100);
    fs.appendFileSync(path.join(root, "app/report.py"), "\n\nfrom app.store import reserve_units\n\n\ndef saving_report_fn(inv):\n    return reserve_units(inv, \"x\", 1)\n");
    await waitFor("saving_report_fn in search", async () => (await search(root, "saving_report_fn")).some((h) => h.name === "saving_report_fn"), 60_000, 100);
    expect(callsOf(root, "saving_report_fn")).toEqual([{ file_path: "app/store.py" }]);
    expect(fs.readFileSync(logFile, "utf8")).not.toMatch(/"level":"(error|warn)"/);
  });

  it("a whole-tree build whose process is killed fails with INTERNAL and leaves the index answering as before", async () => {
    const files: Record<string, string> = { "pkg/__init__.py": "" };
    for (let i = 0; i < 400; i++) files[`pkg/m${i}.py`] = `def f${i}():\n    """Step ${i} of the pipeline."""\n    return ${i}\n`;
    const root = makeProject({ files });
    await callDaemon(root, "build", { project_path: root });
    await watcherReady(root);
    const pid = (await daemonStatus(root)).pid as number;
    // The first build's process answers before its fill and lives until that is written: the process to
    // kill is the forced build's, so it must be the only one (under load the first one outlived the answer).
    await waitFor("the first build's process to end", () => childPids(pid).length === 0, 60_000, 20);
    const forced = callDaemon(root, "build", { project_path: root, force: true }, { timeoutMs: 120_000 }).then(
      () => "finished",
      (err: { code?: string }) => err.code,
    );
    const [child] = await waitFor("the build process", () => (childPids(pid).length ? childPids(pid) : undefined), 60_000, 20);
    process.kill(child, "SIGKILL");
    expect(await forced).toBe("INTERNAL");
    expect((await search(root, "f123")).some((h) => h.name === "f123")).toBe(true);
    const again = (await callDaemon(root, "build", { project_path: root, force: true })) as { node_count: number };
    expect(again.node_count).toBeGreaterThan(400);
  });

  it("after an incremental build of over 1,000 files the build thread is replaced, and the next save resolves against the warm state it reloaded", async () => {
    const root = makeProject({ files: { "pkg/__init__.py": "", "pkg/m0.py": "def f0():\n    return 0\n" } });
    await callDaemon(root, "build", { project_path: root });
    // Files added while no daemon runs: the catch-up build of the next daemon indexes them all, on its build thread.
    await stopDaemon(root);
    for (let i = 1; i < 1100; i++) fs.writeFileSync(path.join(root, `pkg/m${i}.py`), `from pkg.m${i - 1} import f${i - 1}\n\n\ndef f${i}():\n    return f${i - 1}()\n`);
    await callDaemon(root, "ping", {});
    const logFile = path.join(root, ".codemem/daemon.log");
    await waitFor("the build thread to be replaced", () => fs.readFileSync(logFile, "utf8").includes("build thread replaced"));
    await watcherReady(root);
    fs.appendFileSync(path.join(root, "pkg/m5.py"), "\nfrom pkg.m900 import f900\n\n\ndef brand_new_caller():\n    return f900()\n");
    await waitFor("brand_new_caller in search", async () => (await search(root, "brand_new_caller")).some((h) => h.name === "brand_new_caller"), 60_000, 100);
    expect(callsOf(root, "brand_new_caller")).toEqual([{ file_path: "pkg/m900.py" }]);
    expect(fs.readFileSync(logFile, "utf8")).not.toMatch(/"level":"(error|warn)"/);
  });

  it("a batch that moves many nodes keeps its save fast (communities carried) and re-clusters in the background once edits settle", async () => {
    const files: Record<string, string> = {};
    const walk = (dir: string, rel: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(path.join(dir, e.name), `${rel}${e.name}/`);
        else if (e.name.endsWith(".go")) files[`${rel}${e.name}`] = fs.readFileSync(path.join(dir, e.name), "utf8");
      }
    };
    walk(path.resolve("test/fixtures/trees/go"), "");
    const root = makeProject({ files });
    await callDaemon(root, "build", { project_path: root });
    await watcherReady(root);
    const dbFile = path.join(root, "codegraph-out/codemem_db/index.db");
    const nodeCount = () => {
      const db = new Database(dbFile, { readonly: true });
      try {
        return (db.prepare("SELECT count(*) AS n FROM nodes").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const before = nodeCount();
    // More than a tenth of the files and a twentieth of the nodes, in one batch (a branch switch).
    const targets = Object.keys(files).slice(0, Math.ceil(Object.keys(files).length / 5));
    const per = Math.ceil((before * 0.08) / targets.length);
    for (const [i, f] of targets.entries()) {
      const funcs = Array.from({ length: per }, (_, k) => `\nfunc codememCarried${i}x${k}() int { return ${k} }\n`).join("");
      fs.appendFileSync(path.join(root, f), funcs);
    }
    const logFile = path.join(root, ".codemem/daemon.log");
    // The appends may reach the watcher in several batches (a loaded machine): wait for all of them
    // and for a re-clustering after the last.
    const logLines = () => fs.readFileSync(logFile, "utf8").split("\n");
    const batchesOf = (lines: string[]) => lines.filter((l) => l.includes('"watch batch"')).map((l) => JSON.parse(l) as { changed: number; reclustered: boolean });
    await waitFor("every edit indexed, then re-clustered in the background", () => {
      const lines = logLines();
      const lastBatch = lines.findLastIndex((l) => l.includes('"watch batch"'));
      const changed = batchesOf(lines).reduce((n, b) => n + b.changed, 0);
      return changed === targets.length && lines.findLastIndex((l) => l.includes("communities detected again in the background")) > lastBatch;
    }, 30_000, 100);
    const batches = batchesOf(logLines());
    expect(batches.every((b) => !b.reclustered)).toBe(true);
    expect(nodeCount()).toBe(before + per * targets.length);

    // Every node sits in a community the index lists, with the listed sizes; graph.json follows.
    await waitFor("graph.json of the new communities", () => {
      const db = new Database(dbFile, { readonly: true });
      try {
        const builtAt = (db.prepare("SELECT value FROM meta WHERE key = 'built_at'").get() as { value: string }).value;
        return JSON.parse(fs.readFileSync(path.join(root, "codegraph-out/graph.json"), "utf8")).built_at === builtAt;
      } finally {
        db.close();
      }
    }, 15_000, 100);
    const db = new Database(dbFile, { readonly: true });
    try {
      const counts = db.prepare("SELECT community AS id, count(*) AS n FROM nodes GROUP BY community ORDER BY community").all();
      const listed = db.prepare("SELECT id, size AS n FROM communities ORDER BY id").all();
      expect(counts).toEqual(listed);
    } finally {
      db.close();
    }
    expect(fs.readFileSync(logFile, "utf8")).not.toMatch(/"level":"(error|warn)"/);
  });

  it("a deleted file's nodes disappear", async () => {
    const root = await builtProject();
    expect((await search(root, "formatPrice")).some((h) => h.file_path === "web/format.ts")).toBe(true);
    fs.rmSync(path.join(root, "web/format.ts"));
    await waitFor("web/format.ts gone from search", async () => !(await search(root, "formatPrice PriceTag render")).some((h) => h.file_path === "web/format.ts"), 60_000, 100);
    const stats = (await callDaemon(root, "stats", { project_path: root })) as { file_count: number };
    expect(stats.file_count).toBe(2);
  });

  it("save-by-rename (write temp, rename onto the file) is one rebuild with the new content", async () => {
    const root = await builtProject();
    const before = (await watchState(root)).batches;
    const target = path.join(root, "app/store.py");
    const body = fs.readFileSync(target, "utf8") + '\n\ndef renamed_in_fn(order):\n    """Arrived by an atomic save."""\n    return order\n';
    fs.writeFileSync(`${target}.tmp`, body);
    fs.renameSync(`${target}.tmp`, target);
    await waitFor("renamed_in_fn in search", async () => (await search(root, "renamed_in_fn")).some((h) => h.name === "renamed_in_fn" && h.file_path === "app/store.py"), 60_000, 100);
    // Let any straggling event batch fire before counting.
    await new Promise((r) => setTimeout(r, 1000));
    const st = await watchState(root);
    expect(st.batches - before).toBe(1);
    expect(st.last_batch).toMatchObject({ files: 1, changed: 1 });
    expect(st.pending).toEqual([]);
    expect(fs.existsSync(`${target}.tmp`)).toBe(false);
  });

  it("ignores excluded and unsupported files", async () => {
    const root = await builtProject();
    const before = (await watchState(root)).batches;
    fs.mkdirSync(path.join(root, "node_modules/pkg"), { recursive: true });
    fs.writeFileSync(path.join(root, "node_modules/pkg/index.js"), "function hidden_dep_fn() {}\n");
    fs.writeFileSync(path.join(root, "notes.md"), "# notes\n");
    fs.writeFileSync(path.join(root, ".gitignore"), "generated/\n");
    await new Promise((r) => setTimeout(r, 1200)); // the .gitignore change itself is one batch
    const mid = (await watchState(root)).batches;
    expect(mid - before).toBeLessThanOrEqual(1);
    fs.mkdirSync(path.join(root, "generated"), { recursive: true });
    fs.writeFileSync(path.join(root, "generated/out.py"), "def generated_fn():\n    pass\n");
    await new Promise((r) => setTimeout(r, 1200));
    const st = await watchState(root);
    expect(st.batches).toBe(mid);
    expect(st.pending).toEqual([]);
    expect((await search(root, "hidden_dep_fn generated_fn")).some((h) => h.name === "hidden_dep_fn" || h.name === "generated_fn")).toBe(false);
  });
});

describe("watcher and codemem.toml", () => {
  afterAll(cleanupAll);

  it("an edit of codemem.toml re-indexes with the new rules and watches what they no longer exclude", async () => {
    const root = makeProject({ files: { "app/main.py": "def main_entry():\n    return 1\n", "extras/lib.py": "def extra_helper():\n    return 2\n", "codemem.toml": '[build]\nexclude_patterns = ["extras/"]\n' } });
    await callDaemon(root, "build", { project_path: root });
    await watcherReady(root);
    expect(((await callDaemon(root, "stats", { project_path: root })) as { file_count: number }).file_count).toBe(1);

    fs.writeFileSync(path.join(root, "codemem.toml"), "[build]\nexclude_patterns = []\n");
    await waitFor("extras indexed after the toml edit", async () => ((await callDaemon(root, "stats", { project_path: root })) as { file_count: number }).file_count === 2, 60_000, 100);
    // The watcher now follows extras/ too.
    await watcherReady(root);
    fs.appendFileSync(path.join(root, "extras/lib.py"), "\n\ndef extra_added_later():\n    return 3\n");
    await waitFor("extra_added_later in search", async () => (await search(root, "extra_added_later")).some((h) => h.name === "extra_added_later"), 60_000, 100);
  });
});

describe("watcher on the PostgreSQL backend", () => {
  afterAll(cleanupAll);

  it("keeps a project indexed on PostgreSQL fresh (it has no local index file)", async () => {
    const { dbUrl, password } = await pgTestSettings();
    const schemaKey = `watch_pg_${process.pid}`;
    const passwordFile = path.join(os.tmpdir(), `codemem-watch-test-pw-${process.pid}`);
    fs.writeFileSync(passwordFile, password + "\n", { mode: 0o600 });
    const root = makeProject({ files: { "app/main.py": "def main_entry():\n    return 1\n", "codemem.toml": `[store]\nproject = "${schemaKey}"\npassword_file = "${passwordFile}"\n` } });
    trustProject(root); // the user's own settings file
    const admin = await pgTestClient();
    try {
      await callDaemon(root, "build", { project_path: root, backend: "postgres", db_url: dbUrl });
      await watcherReady(root);
      fs.appendFileSync(path.join(root, "app/main.py"), "\n\ndef pg_watched_fn():\n    return 2\n");
      await waitFor("pg_watched_fn in search", async () => (await search(root, "pg_watched_fn")).some((h) => h.name === "pg_watched_fn"), 60_000, 100);
    } finally {
      await stopDaemon(root);
      await admin.query(`DROP SCHEMA IF EXISTS "codemem_${schemaKey}" CASCADE`);
      await admin.end();
      fs.rmSync(passwordFile, { force: true });
    }
  });
});
