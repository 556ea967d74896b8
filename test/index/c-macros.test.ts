import { describe, expect, it } from "vitest";
import { withoutDeclarationMacros } from "../../daemon/index/languages/c-macros.js";

/** The blanked words of `source`, in order: what the scan took for macros. */
function blanked(source: string): string[] {
  const out = withoutDeclarationMacros(source);
  expect(out.length).toBe(source.length);
  const words: string[] = [];
  for (const m of source.matchAll(/\w+/g)) if (out.slice(m.index, m.index + m[0].length).trim() === "") words.push(m[0]);
  return words;
}

describe("C++ declaration macros", () => {
  it("blanks a macro after a declarator's parameters, matching each ) to its own (", () => {
    expect(blanked("void f(int (*cb)(int)) FOO_NOEXCEPT;\n")).toEqual(["FOO_NOEXCEPT"]);
    // An unmatched ) closes no parameters: the word after it stays, in a file of many (once quadratic).
    const unbalanced = "int f(x) A_API;\n" + "y) B_API;\n".repeat(2000);
    expect(blanked(unbalanced)).toEqual(["A_API"]);
  });

  it("blanks a macro with arguments whole, and leaves one whose ( is never closed", () => {
    expect(blanked("FOO_API(int) void g();\n")).toEqual(["FOO_API", "int"]);
    expect(blanked("FOO_DEPRECATED(\"x\" void g();\n")).toEqual([]);
  });
});

describe("C++ declaration macros beside attributes", () => {
  it("blanks an export macro beside [[attributes]], and not after brackets that open nothing", () => {
    expect(blanked("class [[nodiscard]] FOO_API Bar {};\n")).toEqual(["FOO_API"]);
    expect(blanked("class FOO_API [[deprecated]] Bar {};\n")).toEqual(["FOO_API"]);
    // Unmatched ]] before a macro (once a scan to the file's start for each).
    expect(blanked("x]] FOO_API y;\n".repeat(2000))).toEqual([]);
  });
});
