import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Deadlines catch hangs, not slowness: the suite must pass on two cores running other work (load ~16).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Daemon and build tests spawn processes and parse real trees; two cores, so keep it modest.
    maxWorkers: 2,
    // Trust records (`codemem trust`, shared/trust.ts) go to a config dir of this run, not the user's.
    // Audit anchors (client/audit.ts) likewise go to a state dir of this run, the tokenizer's rank table
    // (shared/tokens.ts) to a cache dir of this run.
    // LANCEDB_LOG: test/store/lance.test.ts loads LanceDB itself, before codemem's loader quiets its logger.
    env: { LANCEDB_LOG: "error", XDG_CONFIG_HOME: fs.mkdtempSync(path.join(os.tmpdir(), "codemem-test-config-")), XDG_STATE_HOME: fs.mkdtempSync(path.join(os.tmpdir(), "codemem-test-state-")), XDG_CACHE_HOME: fs.mkdtempSync(path.join(os.tmpdir(), "codemem-test-cache-")) },
  },
});
