import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { shippedFile } from "../../dist/daemon/index/embed/builtin.js";
import { normalize, WordVectors } from "../../dist/daemon/index/embed/word-vectors.js";
import { contentWords, stem } from "../../dist/daemon/index/text.js";

/**
 * The word vectors are kept as stored (int8 rows and a scale per word) and scaled as they are read:
 * a text's vector must be bit for bit the sum over the dequantized float32 table, as the file
 * format defines it (and as the index's stored vectors were made).
 */
function reference(file: string): (text: string, weight?: (s: string) => number) => Float32Array {
  const buf = zlib.gunzipSync(fs.readFileSync(file));
  const end = buf.indexOf(10);
  const { dim, count, wordsBytes } = JSON.parse(buf.subarray(0, end).toString("utf8")) as { dim: number; count: number; wordsBytes: number };
  let o = end + 1;
  const index = new Map(buf.subarray(o, o + wordsBytes).toString("utf8").split("\n").map((w, i) => [w, i]));
  o += wordsBytes;
  const floats = new Float32Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + 8 * count));
  o += 8 * count;
  const q = new Int8Array(buf.buffer.slice(buf.byteOffset + o, buf.byteOffset + o + count * dim));
  const table = Float32Array.from(q, (x, k) => x * floats[count + Math.floor(k / dim)]);
  return (text, weight) => {
    const v = new Float32Array(dim);
    for (const raw of contentWords(text)) {
      const s = stem(raw);
      const i = index.get(s);
      if (i === undefined) continue;
      const w = floats[i] * (weight ? weight(s) : 1);
      for (let d = 0; d < dim; d++) v[d] += w * table[i * dim + d];
    }
    return normalize(v);
  };
}

describe("the built-in embedder's word vectors", () => {
  it("give a text the SIF-weighted sum of the dequantized rows, bit for bit", () => {
    const file = shippedFile("code-words.bin")!;
    const words = WordVectors.load(file);
    const expected = reference(file);
    const texts = fs
      .readdirSync(path.resolve("daemon/retrieve"))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => fs.readFileSync(path.resolve("daemon/retrieve", f), "utf8").split("\n"))
      .concat(["remove the file from the cache", "parse HTTP request headers", "", "zzqx unknownword"]);
    expect(texts.length).toBeGreaterThan(1000);
    const weight = (s: string) => 1 + (s.length % 5) / 2;
    for (const t of texts) {
      expect([...words.vector(t)]).toEqual([...expected(t)]);
      expect([...words.vector(t, weight)]).toEqual([...expected(t, weight)]);
    }
  });
});
