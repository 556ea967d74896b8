import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { buildIndex } from "../../dist/daemon/index/build.js";
import { createEmbedder } from "../../dist/daemon/index/embed/select.js";
import { ParsePool } from "../../dist/daemon/index/parse-pool.js";
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
