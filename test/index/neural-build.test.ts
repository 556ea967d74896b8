import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { makeTinyModel } from "../fixtures/tiny-model.js";
import { expectCode, makeProject, PY_PROJECT } from "../helpers.js";

const p = makeProject(PY_PROJECT);
const modelsDir = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-models-"));
afterAll(() => {
  p.cleanup();
  fs.rmSync(modelsDir, { recursive: true, force: true });
});

describe("the neural embedder in a real build", () => {
  it("records which embedder built the index and refuses to mix embedders", async () => {
    const { model, modelDir } = await makeTinyModel(modelsDir);
    fs.writeFileSync(path.join(p.root, "codemem.toml"), `[embedder]\nkind = "neural"\nmodel = "${model}"\nmodel_dir = "${modelDir}"\n`);
    const neural = await ProjectEngine.open(p.root, { sideEffects: false });
    const built = await neural.build({ project_path: p.root });
    expect(built.embedder).toMatch(/^hf:.*:32$/);
    const st = await neural.stats({ project_path: p.root });
    expect(st.embedder).toBe(built.embedder);
    expect((await neural.search({ project_path: p.root, query: "charge card" })).results.length).toBeGreaterThan(0);
    await neural.close();

    // The built-in embedder configured now: answers are refused, an incremental build too; --force re-embeds.
    fs.rmSync(path.join(p.root, "codemem.toml"));
    const builtin = await ProjectEngine.open(p.root, { sideEffects: false });
    await expectCode(builtin.search({ project_path: p.root, query: "charge card" }), "INDEX_EMBEDDER_MISMATCH");
    await expectCode(builtin.build({ project_path: p.root }), "INDEX_EMBEDDER_MISMATCH");
    const rebuilt = await builtin.build({ project_path: p.root, force: true });
    expect(rebuilt.embedder).toMatch(/^builtin-/);
    expect((await builtin.search({ project_path: p.root, query: "charge card" })).results[0].name).toBe("charge_card");
    await builtin.close();
  });

  it("an index from an earlier built-in embedder answers lexically, saying so, until a plain build re-embeds it", async () => {
    const q = makeProject(PY_PROJECT);
    const e = await ProjectEngine.open(q.root, { sideEffects: false });
    const first = await e.build({ project_path: q.root });
    await e.close();
    // What an earlier codemem left: the same index recorded under an older built-in embedder.
    const db = new Database(path.join(q.root, "codegraph-out/codemem_db/index.db"));
    db.prepare("UPDATE meta SET value = 'builtin-hash-v1:384' WHERE key = 'embedder'").run();
    db.close();
    const upgraded = await ProjectEngine.open(q.root, { sideEffects: false });
    // Its vectors are not this embedder's: answers come from the lexical channels alone, and say so.
    const before = await upgraded.query({ project_path: q.root, question: "charge card" });
    expect(before.freshness.warming).toContain("re-embedded vectors");
    expect(before.context).toMatch(/re-embedded vectors not ready, so the answer is lexical/);
    const lexical = await upgraded.search({ project_path: q.root, query: "charge card" });
    expect(lexical.results[0].name).toBe("charge_card");
    expect(lexical.results.flatMap((h) => h.via)).not.toContain("vector");
    const rebuilt = await upgraded.build({ project_path: q.root });
    expect(rebuilt.embedder).toBe(first.embedder);
    expect(rebuilt.nodes_embedded).toBe(first.nodes_embedded);
    const after = await upgraded.search({ project_path: q.root, query: "charge card" });
    expect(after.results[0].name).toBe("charge_card");
    expect(after.results[0].via).toContain("vector");
    expect(after.freshness.warming ?? []).not.toContain("re-embedded vectors");
    await upgraded.close();
    q.cleanup();
  });

  it("an earlier built-in embedder of another width is replaced by a plain build", async () => {
    const q = makeProject(PY_PROJECT);
    const { model, modelDir } = await makeTinyModel(modelsDir);
    fs.writeFileSync(path.join(q.root, "codemem.toml"), `[embedder]\nkind = "neural"\nmodel = "${model}"\nmodel_dir = "${modelDir}"\n`);
    const narrow = await ProjectEngine.open(q.root, { sideEffects: false });
    await narrow.build({ project_path: q.root });
    await narrow.close();
    // A 32-wide index recorded as an earlier built-in embedder's, with the configuration back to the default.
    fs.rmSync(path.join(q.root, "codemem.toml"));
    const db = new Database(path.join(q.root, "codegraph-out/codemem_db/index.db"));
    db.prepare("UPDATE meta SET value = 'builtin-hash-v1:32' WHERE key = 'embedder'").run();
    db.close();
    const e = await ProjectEngine.open(q.root, { sideEffects: false });
    const rebuilt = await e.build({ project_path: q.root });
    expect(rebuilt.embedder).toMatch(/^builtin-code-/);
    expect(rebuilt.nodes_embedded).toBe(rebuilt.node_count);
    expect((await e.stats({ project_path: q.root })).embedder).toBe(rebuilt.embedder);
    expect((await e.search({ project_path: q.root, query: "charge card" })).results[0].name).toBe("charge_card");
    await e.close();
    q.cleanup();
  });

  it("a missing model fails with EMBEDDER_MODEL_MISSING and builds nothing", async () => {
    const q = makeProject({ "a.py": "def a():\n    return 1\n", "codemem.toml": `[embedder]\nkind = "neural"\nmodel = "nobody/missing-model"\nmodel_dir = "${modelsDir}"\n` });
    const e = await ProjectEngine.open(q.root, { sideEffects: false });
    await expectCode(e.build({ project_path: q.root }), "EMBEDDER_MODEL_MISSING");
    expect(fs.existsSync(path.join(q.root, "codegraph-out/codemem_db/index.db"))).toBe(false);
    await e.close();
    q.cleanup();
  });
});
