/**
 * Writes graph.json on a thread of its own and exits: the build thread stays free for the next save
 * while a large graph is read and serialised (seconds at 60K nodes when written whole), and the
 * memory it took is returned when the thread ends. Its layout goes back for the next write.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { ResolvedConfig } from "../../shared/config.js";
import { writeGraphFile, type GraphFilePatch } from "./graph-file.js";

const { cfg, meta, patch } = workerData as { cfg: ResolvedConfig; meta: { built_at: string; index_version: string }; patch?: GraphFilePatch };
writeGraphFile(cfg, meta, patch).then(
  (written) => parentPort!.postMessage({ ok: true, written }),
  // Its code goes along: ENOSPC is DISK_FULL on the other side.
  (err: NodeJS.ErrnoException) => parentPort!.postMessage({ ok: false, error: err.message, code: err.code }),
);
