import fs from "node:fs";
import os from "node:os";
import path from "node:path";
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
    expect(rebuilt.embedder).toMatch(/^builtin-hash-v1:/);
    expect((await builtin.search({ project_path: p.root, query: "charge card" })).results[0].name).toBe("charge_card");
    await builtin.close();
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
