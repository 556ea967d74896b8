import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtemp, rm, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNeuralEmbedder } from "../../daemon/index/embed/neural.js";
import type { Embedder } from "../../daemon/index/embed/embedder.js";
import { makeTinyModel, TINY_HIDDEN_SIZE } from "../fixtures/tiny-model.js";

// Any attempt to reach the network fails the test loudly.
const realFetch = globalThis.fetch;
function forbidNetwork(): void {
  globalThis.fetch = (async (input: unknown) => {
    throw new Error(`network access attempted in test: ${String(input)}`);
  }) as typeof fetch;
}

function norm(v: Float32Array): number {
  let s = 0;
  for (const x of v) s += x * x;
  return Math.sqrt(s);
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const CODE_TEXTS = [
  "function parseJson(text) { return JSON.parse(text); }",
  "async function readFile(path) { return fs.promises.readFile(path, 'utf8'); }",
  "def write_config(path, data):\n    with open(path, 'w') as f:\n        json.dump(data, f)",
  "class HttpClient { get(url) { return fetch(url); } }",
  "SELECT id, name FROM users WHERE id = ?",
];

describe("neural embedder (tiny generated model, offline)", () => {
  let dir: string;
  let modelDir: string;
  let model: string;
  let embedder: Embedder;

  beforeAll(async () => {
    forbidNetwork();
    // transformers.js captures fetch at import time; guard its own hook as well.
    const { env } = await import("@huggingface/transformers");
    env.fetch = globalThis.fetch;
    dir = await mkdtemp(join(tmpdir(), "codemem-neural-"));
    ({ modelDir, model } = await makeTinyModel(join(dir, "models")));
    embedder = await createNeuralEmbedder({
      model,
      modelDir,
      cacheDir: join(dir, "cache"),
      allowDownload: false,
      batchSize: 16,
    });
  });

  afterAll(async () => {
    await embedder?.close?.();
    globalThis.fetch = realFetch;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("reports the model's hidden size and an hf: id", () => {
    expect(embedder.dim).toBe(TINY_HIDDEN_SIZE);
    expect(embedder.id).toBe(`hf:${model}:${TINY_HIDDEN_SIZE}`);
  });

  it("returns one L2-normalised Float32Array per text", async () => {
    const vecs = await embedder.embed(CODE_TEXTS);
    expect(vecs).toHaveLength(CODE_TEXTS.length);
    for (const v of vecs) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(TINY_HIDDEN_SIZE);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(v.every(Number.isFinite)).toBe(true);
    }
  });

  it("is deterministic: identical texts give identical vectors, across calls", async () => {
    const a = await embedder.embed(CODE_TEXTS);
    const b = await embedder.embed(CODE_TEXTS);
    for (let i = 0; i < a.length; i++) expect(Array.from(a[i])).toEqual(Array.from(b[i]));
    const [x, y] = await embedder.embed([CODE_TEXTS[0], CODE_TEXTS[0]]);
    expect(Array.from(x)).toEqual(Array.from(y));
  });

  it("gives different vectors to different texts", async () => {
    const vecs = await embedder.embed([...CODE_TEXTS, "parse json", "json parse", "write file"]);
    for (let i = 0; i < vecs.length; i++) {
      for (let j = i + 1; j < vecs.length; j++) {
        expect(maxAbsDiff(vecs[i], vecs[j])).toBeGreaterThan(1e-3);
      }
    }
  });

  it("batches in order: 70 texts with batchSize 16 equal their single-text embeddings", async () => {
    const texts = Array.from(
      { length: 70 },
      (_, i) => `export function handler${i}(req) { return readFile("file_${i}.json", ${"x".repeat(i % 13)}); }`,
    );
    const batched = await embedder.embed(texts);
    expect(batched).toHaveLength(70);
    for (let i = 0; i < texts.length; i++) {
      const [single] = await embedder.embed([texts[i]]);
      expect(maxAbsDiff(batched[i], single)).toBeLessThan(1e-5);
    }
  });

  it("handles an empty list and empty strings", async () => {
    expect(await embedder.embed([])).toEqual([]);
    const [v] = await embedder.embed([""]);
    expect(v.length).toBe(TINY_HIDDEN_SIZE);
    expect(norm(v)).toBeCloseTo(1, 5);
  });

  it("truncates long texts to maxTokens", async () => {
    const small = await createNeuralEmbedder({ model, modelDir, allowDownload: false, maxTokens: 8 });
    try {
      const prefix = "read write parse json http file open close"; // 8 word tokens: already over budget
      const [a] = await small.embed([prefix + " extra tokens that get cut"]);
      const [b] = await small.embed([prefix + " completely different tail"]);
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-6);
      const [full1] = await embedder.embed([prefix + " extra tokens that get cut"]);
      const [full2] = await embedder.embed([prefix + " completely different tail"]);
      expect(maxAbsDiff(full1, full2)).toBeGreaterThan(1e-3);
    } finally {
      await small.close?.();
    }
  });

  it("loads a model given as an absolute folder path", async () => {
    const byPath = await createNeuralEmbedder({ model: join(modelDir, model), allowDownload: false });
    try {
      expect(byPath.dim).toBe(TINY_HIDDEN_SIZE);
      const [a] = await byPath.embed([CODE_TEXTS[1]]);
      const [b] = await embedder.embed([CODE_TEXTS[1]]);
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-6);
    } finally {
      await byPath.close?.();
    }
  });

  it("prefers the local folder even when download is allowed (no network)", async () => {
    const local = await createNeuralEmbedder({ model, modelDir, cacheDir: join(dir, "cache"), allowDownload: true });
    try {
      expect(local.id).toBe(embedder.id);
      const [a] = await local.embed([CODE_TEXTS[2]]);
      const [b] = await embedder.embed([CODE_TEXTS[2]]);
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-6);
    } finally {
      await local.close?.();
    }
  });

  it("rejects with EMBEDDER_MODEL_MISSING when the model is absent and download is off", async () => {
    const emptyDir = join(dir, "empty-models");
    await mkdir(emptyDir, { recursive: true });
    const err = await createNeuralEmbedder({
      model: "Xenova/all-MiniLM-L6-v2",
      modelDir: emptyDir,
      cacheDir: join(dir, "empty-cache"),
      allowDownload: false,
    }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(err).toBeInstanceOf(Error);
    expect(err?.code).toBe("EMBEDDER_MODEL_MISSING");
    expect(err?.message).toContain("Xenova/all-MiniLM-L6-v2");
    expect(err?.message).toContain(emptyDir);
    expect(err?.message).toContain("allow_download = true");
  });

  it("rejects with EMBEDDER_MODEL_MISSING for a missing absolute path", async () => {
    const missing = join(dir, "no-such-model");
    await expect(createNeuralEmbedder({ model: missing, allowDownload: false })).rejects.toMatchObject({
      code: "EMBEDDER_MODEL_MISSING",
    });
  });

  it("rejects with EMBEDDER_LOAD_FAILED when the model folder is corrupt", async () => {
    const { modelDir: badDir, model: badModel } = await makeTinyModel(join(dir, "bad-models"));
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(badDir, badModel, "onnx", "model.onnx"), "not an onnx model");
    await expect(
      createNeuralEmbedder({ model: join(badDir, badModel), allowDownload: false }),
    ).rejects.toMatchObject({ code: "EMBEDDER_LOAD_FAILED", message: expect.stringContaining(badModel) });
  });
});
