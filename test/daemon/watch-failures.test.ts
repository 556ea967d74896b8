import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { startWatcher } from "../../dist/daemon/watch.js";
import { touchLater } from "../helpers.js";
import { cleanupAll, makeProject, waitFor } from "./helpers.js";

afterAll(cleanupAll);

describe("a watch batch that fails", () => {
  it("is retried, then its files stay pending (the index reads stale) until an event brings them into a batch that succeeds", async () => {
    const root = makeProject({ files: { "app/a.py": "def alpha():\n    return 1\n", "app/b.py": "def beta():\n    return 2\n" } });
    const engine = await ProjectEngine.open(root, { sideEffects: false });
    const db = path.join(root, "codegraph-out/codemem_db/index.db");
    let watcher: ReturnType<typeof startWatcher> | undefined;
    try {
      await engine.build({ project_path: root });
      const good = fs.readFileSync(db);
      watcher = startWatcher(engine, { quietMs: 50, maxDelayMs: 500 });
      await watcher.ready;
      const w = watcher;
      engine.watchWith(() => w.status().pending);
      expect(await engine.freshness()).toMatchObject({ stale: false }); // the reader opens the index as it was

      // A damaged index (a real one: garbage where the database was) fails every batch.
      fs.rmSync(db);
      fs.writeFileSync(db, Buffer.alloc(8192, 0x5a));
      fs.appendFileSync(path.join(root, "app/a.py"), "\n\ndef gamma():\n    return 3\n");
      touchLater(path.join(root, "app/a.py"));
      // The first try and its retries fail; then the batch waits.
      await waitFor("the batch and its retries to fail", () => w.status().batches >= 3 && !w.status().building && w.status().last_batch?.error !== undefined, 60_000);
      await new Promise((r) => setTimeout(r, 300)); // no further retry comes
      expect(w.status()).toMatchObject({ batches: 3, pending: ["app/a.py"], building: false });
      expect(await engine.freshness()).toMatchObject({ stale: true, pending_count: 1, pending_files: ["app/a.py"] });

      // Repaired, the next event's batch takes the failed file too.
      fs.rmSync(db);
      for (const side of ["-wal", "-shm"]) fs.rmSync(db + side, { force: true });
      fs.writeFileSync(db, good);
      fs.appendFileSync(path.join(root, "app/b.py"), "\n\ndef delta():\n    return 4\n");
      touchLater(path.join(root, "app/b.py"));
      await waitFor("a batch that succeeds", () => w.status().pending.length === 0 && !w.status().building && w.status().last_batch?.error === undefined, 60_000);
      expect(w.status().last_batch).toMatchObject({ files: 2, changed: 2 });
      engine.markChanged();
      expect(await engine.freshness()).toMatchObject({ stale: false, pending_count: 0 });
    } finally {
      await watcher?.close();
      await engine.close();
    }
  }, 120_000);
});
