import fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { openStore } from "../../dist/daemon/store/open.js";
import type { IndexStore } from "../../dist/daemon/store/types.js";
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
