import { describe, it, expect, afterEach } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SynapseStore } from "../../dist/daemon/synapse/store.js";
import { distUrl, runNode } from "./helpers.js";

const STORE_URL = distUrl("daemon/synapse/store.js");

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("concurrent reinforcement", () => {
  it("4 processes × 100 reinforcements of one pair lose no update", async () => {
    dir = mkdtempSync(join(tmpdir(), "codemem-synapse-conc-"));
    const file = join(dir, ".codemem", "synapses.db");
    // A small learning rate keeps the closed form far from the 1.0 cap, so a lost update shows.
    const lr = 0.005;
    SynapseStore.open(file, { learningRate: lr }).close();
    const startAt = Date.now() + 800;
    const code = `
      import { SynapseStore } from ${JSON.stringify(STORE_URL)};
      const s = SynapseStore.open(${JSON.stringify(file)}, { learningRate: ${lr} });
      while (Date.now() < ${startAt}) {}
      for (let i = 0; i < 100; i++) s.reinforce(["pkg/mod.py::A.run", "pkg/util.py::helper"], { source: "test" });
      s.close();
      process.stdout.write("done");`;
    const outs = await Promise.all([0, 1, 2, 3].map(() => runNode(code)));
    expect(outs).toEqual(["done", "done", "done", "done"]);
    const store = SynapseStore.open(file, { learningRate: lr });
    const [e] = store.strongest(10);
    store.close();
    expect(e.count).toBe(400);
    expect(e.ltp).toBe(true);
    expect(e.weight).toBeCloseTo(1 - Math.pow(1 - lr, 400), 9);
  });
});
