import { describe, expect, it } from "vitest";
import { Extractor } from "../../daemon/index/extract.js";
import { languageForPath } from "../../daemon/index/languages/registry.js";
import { resolveGraph } from "../../daemon/index/resolve.js";

/** A package of `size` files and `importers` files that each import it and call into it. */
const PROJECTS: Record<string, (size: number, importers: number) => Record<string, string>> = {
  go: (size, importers) => ({
    ...Object.fromEntries(Array.from({ length: size }, (_, i) => [`lib/part${i}.go`, `package lib\n\n// Part${i} does part ${i}.\nfunc Part${i}() int { return ${i} }\n`])),
    ...Object.fromEntries(Array.from({ length: importers }, (_, i) => [`cmd/tool${i}/main.go`, `package main\n\nimport (\n\t"example.com/mod/lib"\n\t"fmt"\n)\n\nfunc main() { fmt.Println(lib.Part${i % 3}()) }\n`])),
  }),
  java: (size, importers) => ({
    ...Object.fromEntries(Array.from({ length: size }, (_, i) => [`src/com/acme/lib/Part${i}.java`, `package com.acme.lib;\n\npublic class Part${i} {\n  public static int run${i}() { return ${i}; }\n}\n`])),
    ...Object.fromEntries(Array.from({ length: importers }, (_, i) => [`src/com/acme/app/Tool${i}.java`, `package com.acme.app;\n\nimport com.acme.lib.*;\nimport com.acme.lib.Part${i % 3};\n\npublic class Tool${i} {\n  int go() { return Part${i % 3}.run${i % 3}(); }\n}\n`])),
  }),
  python: (size, importers) => ({
    "pkg/__init__.py": "",
    ...Object.fromEntries(Array.from({ length: size }, (_, i) => [`pkg/part${i}.py`, `def part${i}():\n    return ${i}\n`])),
    ...Object.fromEntries(Array.from({ length: importers }, (_, i) => [`app/tool${i}.py`, `from pkg import part${i % 3}\nimport pkg.part${(i + 1) % 3}\n\ndef main():\n    return part${i % 3}.part${i % 3}()\n`])),
  }),
  typescript: (size, importers) => ({
    "lib/index.ts": Array.from({ length: size }, (_, i) => `export * from "./part${i}.js";`).join("\n") + "\n",
    ...Object.fromEntries(Array.from({ length: size }, (_, i) => [`lib/part${i}.ts`, `export function part${i}(): number {\n  return ${i};\n}\n`])),
    ...Object.fromEntries(Array.from({ length: importers }, (_, i) => [`app/tool${i}.ts`, `import { part${i % 3} } from "../lib/index.js";\nimport * as lib from "../lib/part${i % 3}.js";\n\nexport function main(): number {\n  return part${i % 3}() + lib.part${i % 3}();\n}\n`])),
  }),
};

async function importEdges(files: Record<string, string>) {
  const extractor = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, text]) => extractor.extract(p, text, languageForPath(p)!)));
  return resolveGraph(extracts).edges.filter((e) => e.type === "imports");
}

describe.each(Object.keys(PROJECTS))("%s imports", (lang) => {
  it("are one edge per importing file and imported module, whatever the size of the imported package", async () => {
    const small = await importEdges(PROJECTS[lang](4, 6));
    const large = await importEdges(PROJECTS[lang](40, 6));
    // Each importer's imports of project code are edges; a package's size adds none.
    const fromImporters = (edges: typeof small) => edges.filter((e) => /^(cmd|src\/com\/acme\/app|app)\//.test(e.source));
    expect(fromImporters(small).length).toBeGreaterThanOrEqual(6);
    expect(fromImporters(large).length).toBe(fromImporters(small).length);
    expect(new Set(fromImporters(large).map((e) => e.source)).size).toBe(6);
    // At most one edge per import statement.
    for (const e of fromImporters(large)) expect(fromImporters(large).filter((x) => x.source === e.source).length).toBeLessThanOrEqual(2);
  });
});

it("a Go import points at the package's entry file and a Java class import at the class's file", async () => {
  const go = await importEdges({ ...PROJECTS.go(3, 1), "lib/lib.go": "// Package lib is a library.\npackage lib\n" });
  expect(go.map((e) => [e.source, e.target])).toEqual([["cmd/tool0/main.go", "lib/lib.go"]]);
  const java = await importEdges(PROJECTS.java(3, 1));
  expect(java.map((e) => e.target).sort()).toEqual(["src/com/acme/lib/Part0.java"]);
});
