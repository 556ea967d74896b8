import { parentPort } from "node:worker_threads";
import { Extractor } from "./extract.js";
import { languageById } from "./languages/registry.js";
import type { LanguageId } from "./types.js";

const extractor = new Extractor();

parentPort!.on("message", async (msg: { id: number; path: string; language: LanguageId; source: string }) => {
  try {
    const extract = await extractor.extract(msg.path, msg.source, languageById(msg.language));
    parentPort!.postMessage({ id: msg.id, extract });
  } catch (err) {
    parentPort!.postMessage({ id: msg.id, error: (err as Error).message });
  }
});
