/** Blocks this thread for `ms` (lock retries in code that must stay synchronous: starting, taking a lock). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
