import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { callDaemon } from "../../dist/client/rpc.js";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { discover } from "../../dist/daemon/index/walk.js";
import { walkApart } from "../../dist/daemon/index/walk-thread.js";
import { resolveConfig } from "../../dist/shared/config.js";
import { touchLater } from "../helpers.js";
import { cleanupAll, makeProject, spawnDaemonChild } from "./helpers.js";

afterAll(cleanupAll);

describe("a daemon's first answers after a start", () => {
  it("a walk on another thread lists the tree exactly as the answering thread's walk does", async () => {
    const root = makeProject();
    fs.writeFileSync(path.join(root, ".gitignore"), "app/report.py\n");
    const cfg = resolveConfig(root);
    const here = discover(cfg).files.map((f) => ({ path: f.path, size: f.size, mtimeMs: f.mtimeMs }));
    expect(here.length).toBeGreaterThan(1);
    expect(here.map((f) => f.path)).not.toContain("app/report.py");
    expect(await walkApart(cfg)).toEqual(here);
  });

  it("report what changed while no daemon ran: edits, additions and deletions are pending", async () => {
    const root = makeProject();
    const engine = await ProjectEngine.open(root, { sideEffects: false });
    await engine.build({ project_path: root });
    await engine.close();
    fs.appendFileSync(path.join(root, "app/store.py"), "\n\ndef audit_stock(inv):\n    return sorted(inv.items)\n");
    touchLater(path.join(root, "app/store.py"));
    fs.rmSync(path.join(root, "app/report.py"));
    fs.writeFileSync(path.join(root, "app/orders.py"), "def place_order(sku):\n    return sku\n");
    // Without a watcher (whose catch-up build would index the changes first), freshness is the start's walk.
    spawnDaemonChild(root, ["--no-watch"]);
    const out = (await callDaemon(root, "search", { project_path: root, query: "stock report" })) as { freshness: { stale: boolean; pending_count: number; pending_files: string[] } };
    expect(out.freshness.stale).toBe(true);
    expect([...out.freshness.pending_files].sort()).toEqual(["app/orders.py", "app/report.py", "app/store.py"]);
    expect(out.freshness.pending_count).toBe(3);
  });
});
