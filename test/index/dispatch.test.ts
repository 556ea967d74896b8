import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";

/** A caller's CALLS edges of a few files given inline, with their dispatch marks (`null`: a direct call). */
async function callsOf(files: Record<string, string>, caller: string) {
  const x = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, text]) => x.extract(p, text, languageForPath(p)!)));
  const { edges } = resolveGraph(extracts);
  return Object.fromEntries(edges.filter((e) => e.source === caller && e.type === "calls").map((e) => [e.target, e.dispatch ?? null]));
}

export const TS_SHAPES = {
  "shape.ts": "export interface Shape { area(): number; }\nexport abstract class Base implements Shape {\n  area(): number { return 0; }\n}\n",
  "square.ts": 'import { Base } from "./shape";\nexport class Square extends Base {\n  area(): number { return 4; }\n}\n',
  "circle.ts": 'import { Shape } from "./shape";\nexport class Circle implements Shape {\n  area(): number { return 3; }\n}\n',
  "use.ts":
    'import { Shape, Base } from "./shape";\nexport function total(s: Shape): number {\n  return s.area();\n}\nexport function viaBase(b: Base): number {\n  return b.area();\n}\n',
};

export const GO_SHAPES = {
  "shape/shape.go": "package shape\n\ntype Shape interface {\n\tArea() int\n\tScale(f int, g int) Shape\n}\n\nfunc Total(s Shape) int {\n\treturn s.Area()\n}\n",
  "shape/square.go": "package shape\n\ntype Square struct{}\n\nfunc (q *Square) Area() int { return 4 }\n\nfunc (q *Square) Scale(f int, g int) Shape { return q }\n",
  "shape/circle.go": "package shape\n\ntype Circle struct{ Square }\n\nfunc (c Circle) Area() int { return 3 }\n",
  // Same method names, wrong arity: no implementation.
  "shape/line.go": "package shape\n\ntype Line struct{}\n\nfunc (l Line) Area() int { return 0 }\n\nfunc (l Line) Scale(f int) Shape { return l }\n",
};

export const PY_SHAPES = {
  "shapes/base.py": "class Shape:\n    def area(self):\n        raise NotImplementedError\n\n    def describe(self):\n        return self.area()\n",
  "shapes/square.py": "from .base import Shape\n\nclass Square(Shape):\n    def area(self):\n        return 4\n",
  "shapes/circle.py": "from .base import Shape\n\nclass Circle(Shape):\n    def area(self):\n        return 3\n",
  "shapes/use.py": "from .base import Shape\n\ndef total(s: Shape):\n    return s.area()\n",
};

describe("dispatch candidates", () => {
  it("TypeScript: a call through an interface reaches every implementer, marked; through a base class, the declared member and its overrides", async () => {
    expect(await callsOf(TS_SHAPES, "use.ts::total")).toEqual({ "shape.ts::Base.area": 0.333, "square.ts::Square.area": 0.333, "circle.ts::Circle.area": 0.333 });
    // The declared member stays a direct edge (what the compiler reports); the override is a candidate beside it.
    expect(await callsOf(TS_SHAPES, "use.ts::viaBase")).toEqual({ "shape.ts::Base.area": null, "square.ts::Square.area": 0.5 });
  });

  it("Go: a call through an interface reaches the types whose method sets satisfy it (promoted methods count, arity must match)", async () => {
    const calls = await callsOf(GO_SHAPES, "shape/shape.go::Total");
    expect(calls).toEqual({ "shape/square.go::Square.Area": 0.5, "shape/circle.go::Circle.Area": 0.5 });
  });

  it("Python: a call on a base-typed receiver or on self in the base reaches the overrides, beside the declared method", async () => {
    const expected = { "shapes/base.py::Shape.area": null, "shapes/square.py::Square.area": 0.333, "shapes/circle.py::Circle.area": 0.333 };
    expect(await callsOf(PY_SHAPES, "shapes/use.py::total")).toEqual(expected);
    expect(await callsOf(PY_SHAPES, "shapes/base.py::Shape.describe")).toEqual(expected);
  });

  it("a call on a class's static side, or on a class nobody extends, has no candidates", async () => {
    const files = {
      "a.ts": "export class A { static make(): number { return 1; } run(): number { return 1; } }\nexport class B extends A { static make(): number { return 2; } }\nexport class C { go(): number { return 1; } }\n",
      "use.ts": 'import { A, C } from "./a";\nexport function f(c: C): number {\n  return A.make() + c.go();\n}\n',
    };
    expect(await callsOf(files, "use.ts::f")).toEqual({ "a.ts::A.make": null, "a.ts::C.go": null });
  });
});
