import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { BuiltinEmbedder, builtinEmbedderId } from "../../dist/daemon/index/embed/builtin.js";
import { MODEL_FILE, TrainedEmbedder, trainedEmbedderId } from "../../dist/daemon/index/embed/trained.js";
import { expectCode } from "../helpers.js";

const repo = path.resolve(import.meta.dirname, "../..");
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-trained-")));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

describe("the trained embedder (codemem's own code-search model)", () => {
  it("loads the shipped model and names it by a digest of its weights", async () => {
    expect(MODEL_FILE).toBeDefined();
    expect(fs.statSync(MODEL_FILE!).size).toBeLessThanOrEqual(25 * 1024 * 1024);
    const digest = createHash("sha1").update(fs.readFileSync(MODEL_FILE!)).digest("hex").slice(0, 8);
    const e = new TrainedEmbedder();
    const builtin = new BuiltinEmbedder();
    expect(e.id).toBe(`trained-code-${digest}-${builtin.id.slice("builtin-code-".length, builtin.id.lastIndexOf(":"))}:${e.dim}`);
    expect(e.dim).toBe(builtin.dim + 128);
    // A parse worker of a light build checks the build's embedder by these ids, its vectors unloaded.
    expect(trainedEmbedderId()).toBe(e.id);
    expect(builtinEmbedderId()).toBe(builtin.id);
    const [a, b] = await e.embed(["func TakeUntil(notifier Observable) Observable", "func TakeUntil(notifier Observable) Observable"]);
    expect(a.length).toBe(e.dim);
    expect(norm(a)).toBeCloseTo(1, 5);
    expect([...a]).toEqual([...b]);
    const q = e.embedQuery("stop taking values when a notifier emits", () => 1);
    expect(norm(q)).toBeCloseTo(1, 5);
    // The model's part is not empty: the vector differs from the built-in one scaled.
    expect(q.subarray(builtin.dim).some((x) => x !== 0)).toBe(true);
  });

  it("refuses a file that is not a model", () => {
    const bad = path.join(tmp, "not-a-model.bin");
    fs.writeFileSync(bad, "hello");
    expect(() => new TrainedEmbedder(bad)).toThrow(expect.objectContaining({ code: "EMBEDDER_LOAD_FAILED" }));
  });

  it("a real build records the model, and an index of another model or embedder is refused", async () => {
    const root = path.join(tmp, "go");
    fs.cpSync(path.join(repo, "test/fixtures/trees/go"), root, { recursive: true });
    const trainedToml = `[embedder]\nkind = "trained"\n`;
    fs.writeFileSync(path.join(root, "codemem.toml"), trainedToml);
    const id = new TrainedEmbedder().id;

    const trained = await ProjectEngine.open(root, { sideEffects: false });
    const built = await trained.build({ project_path: root });
    expect(built.embedder).toBe(id);
    expect(built.nodes_embedded).toBe(built.node_count);
    expect((await trained.stats({ project_path: root })).embedder).toBe(id);
    const hits = await trained.search({ project_path: root, query: "sort a slice with a less function" });
    expect(hits.results.length).toBeGreaterThan(0);
    await trained.close();

    // Another model's index (what a different code-model.bin recorded): refused for answers and updates.
    const db = path.join(root, "codegraph-out/codemem_db/index.db");
    const other = id.replace(/^trained-code-[0-9a-f]{8}/, "trained-code-00000000");
    let d = new Database(db);
    d.prepare("UPDATE meta SET value = ? WHERE key = 'embedder'").run(other);
    d.close();
    const again = await ProjectEngine.open(root, { sideEffects: false });
    await expectCode(again.search({ project_path: root, query: "sort a slice" }), "INDEX_EMBEDDER_MISMATCH");
    await expectCode(again.build({ project_path: root }), "INDEX_EMBEDDER_MISMATCH");
    expect((await again.build({ project_path: root, force: true })).embedder).toBe(id);
    await again.close();

    // The built-in embedder configured on the trained model's index: refused, and the reverse.
    fs.rmSync(path.join(root, "codemem.toml"));
    const builtin = await ProjectEngine.open(root, { sideEffects: false });
    await expectCode(builtin.search({ project_path: root, query: "sort a slice" }), "INDEX_EMBEDDER_MISMATCH");
    await expectCode(builtin.build({ project_path: root }), "INDEX_EMBEDDER_MISMATCH");
    expect((await builtin.build({ project_path: root, force: true })).embedder).toMatch(/^builtin-code-/);
    await builtin.close();
    fs.writeFileSync(path.join(root, "codemem.toml"), trainedToml);
    const back = await ProjectEngine.open(root, { sideEffects: false });
    await expectCode(back.query({ project_path: root, question: "sort a slice" }), "INDEX_EMBEDDER_MISMATCH");
    await expectCode(back.build({ project_path: root }), "INDEX_EMBEDDER_MISMATCH");
    d = new Database(db, { readonly: true });
    expect((d.prepare("SELECT value FROM meta WHERE key = 'embedder'").get() as { value: string }).value).toMatch(/^builtin-code-/);
    d.close();
    await back.close();
  });
});
