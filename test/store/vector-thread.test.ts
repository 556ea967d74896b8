import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { openStore } from "../../dist/daemon/store/open.js";
import type { IndexStore } from "../../dist/daemon/store/types.js";
import { VectorThread } from "../../dist/daemon/store/vector-thread.js";
import { stateDirs } from "../../dist/shared/paths.js";
import { makeProject } from "../helpers.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const FILES: Record<string, string> = {
  "go.mod": "module example.com/shapes\n\ngo 1.21\n",
  "area/area.go": "package area\n\n// Circle returns the area of a circle of radius r.\nfunc Circle(r float64) float64 { return 3.14159 * r * r }\n\n// Square returns the area of a square of side s.\nfunc Square(s float64) float64 { return s * s }\n",
  "text/words.go": "package text\n\nimport \"strings\"\n\n// CountWords splits a sentence on spaces and counts the words.\nfunc CountWords(s string) int { return len(strings.Fields(s)) }\n",
};

async function project() {
  const p = makeProject(FILES);
  const engine = await ProjectEngine.open(p.root, { sideEffects: false });
  cleanups.push(p.cleanup, () => engine.close());
  await engine.build({ project_path: p.root });
  const reader = async (): Promise<IndexStore> => {
    const store = await openStore(engine.cfg, { mode: "read" });
    cleanups.push(() => store.close());
    return store;
  };
  return { p, engine, reader };
}

/** Cosine of two float vectors. */
function cosine(a: Float32Array, b: Float32Array): number {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return d / Math.sqrt(na * nb);
}

describe("a reader's vector search on its own thread", () => {
  it("ranks every stored vector by cosine, and a save's patch replaces the file's vectors", async () => {
    const { p, engine, reader } = await project();
    const store = await reader();
    const catalog = await store.catalog();
    const stored = await store.vectors(catalog.map((n) => n.rowid));
    expect(stored.size).toBe(catalog.length);
    const circle = catalog.find((n) => n.name === "Circle")!;
    const q = stored.get(circle.rowid)!;
    const hits = await store.nearest(q, catalog.length);
    // Every node, each once, best first, with the cosine of its stored (dequantized) vector.
    expect(hits.map((h) => h.rowid).sort((a, b) => a - b)).toEqual(catalog.map((n) => n.rowid).sort((a, b) => a - b));
    expect(hits[0].rowid).toBe(circle.rowid);
    for (let i = 1; i < hits.length; i++) expect(hits[i].sim).toBeLessThanOrEqual(hits[i - 1].sim);
    for (const h of hits) expect(h.sim).toBeCloseTo(cosine(q, stored.get(h.rowid)!), 2);

    // A save adds a function to area.go: the reader is told, and the thread's matrix follows.
    p.write("area/area.go", FILES["area/area.go"] + "\n// Triangle returns the area of a triangle of base b and height h.\nfunc Triangle(b, h float64) float64 { return b * h / 2 }\n");
    await engine.build({ project_path: p.root });
    await store.refresh(["area/area.go"]);
    const after = await store.catalog();
    const triangle = after.find((n) => n.name === "Triangle")!;
    const tq = (await store.vectors([triangle.rowid])).get(triangle.rowid)!;
    const again = await store.nearest(tq, after.length + 5);
    expect(again[0].rowid).toBe(triangle.rowid);
    // The file's old rows left the matrix with it: only current rows answer, each once.
    expect(again.map((h) => h.rowid).sort((a, b) => a - b)).toEqual(after.map((n) => n.rowid).sort((a, b) => a - b));
  });

  it("answers whole-file BM25 on the thread as on the reader's connection, and sees a save's commit", async () => {
    const { p, engine, reader } = await project();
    const store = await reader();
    // The reader's own answers (its thread not started yet) against a thread's on the same index.
    const thread = new VectorThread({ file: stateDirs(engine.root).dbFile, dim: Number((await store.meta()).dim) }, () => {});
    cleanups.push(() => thread.close());
    await thread.loaded;
    for (const [words, common] of [[["area", "circle", "words"], undefined], [["area", "circle"], new Set(["area"])], [["nothing"], undefined]] as const) {
      const local = await store.lexicalFiles([...words], 10, common);
      expect(await thread.lexicalFiles([...words], 10, common), words.join(" ")).toEqual(local);
    }
    expect((await store.lexicalFiles(["area", "words"], 10)).length).toBe(2);
    await store.warm();

    // A save that adds a file: the thread's connection reads the committed index, as the reader does.
    p.write("shapes/hexagon.go", "package shapes\n\n// Hexagon returns the area of a regular hexagon with side s.\nfunc Hexagon(s float64) float64 { return 2.598 * s * s }\n");
    await engine.build({ project_path: p.root });
    await store.refresh(["shapes/hexagon.go"]);
    const files = new Map((await store.catalog()).filter((n) => n.type === "module").map((n) => [n.rowid, n.file_path]));
    expect((await store.lexicalFiles(["hexagon"], 10)).map((h) => files.get(h.rowid))).toEqual(["shapes/hexagon.go"]);
  });

  it("fails a search with INTERNAL when its thread cannot load, and starts another on the next search", async () => {
    const { engine, reader } = await project();
    const store = await reader();
    const [node] = await store.catalog();
    const q = (await store.vectors([node.rowid])).get(node.rowid)!;
    // The thread opens the index by path; the reader's own connection keeps the file it opened.
    const file = stateDirs(engine.root).dbFile;
    fs.renameSync(file, file + ".aside");
    try {
      await expect(store.nearest(q, 3)).rejects.toMatchObject({ code: "INTERNAL", message: expect.stringContaining("vector search thread stopped") });
    } finally {
      fs.renameSync(file + ".aside", file);
    }
    const hits = await store.nearest(q, 3);
    expect(hits[0].rowid).toBe(node.rowid);
  });
});
