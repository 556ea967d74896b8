import { describe, expect, it } from "vitest";
import { HashFeatures } from "../../dist/daemon/index/embed/hash-features.js";

const features = new HashFeatures(256);
const cosine = (a: string, b: string) => {
  const [x, y] = [features.vector(a), features.vector(b)];
  return x.reduce((s, v, i) => s + v * y[i], 0);
};

describe("the built-in embedder's concept groups", () => {
  // Flask's "how does the flask command find the application to run?" is answered by `locate_app`
  // and `find_best_app`: code abbreviates the question's word, and "locate" is a way to find.
  it("join an abbreviation in code with the word a question uses", () => {
    expect(cosine("application", "app")).toBeGreaterThan(0.2);
    expect(cosine("find the application", "locate_app")).toBeGreaterThan(0.2);
  });

  it("leave unrelated words apart", () => {
    expect(Math.abs(cosine("application", "route"))).toBeLessThan(0.1);
    expect(Math.abs(cosine("locate", "render"))).toBeLessThan(0.1);
  });
});
