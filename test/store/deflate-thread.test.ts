import { inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { deflateApart, deflateText, type DeflateJob } from "../../dist/daemon/store/deflate-thread.js";

describe("deflating node texts and extracts", () => {
  const jobs: DeflateJob[] = Array.from({ length: 300 }, (_, i) => ({
    // Some texts are not ASCII: the thread gets them as UTF-8 bytes end to end, cut at byte offsets.
    json: JSON.stringify([`def f${i}(x):\n    return x * ${i}\n`, `f${i}`, "", i % 5 === 0 ? `café ${"🚀".repeat(i % 7)} ünïcode` : "", "", "pkg mod", "x"]),
    kind: i % 3 === 0 ? "module" : i % 3 === 1 ? "definition" : "extract",
  }));

  it("keeps a small text's bytes in a buffer near their size, not in a view of zlib's 16 KB chunk (64K of those held 1 GB)", () => {
    for (const j of jobs) {
      const b = deflateText(j);
      expect(inflateRawSync(b).toString("utf8")).toBe(j.json);
      // A copy's memory is its own or a share of Node's 8 KB pool of small buffers.
      expect(b.buffer.byteLength).toBeLessThanOrEqual(8192);
    }
  });

  it("gives the same bytes on a thread of its own as in place", async () => {
    const apart = await deflateApart(jobs);
    expect(apart.map((b) => b.toString("base64"))).toEqual(jobs.map((j) => deflateText(j).toString("base64")));
  });
});
