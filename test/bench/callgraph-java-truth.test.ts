import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { javaTruth } from "../../scripts/callgraph/java-truth.mjs";

const FILES: Record<string, string> = {
  "src/p/Shape.java": "package p;\npublic interface Shape {\n  double area();\n}\n",
  "src/p/Util.java": "package p;\npublic class Util {\n  static double twice(double x) { return 2 * x; }\n  static double halve(double x) { return x / 2; }\n}\n",
  "src/p/Square.java": [
    "package p;",
    "import static p.Util.twice;",
    "import org.missing.Lib;",
    "public class Square implements Shape {",
    "  final double s;",
    "  public Square(double s) { this.s = s; }",
    "  public Square() { this(1); }",
    "  public double area() { return twice(half()) * s; }",
    "  double half() { return Util.halve(s); }",
    "  static double total(Shape a, Square b) {",
    "    Runnable r = new Runnable() { public void run() { b.half(); } };",
    "    Lib.go();",
    "    return a.area() + b.area() + new Square(2).area() + Math.abs(-1);",
    "  }",
    "}",
    "",
  ].join("\n"),
  "src/p/Big.java": "package p;\npublic class Big extends Square {\n  @Override public double area() { return super.area() * 2; }\n}\n",
  "src/p/java11/Dup.java": "package p;\npublic class Dup {}\n",
  "src/p/Dup.java": "package p;\npublic class Dup {}\n",
};

type Def = { file: string; name: string; line: number; nameLine: number; kind: string; cls?: string };
type Site = { caller: number; name: string; kind: string; line: number; status: string; target?: number };

const hasJavac = spawnSync("javac", ["-version"]).status === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!hasJavac)("bench:callgraph's Java truth (javac)", () => {
  it("resolves each call with javac: project, dispatch, outside, unknown, and the kinds", () => {
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), "java-truth-"));
    dirs.push(tree);
    for (const [f, text] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(tree, f)), { recursive: true });
      fs.writeFileSync(path.join(tree, f), text);
    }
    const t = javaTruth(tree) as { defs: Def[]; sites: Site[]; coverage: Record<string, unknown> };
    const site = (caller: string, name: string) => {
      const s = t.sites.find((x) => t.defs[x.caller].name === caller && x.name === name);
      if (!s) throw new Error(`no site ${caller} -> ${name}`);
      return { kind: s.kind, status: s.status, target: s.target === undefined ? undefined : `${t.defs[s.target].file}:${t.defs[s.target].line} ${t.defs[s.target].name}` };
    };
    expect(site("area", "twice")).toEqual({ kind: "imported", status: "project", target: "src/p/Util.java:3 twice" });
    expect(site("area", "half")).toEqual({ kind: "plain", status: "project", target: "src/p/Square.java:9 half" });
    expect(site("half", "halve")).toEqual({ kind: "imported", status: "project", target: "src/p/Util.java:4 halve" });
    expect(site("Square", "Square")).toEqual({ kind: "constructor", status: "project", target: "src/p/Square.java:6 Square" });
    // The anonymous class's method is no def: its call counts for total.
    expect(site("total", "half")).toEqual({ kind: "method", status: "project", target: "src/p/Square.java:9 half" });
    expect(t.defs.some((d) => d.name === "run")).toBe(false);
    expect(site("total", "go")).toMatchObject({ status: "unknown" });
    expect(site("total", "area")).toMatchObject({ kind: "method", status: "dispatch" });
    expect(t.sites.filter((s) => t.defs[s.caller].name === "total" && s.name === "area").map((s) => s.status).sort()).toEqual(["dispatch", "project", "project"]);
    expect(site("total", "abs")).toMatchObject({ kind: "imported", status: "outside" });
    expect(site("total", "Runnable")).toMatchObject({ kind: "constructor", status: "outside" });
    // super.area() is the static target Square.area, which Big overrides.
    expect(site("area", "area")).toEqual({ kind: "constructor", status: "project", target: "src/p/Square.java:8 area" });
    expect(t.defs.find((d) => d.name === "Square" && d.line === 6)).toMatchObject({ kind: "constructor", cls: "Square" });
    expect(t.defs.some((d) => d.file.includes("java11"))).toBe(false);
    expect(t.coverage).toMatchObject({ files: 5, imports_not_found: ["org.missing"] });
    expect(t.coverage.static_target_overridden).toBeGreaterThanOrEqual(3);
  });
});
