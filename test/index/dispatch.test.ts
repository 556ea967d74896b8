import path from "node:path";
import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";
import { readGraphFile } from "../../dist/daemon/index/graph-file.js";
import { GO_SHAPES, PY_SHAPES, TS_SHAPES } from "../fixtures/dispatch-shapes.js";
import { builtProject } from "./fixture.js";

/** A caller's CALLS edges of a few files given inline, with their dispatch marks (`null`: a direct call). */
async function callsOf(files: Record<string, string>, caller: string) {
  const x = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, text]) => x.extract(p, text, languageForPath(p)!)));
  const { edges } = resolveGraph(extracts);
  return Object.fromEntries(edges.filter((e) => e.source === caller && e.type === "calls").map((e) => [e.target, e.dispatch ?? null]));
}

describe("dispatch candidates", () => {
  it("TypeScript: a call through an interface reaches every implementer, marked; through a base class, the declared member and its overrides; statics and unextended classes have none", async () => {
    expect(await callsOf(TS_SHAPES, "use.ts::total")).toEqual({ "shape.ts::Base.area": 0.25, "square.ts::Square.area": 0.25, "circle.ts::Circle.area": 0.25 });
    // The declared member stays a direct edge (what the compiler reports); the override is a candidate beside it.
    expect(await callsOf(TS_SHAPES, "use.ts::viaBase")).toEqual({ "shape.ts::Base.area": null, "square.ts::Square.area": 0.5 });
    // A call on a class's static side, or on a class nobody extends, has none.
    const files = {
      "a.ts": "export class A { static make(): number { return 1; } run(): number { return 1; } }\nexport class B extends A { static make(): number { return 2; } }\nexport class C { go(): number { return 1; } }\n",
      "use.ts": 'import { A, C } from "./a";\nexport function f(c: C): number {\n  return A.make() + c.go();\n}\n',
    };
    expect(await callsOf(files, "use.ts::f")).toEqual({ "a.ts::A.make": null, "a.ts::C.go": null });
  });

  it("Go: a call through an interface reaches the types whose method sets satisfy it (promoted methods count, arity must match)", async () => {
    const calls = await callsOf(GO_SHAPES, "shape/shape.go::Total");
    expect(calls).toEqual({ "shape/square.go::Square.Area": 0.333, "shape/circle.go::Circle.Area": 0.333 });
  });

  it("a subclass in test code is a candidate of the tests' calls, never of the product's (rxjs' spec LogSubscriber)", async () => {
    const files = {
      "src/subscriber.ts": "export class Subscriber { next(v: number): void {} }\nexport class SafeSubscriber extends Subscriber { next(v: number): void {} }\n",
      "spec/helpers/log.ts": 'import { Subscriber } from "../../src/subscriber";\nexport class LogSubscriber extends Subscriber { next(v: number): void {} }\n',
      "src/use.ts": 'import { Subscriber } from "./subscriber";\nexport function emit(s: Subscriber): void {\n  s.next(1);\n}\n',
      "spec/use.spec.ts": 'import { Subscriber } from "../src/subscriber";\nexport function check(s: Subscriber): void {\n  s.next(1);\n}\n',
    };
    expect(await callsOf(files, "src/use.ts::emit")).toEqual({ "src/subscriber.ts::Subscriber.next": null, "src/subscriber.ts::SafeSubscriber.next": 0.5 });
    expect(await callsOf(files, "spec/use.spec.ts::check")).toEqual({ "src/subscriber.ts::Subscriber.next": null, "src/subscriber.ts::SafeSubscriber.next": 0.333, "spec/helpers/log.ts::LogSubscriber.next": 0.333 });
  });

  it("Python: a call on a base-typed receiver or on self in the base reaches the overrides, beside the declared method", async () => {
    const expected = { "shapes/base.py::Shape.area": null, "shapes/square.py::Square.area": 0.333, "shapes/circle.py::Circle.area": 0.333 };
    expect(await callsOf(PY_SHAPES, "shapes/use.py::total")).toEqual(expected);
    expect(await callsOf(PY_SHAPES, "shapes/base.py::Shape.describe")).toEqual(expected);
  });


  it("a build writes the candidates' confidences to graph.json, and a graph.json read back keeps them", async () => {
    const { g, root } = await builtProject({ ...TS_SHAPES, ...PY_SHAPES });
    const from = (graph: { edges: { source: string; target: string; dispatch?: number }[] }) =>
      Object.fromEntries(graph.edges.filter((e) => e.source === "use.ts::total").map((e) => [e.target, e.dispatch ?? null]));
    const expected = { "shape.ts::Base.area": 0.25, "square.ts::Square.area": 0.25, "circle.ts::Circle.area": 0.25 };
    expect(from(g)).toEqual(expected);
    expect(from(readGraphFile(path.join(root, "codegraph-out/graph.json")))).toEqual(expected);
  });
});
