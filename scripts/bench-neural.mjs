#!/usr/bin/env node
// Throughput of the neural embedder (texts/s), offline.
//
//   npm run build && node scripts/bench-neural.mjs [--texts 2000] [--batch 32] [--max-tokens 256]
//                                                  [--model <name|path> [--model-dir <dir>]]
//
// Without --model it generates the tiny test model (test/fixtures/tiny-model.ts, transpiled on the
// fly with the project's TypeScript) into a temp folder, so the figure measures the pipeline
// overhead (tokeniser + ORT session + pooling), not a real transformer.
import { mkdtemp, rm, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const { values } = parseArgs({
  options: {
    texts: { type: "string", default: "2000" },
    batch: { type: "string", default: "32" },
    "max-tokens": { type: "string", default: "256" },
    model: { type: "string" },
    "model-dir": { type: "string" },
  },
});

const neuralPath = join(root, "dist/daemon/index/embed/neural.js");
const { createNeuralEmbedder } = await import(pathToFileURL(neuralPath).href).catch((err) => {
  console.error(`cannot import ${neuralPath} (${err.message}); run \`npm run build\` first`);
  process.exit(1);
});

const tmp = await mkdtemp(join(tmpdir(), "codemem-bench-neural-"));
try {
  let model = values.model;
  let modelDir = values["model-dir"];
  if (!model) {
    const ts = (await import("typescript")).default;
    const src = await readFile(join(root, "test/fixtures/tiny-model.ts"), "utf8");
    const js = ts.transpileModule(src, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText.replace('"../../shared/random.js"', JSON.stringify(pathToFileURL(join(root, "dist/shared/random.js")).href)); // the fixture runs from a temp dir
    const fixture = join(tmp, "tiny-model.mjs");
    await writeFile(fixture, js);
    const { makeTinyModel } = await import(pathToFileURL(fixture).href);
    ({ model, modelDir } = await makeTinyModel(join(tmp, "models")));
  }

  const words = ["parse", "json", "http", "request", "read", "file", "write", "config", "user", "cache",
    "token", "index", "graph", "node", "query", "server", "client", "error", "async", "value"];
  const n = Number(values.texts);
  const texts = Array.from({ length: n }, (_, i) => {
    const w = (k) => words[(i * 7 + k * 13) % words.length];
    const lines = 2 + (i % 12);
    const body = Array.from({ length: lines }, (_, l) => `  const ${w(l)}${l} = await ${w(l + 1)}.${w(l + 2)}(${w(l + 3)}, "${i}");`);
    return `export async function ${w(0)}${w(1)}${i}(${w(2)}: string) {\n${body.join("\n")}\n  return ${w(3)};\n}`;
  });

  const t0 = performance.now();
  const embedder = await createNeuralEmbedder({
    model,
    modelDir,
    allowDownload: false,
    batchSize: Number(values.batch),
    maxTokens: Number(values["max-tokens"]),
  });
  const tLoad = performance.now() - t0;
  const t1 = performance.now();
  const vecs = await embedder.embed(texts);
  const secs = (performance.now() - t1) / 1000;
  await embedder.close?.();
  if (vecs.length !== n) throw new Error(`expected ${n} vectors, got ${vecs.length}`);
  console.log(
    `${embedder.id}: ${n} texts in ${secs.toFixed(2)} s = ${(n / secs).toFixed(0)} texts/s ` +
      `(batch ${values.batch}, max_tokens ${values["max-tokens"]}, load ${tLoad.toFixed(0)} ms)`,
  );
} finally {
  await rm(tmp, { recursive: true, force: true });
}
