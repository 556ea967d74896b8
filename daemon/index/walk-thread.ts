/**
 * One walk of a project's tree (discover) on a thread of its own. A daemon starts one as it opens
 * its reader, so the first answer's freshness (what changed while no daemon watched) does not walk
 * the tree on the answering thread (~150 ms at 5,000 files) after the catalog has loaded.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import type { ResolvedConfig } from "../../shared/config.js";

/** A file the walk would index, with the stat the freshness check compares. */
export interface WalkedFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/** The files `discover(cfg)` lists, walked on another thread. */
export function walkApart(cfg: ResolvedConfig): Promise<WalkedFile[]> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL("./walk-thread.js", import.meta.url), { workerData: { walkTree: cfg } });
    w.once("message", resolve);
    w.once("error", reject);
    w.once("exit", (code) => reject(new Error(`the walk thread exited (${code}) before listing the tree`)));
  });
}

const job = isMainThread ? undefined : (workerData as { walkTree?: ResolvedConfig } | undefined)?.walkTree;
if (job) {
  const { discover } = await import("./walk.js");
  parentPort!.postMessage(discover(job).files.map((f): WalkedFile => ({ path: f.path, size: f.size, mtimeMs: f.mtimeMs })));
}
