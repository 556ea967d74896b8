import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LocalBuilder } from "../../dist/daemon/index/builder.js";
import { createEmbedder } from "../../dist/daemon/index/embed/select.js";
import { graphFileBuiltAt, writeGraphFile, type GraphFilePatch } from "../../dist/daemon/index/graph-file.js";
import { resolveConfig } from "../../dist/shared/config.js";
import { seededRandom } from "../../dist/shared/random.js";
import { makeProject } from "../helpers.js";

const repo = path.resolve(__dirname, "../..");
const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** A real tree's files (a slice of Go's standard library, committed as a fixture). */
function goTree(): Record<string, string> {
  const root = path.join(repo, "test/fixtures/trees/go");
  const out: Record<string, string> = { "go.mod": "module std\n" };
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".go")) out[p] = fs.readFileSync(path.join(root, p), "utf8");
    }
  };
  walk("");
  return out;
}

/** A Go project on disk, and builders whose graph.json writes are recorded: given a layout to patch, and how many files they copied. */
function goProject() {
  const p = makeProject(goTree());
  cleanups.push(p.cleanup);
  const cfg = resolveConfig(p.root);
  const graphFile = path.join(p.root, "codegraph-out/graph.json");
  const writes: { patched: boolean; copied: number }[] = [];
  const writer = async (c: typeof cfg, meta: { built_at: string; index_version: string }, patch?: GraphFilePatch) => {
    const w = await writeGraphFile(c, meta, patch);
    writes.push({ patched: !!patch, copied: w.copied });
    return w;
  };
  const builder = () => {
    const b = new LocalBuilder(1, () => createEmbedder(cfg), writer);
    cleanups.push(() => b.close());
    return b;
  };
  /** Whether graph.json is byte for byte what a whole write of the index gives. */
  const equalsWhole = async () => {
    const whole = path.join(p.root, "whole.json");
    await writeGraphFile(cfg, { built_at: graphFileBuiltAt(graphFile)!, index_version: JSON.parse(fs.readFileSync(graphFile, "utf8")).index_version }, undefined, whole);
    const same = fs.readFileSync(graphFile).equals(fs.readFileSync(whole));
    fs.rmSync(whole);
    return same;
  };
  return { p, cfg, graphFile, writes, builder, equalsWhole };
}

describe("graph.json rewritten from the files a build changed", () => {
  it("is byte for byte the file a whole write gives, after random edits, adds, renames and deletes", async () => {
    const { p, cfg, graphFile, writes, builder: newBuilder, equalsWhole } = goProject();
    const builder = newBuilder();
    await builder.build(cfg, {});

    const rnd = seededRandom(11);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const goFiles = () => fs.readdirSync(p.root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".go")).sort();
    let stamp = Date.now();
    for (let step = 0; step < 14; step++) {
      const files = goFiles();
      const f = pick(files);
      const abs = path.join(p.root, f);
      const text = fs.readFileSync(abs, "utf8");
      const pkg = /^package (\w+)/m.exec(text)![1];
      const kind = pick(["add-func", "rename-func", "delete", "new-file", "move", "call-across"]);
      if (kind === "add-func") p.write(f, `${text}\n// Step${step} is new.\nfunc Step${step}() int { return ${step} }\n`);
      else if (kind === "rename-func") p.write(f, text.replace(/^func (\w+)\(/m, "func $1Renamed("));
      else if (kind === "delete" && files.length > 10) p.remove(f);
      else if (kind === "new-file") p.write(path.join(path.dirname(f), `step${step}.go`), `package ${pkg}\n\n// Helper${step} helps.\nfunc Helper${step}() {}\n`);
      else if (kind === "move") {
        p.remove(f);
        p.write(path.join(path.dirname(f), `moved${step}.go`), text);
      } else {
        // A call from another file into this one: an edge whose source file did not change before.
        const name = /^func (\w+)\(/m.exec(text)?.[1];
        const other = pick(files.filter((g) => path.dirname(g) === path.dirname(f) && g !== f));
        if (name && other) p.write(other, `${fs.readFileSync(path.join(p.root, other), "utf8")}\nfunc callsAcross${step}() { ${name}() }\n`);
      }
      // Every file written this step gets a later mtime, as a save does.
      stamp += 2000;
      for (const g of goFiles()) if (fs.statSync(path.join(p.root, g)).mtimeMs > stamp - 60_000 * 60) fs.utimesSync(path.join(p.root, g), new Date(stamp), new Date(stamp));
      await builder.build(cfg, {});

      expect(await equalsWhole(), `step ${step} (${kind} ${f})`).toBe(true);
    }
    // The first write had no file to copy from; the later ones copied most files.
    expect(writes[0]).toEqual({ patched: false, copied: 0 });
    const patched = writes.slice(1).filter((w) => w.patched && w.copied > 0);
    expect(patched.length).toBeGreaterThanOrEqual(12);
    const raw = fs.readFileSync(graphFile, "utf8");
    expect(JSON.stringify(JSON.parse(raw))).toBe(raw);
  });

  it("copies from the last write of a builder before it (a restarted daemon); a damaged saved layout is no layout", async () => {
    const { p, cfg, graphFile, writes, builder, equalsWhole } = goProject();
    let n = 0;
    const save = (rel: string) => {
      n++;
      p.write(rel, `${fs.readFileSync(path.join(p.root, rel), "utf8")}\nfunc Saved${n}() {}\n`);
      const t = new Date(Date.now() + 5000 * n);
      fs.utimesSync(path.join(p.root, rel), t, t);
    };
    const first = builder();
    await first.build(cfg, {});
    await first.close();

    const second = builder();
    save("strings/strings.go");
    await second.build(cfg, {});
    expect(writes.at(-1)!.patched).toBe(true);
    expect(writes.at(-1)!.copied).toBeGreaterThan(10);
    expect(await equalsWhole()).toBe(true);
    await second.close();

    for (const damage of ["{not json", JSON.stringify({ ino: 1, size: 10, mtimeMs: 1, built_at: "x", at: "x", files: [["a.go", 5, 900]] })]) {
      fs.writeFileSync(path.join(p.root, ".codemem/graph-layout.json"), damage);
      const next = builder();
      save("sort/sort.go");
      await next.build(cfg, {});
      await next.close();
      expect(writes.at(-1)).toEqual({ patched: false, copied: 0 });
      expect(fs.readFileSync(graphFile, "utf8")).toContain(`"name":"Saved${n}"`);
      // Written again, whole and readable.
      expect(JSON.parse(fs.readFileSync(path.join(p.root, ".codemem/graph-layout.json"), "utf8")).files.length).toBeGreaterThan(10);
    }
  });

  it("is written whole when the file changed since its last write or the index moved without this builder", async () => {
    const { p, cfg, graphFile, writes, builder: newBuilder } = goProject();
    const builder = newBuilder();
    await builder.build(cfg, {});
    const save = (rel: string, extra: string) => {
      p.write(rel, fs.readFileSync(path.join(p.root, rel), "utf8") + extra);
      const t = new Date(Date.now() + 5000 * writes.length);
      fs.utimesSync(path.join(p.root, rel), t, t);
    };

    save("strings/strings.go", "\nfunc One() {}\n");
    await builder.build(cfg, {});
    expect(writes.at(-1)!.copied).toBeGreaterThan(10);

    // Someone rewrote graph.json (same length, other bytes): nothing of it is trusted.
    const text = fs.readFileSync(graphFile, "utf8");
    fs.writeFileSync(graphFile, text.replace('"name":"One"', '"name":"Uno"'));
    save("sort/sort.go", "\nfunc Two() {}\n");
    await builder.build(cfg, {});
    expect(writes.at(-1)).toMatchObject({ patched: true, copied: 0 });
    expect(fs.readFileSync(graphFile, "utf8")).toContain('"name":"One"');

    // Another builder changed the index and died before its graph.json write: the file is as this
    // builder left it, only the index tells. This builder's next write is whole.
    const other = new LocalBuilder(1, () => createEmbedder(cfg), async () => ({ copied: 0 }));
    save("bufio/bufio.go", "\nfunc Three() {}\n");
    await other.build(cfg, {});
    await other.close();
    save("errors/errors.go", "\nfunc Four() {}\n");
    await builder.build(cfg, {});
    expect(writes.at(-1)).toMatchObject({ patched: false, copied: 0 });
    const g = JSON.parse(fs.readFileSync(graphFile, "utf8"));
    expect(g.nodes.map((n: { name: string }) => n.name)).toEqual(expect.arrayContaining(["One", "Two", "Three", "Four"]));
  });
});
