import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Extractor } from "../../daemon/index/extract.js";
import { languageForPath } from "../../daemon/index/languages/registry.js";
import { GraphResolver, resolveGraph, type NodeRecord } from "../../daemon/index/resolve.js";
import type { FileExtract, GraphEdge } from "../../daemon/index/types.js";
import { seededRandom } from "../../shared/random.js";
import { GO_SHAPES, PY_SHAPES, TS_SHAPES } from "../fixtures/dispatch-shapes.js";

const repo = path.resolve(__dirname, "../..");

/** Real trees: a slice of Go's standard library (committed), Python's (on the machine), this repository's TypeScript, the C, C++, JavaScript and Ruby fixtures. */
const TREES = [
  { name: "go", root: path.join(repo, "test/fixtures/trees/go"), dirs: [""] },
  { name: "python", root: "/usr/lib/python3.11", dirs: ["email", "json", "http", "logging", "importlib", "concurrent", "urllib", "collections"] },
  { name: "typescript", root: repo, dirs: ["daemon", "shared", "client", "hooks"] },
  // C and C++ (includes, out-of-class methods joining a class of an included header) beside express's
  // JavaScript, Mustermann's Ruby (require, modules nesting classes, inherited methods), PSR-3's PHP (use, namespaces, traits) Json.NET's C# (using, namespaces, overloads) and gesture-handler's Kotlin (packages, objects, companions, extension functions) and Capacitor camera's Swift (module imports, extensions) and flutter-skill's Dart (relative imports, bodies beside signatures) and std.json's Zig (relative @imports, files as structs) and ExUnit's Elixir (aliases, imports, clauses) and xml's Haskell (module imports, instances) and vision-camera's Kotlin beside Java (one family: imports, calls and file classes across the two).
  { name: "c, c++, javascript, ruby, php, c#, kotlin, swift, scala, lua, dart, shell, zig, elixir, haskell, kotlin with java", root: path.join(repo, "test/fixtures/trees"), dirs: ["c-argon2", "cpp-bcrypt", "cpp-node-tree-sitter", "js-express", "ruby-mustermann", "php-psr-log", "csharp-newtonsoft-bson", "kotlin-gesture-handler", "swift-capacitor-camera", "scala-sys-process", "lua-penlight", "dart-flutter-skill", "bash-bats", "zig-std-json", "elixir-exunit", "haskell-xml", "jvm-vision-camera"] },
];

function sources(root: string, dirs: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (e.name !== "__pycache__" && e.name !== "static") walk(p);
      } else if (languageForPath(p) && !p.endsWith(".d.ts")) out.set(p, fs.readFileSync(path.join(root, p), "utf8"));
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

const nodeKey = (n: NodeRecord) => JSON.stringify([n.id, n.type, n.parent ?? null, n.qualified_name, n.line_start, n.line_end]);
const edgeKey = (e: GraphEdge) => `${e.source}\u0000${e.type}\u0000${e.target}\u0000${e.dispatch ?? ""}`;

describe.each(TREES)("incremental resolution on $name", ({ root, dirs }) => {
  it("equals a from-scratch resolution after random edits, adds, renames and deletes", async () => {
    const extractor = new Extractor();
    const extract = (p: string, text: string) => extractor.extract(p, text, languageForPath(p)!);
    const files = sources(root, dirs);
    expect(files.size).toBeGreaterThan(20);
    const extracts = new Map<string, FileExtract>();
    for (const [p, text] of files) extracts.set(p, await extract(p, text));

    const resolver = new GraphResolver();
    const first = resolver.update([...extracts.values()], []);
    // What a store sees: the first build's nodes and edges, then each update's delta applied to them.
    const nodes = new Map(first.nodes.map((n) => [n.id, n]));
    const edges = new Map(first.edgesAdded.map((e) => [edgeKey(e), e]));
    const rnd = seededRandom(7);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const removed = new Map<string, string>();
    let reresolved = 0;

    for (let step = 0; step < 40; step++) {
      const changed = new Map<string, string>();
      const gone = new Set<string>();
      for (let op = 0; op < 1 + Math.floor(rnd() * 3); op++) {
        const paths = [...files.keys()].filter((p) => !gone.has(p));
        const p = pick(paths);
        const text = files.get(p)!;
        const defs = extracts.get(p)?.defs.filter((d) => d.parent < 0) ?? [];
        const lines = text.split("\n");
        const kind = pick(["remove-def", "rename-def", "copy-def", "rebase", "retype", "delete", "add", "move", "touch"]);
        if (kind === "remove-def" && defs.length) {
          const d = pick(defs);
          changed.set(p, [...lines.slice(0, d.lineStart - 1), ...lines.slice(d.lineEnd)].join("\n"));
        } else if (kind === "rename-def" && defs.length) {
          const d = pick(defs);
          lines[d.lineStart - 1] = lines[d.lineStart - 1].replace(d.name, `${d.name}Renamed`);
          changed.set(p, lines.join("\n"));
        } else if (kind === "copy-def" && defs.length) {
          // A definition copied into another file of the language: names stop being unique, calls move.
          const d = pick(defs);
          const others = paths.filter((q) => q !== p && path.extname(q) === path.extname(p));
          const q = pick(others);
          // (No other file of that language left: nothing to copy into.)
          if (q !== undefined) changed.set(q, `${changed.get(q) ?? files.get(q)!}\n\n${lines.slice(d.lineStart - 1, d.lineEnd).join("\n")}\n`);
        } else if (kind === "rebase") {
          // A class now inherits another class (or its base's methods go away): calls through it move.
          const all = [...extracts.values()].filter((e) => path.extname(e.path) === path.extname(p));
          const sub = pick(all.flatMap((e) => e.defs.filter((d) => d.bases.length).map((d) => ({ e, d }))).concat([{ e: undefined as never, d: undefined as never }]));
          const classes = all.flatMap((e) => e.defs.filter((d) => d.kind === "class" && d.parent < 0).map((d) => d.name));
          if (sub?.d && classes.length) {
            const q = sub.e.path;
            const qLines = (changed.get(q) ?? files.get(q)!).split("\n");
            const i = sub.d.lineStart - 1;
            if (qLines[i]?.includes(sub.d.bases[0])) {
              qLines[i] = qLines[i].replace(sub.d.bases[0], pick(classes));
              changed.set(q, qLines.join("\n"));
            }
          }
        } else if (kind === "retype") {
          // A function now returns another type (or a type's field changes type): calls on its results move.
          const typed = defs.filter((d) => d.returnType && d.returnType !== "[]");
          const classes = [...extracts.values()].filter((e) => path.extname(e.path) === path.extname(p)).flatMap((e) => e.defs.filter((d) => d.kind === "class" || d.kind === "struct").map((d) => d.name));
          if (typed.length && classes.length) {
            const d = pick(typed);
            const rt = d.returnType!.split(".").pop()!;
            const at = lines.findIndex((l, i) => i >= d.lineStart - 1 && i < d.lineEnd && l.includes(rt));
            if (at >= 0) {
              lines[at] = lines[at].replace(rt, pick(classes));
              changed.set(p, lines.join("\n"));
            }
          }
        } else if (kind === "delete") {
          gone.add(p);
          removed.set(p, text);
        } else if (kind === "add" && removed.size) {
          const [q, body] = pick([...removed]);
          removed.delete(q);
          if (!files.has(q)) changed.set(q, body);
        } else if (kind === "move") {
          // To another directory of the tree, under a new name: packages and module paths change.
          const dir = path.posix.dirname(pick(paths));
          const q = `${dir === "." ? "" : `${dir}/`}moved_${step}${path.extname(p)}`;
          gone.add(p);
          changed.set(q, text);
        } else changed.set(p, text);
      }
      for (const p of gone) {
        changed.delete(p);
        files.delete(p);
        extracts.delete(p);
      }
      const fresh: FileExtract[] = [];
      for (const [p, text] of changed) {
        files.set(p, text);
        const ex = await extract(p, text);
        extracts.set(p, ex);
        fresh.push(ex);
      }
      const delta = resolver.update(fresh, [...gone]);
      reresolved += delta.resolvedFiles;

      for (const [id, n] of nodes) if (gone.has(n.file_path) || changed.has(n.file_path)) nodes.delete(id);
      for (const n of delta.nodes) nodes.set(n.id, n);
      for (const [id, parent] of delta.parentUpdates) nodes.set(id, { ...nodes.get(id)!, parent });
      for (const e of delta.edgesRemoved) expect(edges.delete(edgeKey(e))).toBe(true);
      for (const e of delta.edgesAdded) edges.set(edgeKey(e), e);

      const full = resolveGraph([...extracts.values()]);
      expect(new Set([...nodes.values()].map(nodeKey))).toEqual(new Set(full.nodes.map(nodeKey)));
      const fullEdges = new Set(full.edges.map(edgeKey));
      expect(new Set(edges.keys())).toEqual(fullEdges);
      expect(new Set(resolver.edges().map(edgeKey))).toEqual(fullEdges);
      expect(resolver.edgeCount).toBe(full.edges.length);
      expect(resolver.nodeCount).toBe(full.nodes.length);
    }
    // Proportional to the change: far fewer files resolved than 24 full resolutions would.
    expect(reresolved).toBeLessThan(files.size * 40 * 0.5);
  }, 120_000);
});

describe("incremental resolution of typed receivers", () => {
  it("re-resolves the callers a type's file answers: return types, fields, aliases and bases changing", async () => {
    const extractor = new Extractor();
    const files = new Map<string, string>([
      ["models.ts", "export class Job { run(): void {} }\nexport class Task { run(): void {} }\nexport class Plan { job: Job; step(): void {} }\n"],
      ["factory.ts", "import { Job, Plan } from './models';\nexport function make(): Job { return new Job(); }\nexport function plan(): Plan { return new Plan(); }\n"],
      ["use.ts", "import { make, plan } from './factory';\nexport function main() {\n  make().run();\n  plan().job.run();\n  plan().step();\n}\n"],
      ["app.py", "from models import Job\n\ndef make() -> Job:\n    return Job()\n"],
      ["models.py", "class Job:\n    def run(self):\n        pass\n\nclass Task:\n    def run(self):\n        pass\n"],
      ["main.py", "from app import make\n\ndef main():\n    make().run()\n"],
    ]);
    const steps: [string, string][] = [
      ["factory.ts", "import { Task, Plan } from './models';\nexport function make(): Task { return new Task(); }\nexport function plan(): Plan { return new Plan(); }\n"],
      ["models.ts", "export class Job { run(): void {} }\nexport class Task { run(): void {} }\nexport class Plan { job: Task; step(): void {} }\n"],
      ["models.ts", "export class Job { run(): void {} }\nexport class Task { go(): void {} }\nexport class Base { step(): void {} }\nexport class Plan extends Base { job: Job; }\n"],
      ["app.py", "from models import Task as Job\n\ndef make() -> Job:\n    return Job()\n"],
      ["models.py", "class Job:\n    def run(self):\n        pass\n\nclass Task(Job):\n    pass\n"],
    ];
    const extract = (p: string) => extractor.extract(p, files.get(p)!, languageForPath(p)!);
    const resolver = new GraphResolver();
    resolver.update(await Promise.all([...files.keys()].map(extract)), []);
    const calls = () => new Set(resolver.edges().filter((e) => e.type === "calls").map(edgeKey));
    const before = calls();
    expect(before).toContain(edgeKey({ source: "use.ts::main", target: "models.ts::Job.run", type: "calls" }));
    expect(before).toContain(edgeKey({ source: "main.py::main", target: "models.py::Job.run", type: "calls" }));
    for (const [p, text] of steps) {
      files.set(p, text);
      resolver.update([await extract(p)], []);
      const full = resolveGraph(await Promise.all([...files.keys()].map(extract)));
      expect(calls()).toEqual(new Set(full.edges.filter((e) => e.type === "calls").map(edgeKey)));
    }
    // The last steps moved the calls: make() is a Task, whose run is Job's by inheritance; Plan's step is Base's.
    const after = calls();
    expect(after).toContain(edgeKey({ source: "use.ts::main", target: "models.ts::Base.step", type: "calls" }));
    expect(after).toContain(edgeKey({ source: "main.py::main", target: "models.py::Job.run", type: "calls" }));
    expect(after).not.toContain(edgeKey({ source: "use.ts::main", target: "models.ts::Task.run", type: "calls" }));
  });
});

describe("incremental resolution of dispatch candidates", () => {
  it("equals a from-scratch resolution as implementers and overrides are added, changed and removed (TS, Go, Python)", async () => {
    const extractor = new Extractor();
    const files = new Map<string, string>(Object.entries({ ...TS_SHAPES, ...GO_SHAPES, ...PY_SHAPES }));
    const extract = (p: string) => extractor.extract(p, files.get(p)!, languageForPath(p)!);
    /** Edits as [path, text | undefined (removed)], applied one by one. */
    const steps: [string, string | undefined][] = [
      ["circle.ts", undefined],
      ["square.ts", 'import { Base } from "./shape";\nexport class Square extends Base {\n  area(): number { return 4; }\n}\nexport class Tiny extends Square {\n  area(): number { return 1; }\n}\n'],
      ["circle.ts", TS_SHAPES["circle.ts"]],
      ["shape.ts", "export interface Shape { area(): number; }\nexport abstract class Base {\n  area(): number { return 0; }\n}\n"],
      ["shape/line.go", "package shape\n\ntype Line struct{}\n\nfunc (l Line) Area() int { return 0 }\n\nfunc (l Line) Scale(f int, g int) Shape { return l }\n"],
      ["shape/square.go", undefined],
      ["shape/square.go", GO_SHAPES["shape/square.go"]],
      ["shapes/circle.py", undefined],
      ["shapes/square.py", "from .base import Shape\n\nclass Square(Shape):\n    def side(self):\n        return 2\n"],
      ["shapes/circle.py", PY_SHAPES["shapes/circle.py"]],
    ];
    const resolver = new GraphResolver();
    resolver.update(await Promise.all([...files.keys()].map(extract)), []);
    const edges = new Map(resolver.edges().map((e) => [edgeKey(e), e]));
    const marked = new Set<string>();
    for (const [p, text] of steps) {
      let delta;
      if (text === undefined) {
        files.delete(p);
        delta = resolver.update([], [p]);
      } else {
        files.set(p, text);
        delta = resolver.update([await extract(p)], []);
      }
      for (const e of delta.edgesRemoved) expect(edges.delete(edgeKey(e))).toBe(true);
      for (const e of delta.edgesAdded) edges.set(edgeKey(e), e);
      const full = resolveGraph(await Promise.all([...files.keys()].map(extract)));
      const fullKeys = new Set(full.edges.map(edgeKey));
      expect(new Set(resolver.edges().map(edgeKey))).toEqual(fullKeys);
      expect(new Set(edges.keys())).toEqual(fullKeys);
      for (const e of full.edges) if (e.dispatch) marked.add(`${e.target}@${e.dispatch}`);
    }
    // The steps did move the candidates: Tiny's override and Line (its arity now matching) were candidates at some point.
    expect([...marked].some((k) => k.startsWith("square.ts::Tiny.area@"))).toBe(true);
    expect([...marked].some((k) => k.startsWith("shape/line.go::Line.Area@"))).toBe(true);
  });
});
