import { Worker } from "node:worker_threads";

/**
 * Runs a thread that answers one request and is done (graph.json, deflating a build's texts,
 * clustering a large graph): the module at `url` reads `data` as its workerData and posts one reply.
 * Resolves with that reply (the thread is then stopped); rejects when the thread fails or exits
 * without one. `what` names the thread in that error; `transfer` moves buffers of `data` instead of
 * copying them.
 */
export function threadReply<R>(url: URL, data: unknown, what: string, transfer?: ArrayBuffer[]): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const w = new Worker(url, { workerData: data, transferList: transfer });
    let answered = false;
    w.once("message", (reply: R) => {
      answered = true;
      void w.terminate();
      resolve(reply);
    });
    w.once("error", (err) => {
      if (!answered) reject(err);
    });
    w.once("exit", (code) => {
      if (!answered) reject(new Error(`${what} exited (${code})`));
    });
  });
}
