import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";

async function defsOf(path: string, lines: string[]) {
  const e = await new Extractor().extract(path, lines.join("\n") + "\n", languageForPath(path)!);
  return new Map(e.defs.map((d) => [d.qualifiedName, d]));
}

describe("Rust definitions", () => {
  it("macro_rules! macros are definitions, with the doc comment above their attributes", async () => {
    const defs = await defsOf("src/macros.rs", [
      "/// Logs a message at the error level.",
      "#[macro_export(local_inner_macros)]",
      "macro_rules! error {",
      "    ($($arg:tt)+) => (log!($crate::Level::Error, $($arg)+))",
      "}",
      "",
      "/// The largest level enabled.",
      "#[inline]",
      "#[cfg(feature = \"std\")]",
      "pub fn max_level() -> u8 { 3 }",
      "",
      "#[inline]",
      "pub fn min_level() -> u8 { 0 }",
    ]);
    expect(defs.get("error")).toMatchObject({ kind: "function", signature: "macro_rules! error", docstring: "Logs a message at the error level." });
    expect(defs.get("max_level")?.docstring).toBe("The largest level enabled.");
    // An attribute alone is no doc, and the doc of the item above is not this one's.
    expect(defs.get("min_level")?.docstring).toBe("");
  });
});
