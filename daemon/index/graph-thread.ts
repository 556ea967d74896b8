/**
 * Writes graph.json on a thread of its own and exits: the build thread stays free for the next save
 * while a large graph is read and serialised (seconds at 60K nodes), and the memory it took is
 * returned when the thread ends.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { ResolvedConfig } from "../../shared/config.js";
import { writeGraphFile } from "./graph-file.js";

const { cfg, meta } = workerData as { cfg: ResolvedConfig; meta: { built_at: string; index_version: string } };
writeGraphFile(cfg, meta).then(
  () => parentPort!.postMessage({ ok: true }),
  (err: Error) => parentPort!.postMessage({ ok: false, error: err.message }),
);
