import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, expect, it } from "vitest";
import { buildIndex, prepareForSaves, type BuildCache } from "../../dist/daemon/index/build.js";
import { createEmbedder } from "../../dist/daemon/index/embed/select.js";
import { ParsePool, pinnedLanguages } from "../../dist/daemon/index/parse-pool.js";
import { resolveConfig } from "../../dist/shared/config.js";
import { makeProject, touchLater } from "../helpers.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

it("a build that parsed a large tree releases its parse workers before the write; a build of a few dozen files keeps them, and the next large one starts new ones", async () => {
  // Python's email, json, http, logging, urllib, importlib, asyncio and multiprocessing packages: over 100 files.
  const files: Record<string, string> = {};
  for (const d of ["email", "json", "http", "logging", "urllib", "importlib", "asyncio", "multiprocessing"]) {
    for (const f of fs.readdirSync(path.join("/usr/lib/python3.11", d))) if (f.endsWith(".py")) files[`${d}/${f}`] = fs.readFileSync(path.join("/usr/lib/python3.11", d, f), "utf8");
  }
  expect(Object.keys(files).length).toBeGreaterThanOrEqual(100);
  const p = makeProject(files);
  const cfg = resolveConfig(p.root);
  const pool = new ParsePool(2);
  cleanups.push(p.cleanup, () => pool.close());
  const opts = { embedder: await createEmbedder(cfg), pool };

  const first = await buildIndex(cfg, opts);
  expect(first.files_changed).toBe(Object.keys(files).length);
  expect(pool.live).toBe(0);

  // A build of a few dozen files (a pull, a formatter run) parses on the workers and leaves them for the next one.
  const edited = Object.keys(files).filter((f) => f.startsWith("asyncio/")).slice(0, 30);
  for (const f of edited) {
    p.write(f, `${files[f]}\n\ndef edited():\n    return 1\n`);
    touchLater(path.join(p.root, f));
  }
  const save = await buildIndex(cfg, opts);
  expect(save.files_changed).toBe(edited.length);
  expect(pool.live).toBe(2);

  const forced = await buildIndex(cfg, { ...opts, force: true });
  expect(forced.node_count).toBe(save.node_count);
  expect(pool.live).toBe(0);
});

it("a language a build has little of is parsed by one worker alone; the rest is shared, and every file is parsed", async () => {
  const job = (language: string, bytes: number) => ({ language: language as never, source: "x".repeat(bytes) });
  // Go's src: Go, then a little C, C++, shell and Python. Each small language goes to one worker, the largest first to the least loaded.
  const goSrc = [job("go", 34_000_000), job("c", 148_000), job("bash", 52_000), job("cpp", 31_000), job("python", 16_000)];
  expect(Object.fromEntries(pinnedLanguages(goSrc, 2))).toEqual({ c: 0, bash: 1, cpp: 1, python: 1 });
  // coreutils: 2.3 MB of headers read as C++ beside 7.2 MB of C: C++ is at most half a worker's share.
  expect(Object.fromEntries(pinnedLanguages([job("c", 7_200_000), job("cpp", 2_300_000)], 2))).toEqual({ cpp: 0 });
  // Two halves, one language, or one worker: nothing to pin.
  expect(pinnedLanguages([job("c", 100), job("cpp", 100)], 2).size).toBe(0);
  expect(pinnedLanguages([job("go", 100), job("go", 50)], 2).size).toBe(0);
  expect(pinnedLanguages(goSrc, 1).size).toBe(0);
  // Many small languages: one stays shared, so no worker waits out the other's last files.
  const five = ["c", "cpp", "go", "rust", "ruby"].map((l) => job(l, 100));
  expect(pinnedLanguages(five, 2).size).toBe(4);

  // On a real tree: 60 Python files, 4 C files and 3 shell scripts through two workers, each file parsed once.
  const files: Record<string, string> = {};
  for (let i = 0; i < 60; i++) files[`pkg/m${i}.py`] = `def step_${i}(x):\n    """Step ${i}."""\n    return x + ${i}\n`;
  for (let i = 0; i < 4; i++) files[`native/n${i}.c`] = `int native_${i}(int x) {\n  return x * ${i};\n}\n`;
  for (let i = 0; i < 3; i++) files[`bin/tool${i}.sh`] = `#!/bin/bash\nrun_${i}() {\n  echo ${i}\n}\nrun_${i}\n`;
  const pool = new ParsePool(2);
  cleanups.push(() => pool.close());
  const jobs = Object.entries(files).map(([p, source]) => ({ path: p, source, language: (p.endsWith(".py") ? "python" : p.endsWith(".c") ? "c" : "bash") as never }));
  const { extracts, failed } = await pool.extractAll(jobs);
  expect(failed).toEqual([]);
  expect(extracts.map((e) => e.path)).toEqual(Object.keys(files).sort());
  expect(extracts.find((e) => e.path === "native/n2.c")!.defs.map((d) => d.name)).toEqual(["native_2"]);
  expect(extracts.find((e) => e.path === "bin/tool1.sh")!.defs.map((d) => d.name)).toEqual(["run_1"]);
  expect(pool.live).toBe(2);
});

it("files parsed in the build's thread have their tokens counted where the pool is told to (the daemon's thread)", async () => {
  const { countTokens } = await import("../../dist/shared/tokens.js");
  const sources = { "a.py": "def a():\n    return 'é'\n", "b.py": "class B:\n    pass\n", "c.go": "package c\n\nfunc C() int { return 1 }\n" };
  const asked: string[] = [];
  const pool = new ParsePool(2, async (source) => {
    asked.push(source);
    return countTokens(source);
  });
  cleanups.push(() => pool.close());
  const jobs = Object.entries(sources).map(([p, source]) => ({ path: p, source, language: (p.endsWith(".go") ? "go" : "python") as "go" | "python" }));
  const { extracts } = await pool.extractAll(jobs);
  expect(asked.sort()).toEqual(Object.values(sources).sort());
  expect(extracts.map((e) => [e.path, e.tokens])).toEqual(Object.entries(sources).map(([p, s]) => [p, countTokens(s)]));
  // A build that counts after it is answerable (light) asks for none.
  asked.length = 0;
  await pool.extractAll(jobs, undefined, undefined, undefined, true);
  expect(asked).toEqual([]);
});

it("a warm state readied for saves writes the same save as one that was not: roles judged ahead, the grammar loaded", async () => {
  const files: Record<string, string> = {
    "pkg/util.py": "def slugify(s):\n    return s.lower().replace(' ', '-')\n\ndef title(s):\n    return s.title()\n",
    "pkg/app.py": "from pkg.util import slugify\n\ndef route(name):\n    return '/' + slugify(name)\n",
    // A bundled copy of util: its role (vendored) is judged from the other files' definitions.
    "pkg/_vendor/util.py": "def slugify(s):\n    return s.lower().replace(' ', '-')\n\ndef title(s):\n    return s.title()\n",
    "tests/test_app.py": "from pkg.app import route\n\ndef test_route():\n    assert route('A b') == '/a-b'\n",
  };
  const meta = async (prepared: boolean) => {
    const p = makeProject(files);
    const cfg = resolveConfig(p.root);
    const pool = new ParsePool(1);
    cleanups.push(p.cleanup, () => pool.close());
    const embedder = await createEmbedder(cfg);
    await buildIndex(cfg, { embedder, pool });
    // A daemon's start: the warm state loaded from the index by a build of nothing.
    const cache: { value?: BuildCache } = {};
    await buildIndex(cfg, { embedder, pool: new ParsePool(1), cache, warm: true, paths: [] });
    expect(cache.value?.roles).toBeUndefined();
    const savePool = new ParsePool(1);
    cleanups.push(() => savePool.close());
    if (prepared) {
      await prepareForSaves(cfg, cache.value!, savePool, embedder);
      expect(cache.value!.roles).toBeDefined();
    }
    p.write("pkg/app.py", `${files["pkg/app.py"]}\ndef about():\n    return route('About us')\n`);
    touchLater(path.join(p.root, "pkg/app.py"));
    const save = await buildIndex(cfg, { embedder, pool: savePool, cache, paths: ["pkg/app.py"] });
    expect(save.files_changed).toBe(1);
    const db = new Database(path.join(p.root, "codegraph-out/codemem_db/index.db"), { readonly: true });
    try {
      return Object.fromEntries((db.prepare("SELECT key, value FROM meta WHERE key IN ('file_roles', 'node_count', 'edge_count', 'total_tokens')").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    } finally {
      db.close();
    }
  };
  const readied = await meta(true);
  expect(JSON.parse(readied.file_roles)).toMatchObject({ "pkg/_vendor/util.py": expect.anything() });
  expect(readied).toEqual(await meta(false));
});
