/**
 * The daemon's build thread: runs one build at a time for ThreadBuilder (builder.ts) and keeps the
 * warm build state between them. Messages are handled in order, so builds never overlap.
 */
import { parentPort } from "node:worker_threads";
import type { ResolvedConfig } from "../../shared/config.js";
import { asCodememError } from "../../shared/errors.js";
import { configureLog } from "../../shared/log.js";
import { collectWhenIdle } from "../../shared/memory.js";
import { LocalBuilder, memoryMb, writeGraphInThread, type FromThread, type ToThread } from "./builder.js";
import type { Embedder } from "./embed/embedder.js";
import { createEmbedder } from "./embed/select.js";

const port = parentPort!;
let builder: LocalBuilder | undefined;
let embedder: { key: string; value: Promise<Embedder> } | undefined;

/** The embedder the configuration names, made again when the configuration changes it. */
function embedderFor(cfg: ResolvedConfig): Promise<Embedder> {
  const key = JSON.stringify(cfg.embedder);
  if (embedder?.key !== key) {
    const old = embedder?.value;
    embedder = { key, value: createEmbedder(cfg) };
    void old?.then((e) => e.close?.()).catch(() => {});
  }
  return embedder.value;
}

let queue = Promise.resolve();
port.on("message", (m: ToThread) => {
  // Answered at once, between a build's awaits: a status request does not wait for the build.
  if (m.type === "memory") return port.postMessage({ type: "memory", id: m.id, memory: memoryMb() } satisfies FromThread);
  // Also at once: it stops the build running now, not one queued after it.
  if (m.type === "cancel") return void builder?.cancel();
  queue = queue.then(() => handle(m));
});

async function handle(m: ToThread): Promise<void> {
  if (m.type === "memory" || m.type === "cancel") return;
  if (m.type === "reset") return builder?.reset();
  if (m.type === "close") {
    await builder?.close();
    await embedder?.value.then((e) => e.close?.()).catch(() => {});
    return port.postMessage({ type: "closed" } satisfies FromThread);
  }
  configureLog({ debug: m.cfg.debug, component: "daemon" });
  if (!builder) {
    builder = new LocalBuilder(m.cfg.build.workers, embedderFor, writeGraphInThread);
    builder.onBackground = (result) => port.postMessage({ type: "background", result } satisfies FromThread);
  }
  try {
    const result = await builder.build(m.cfg, m.req, (progress) => port.postMessage({ type: "progress", id: m.id, progress } satisfies FromThread));
    port.postMessage({ type: "done", id: m.id, result } satisfies FromThread);
  } catch (err) {
    const e = asCodememError(err);
    port.postMessage({ type: "failed", id: m.id, error: { code: e.code, message: e.message, details: e.details } } satisfies FromThread);
  } finally {
    collectWhenIdle();
  }
}
