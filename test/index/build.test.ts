import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import type { LocalStore } from "../../dist/daemon/store/local.js";
import { expectCode, makeProject, PY_PROJECT, touchLater } from "../helpers.js";

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function open(files: Record<string, string | Buffer>) {
  const p = makeProject(files);
  const engine = await ProjectEngine.open(p.root, { sideEffects: false });
  cleanups.push(p.cleanup, () => engine.close());
  return { ...p, engine, build: (force = false) => engine.build({ project_path: p.root, force }) };
}

function graph(root: string) {
  return JSON.parse(fs.readFileSync(path.join(root, "codegraph-out/graph.json"), "utf8"));
}
const edge = (g: any, s: string, t: string, type = "calls") => g.edges.some((e: any) => e.source === s && e.target === t && e.type === type);

describe("python graph", () => {
  it("extracts modules, classes, methods and functions with their fields", async () => {
    const p = await open(PY_PROJECT);
    const r = await p.build();
    expect(r.files_indexed).toBe(3);
    expect(r.nodes_processed).toBe(r.node_count);
    expect(r.nodes_embedded).toBe(r.node_count);
    const g = graph(p.root);
    const order = g.nodes.find((n: any) => n.id === "shop/models.py::Order");
    expect(order).toMatchObject({ name: "Order", type: "class", file_path: "shop/models.py", description: "A customer order with line items.", line_start: 15 });
    expect(typeof order.community).toBe("number");
    const total = g.nodes.find((n: any) => n.id === "shop/models.py::Order.total");
    expect(total).toMatchObject({ type: "method", qualified_name: "Order.total", signature: "def total(self)", docstring: "Sum of line prices including tax.", language: "python", parent: "shop/models.py::Order" });
    expect(g.nodes.find((n: any) => n.id === "shop/payments.py")).toMatchObject({ type: "module", description: "Payment processing." });
  });

  it("resolves calls through the same file, imports, module aliases, self and base classes", async () => {
    const p = await open(PY_PROJECT);
    await p.build();
    const g = graph(p.root);
    expect(edge(g, "shop/models.py::Order.total", "shop/models.py::apply_tax")).toBe(true); // same file
    expect(edge(g, "shop/payments.py::charge_card", "shop/payments.py::send_to_gateway")).toBe(true);
    expect(edge(g, "shop/payments.py::refund", "shop/models.py::apply_tax")).toBe(true); // `from . import models`; models.apply_tax
    expect(edge(g, "shop/models.py::Order.checkout", "shop/models.py::Entity.save")).toBe(true); // self → inherited method
    expect(edge(g, "shop/models.py::Entity.save", "shop/models.py::Entity.validate")).toBe(true);
    expect(edge(g, "shop/models.py::Order", "shop/models.py::Entity", "inherits")).toBe(true);
    expect(edge(g, "shop/payments.py", "shop/models.py", "imports")).toBe(true);
    expect(edge(g, "shop/models.py::Order", "shop/models.py::Order.total", "contains")).toBe(true);
    // `order.total()` has an unknown receiver type and `total` is not unique enough to guess: no edge invented.
    expect(g.edges.filter((e: any) => e.source === "shop/payments.py::charge_card" && e.target.endsWith("total")).length).toBeLessThanOrEqual(1);
  });
});

describe("typescript, javascript, go and java graphs", () => {
  it("resolves TS imports (.js specifiers), this-calls, constructors and interfaces", async () => {
    const p = await open({
      "src/store.ts": `export interface Store { get(key: string): string | undefined }\n/** In-memory store. */\nexport class MemoryStore implements Store {\n  private data = new Map<string, string>();\n  get(key: string) { return this.lookup(key); }\n  private lookup(key: string) { return this.data.get(key); }\n}\nexport const makeStore = (): Store => new MemoryStore();\n`,
      "src/app.tsx": `import { makeStore, type Store } from "./store.js";\nexport function App(): JSX.Element { const s: Store = makeStore(); return <div>{s.get("x")}</div>; }\n`,
      "lib/util.js": `function helper(x) { return x * 2 }\nmodule.exports = { double: (x) => helper(x) };\nclass Box { open() { return helper(1) } }\n`,
    });
    await p.build();
    const g = graph(p.root);
    expect(g.nodes.find((n: any) => n.id === "src/store.ts::Store").type).toBe("interface");
    expect(g.nodes.find((n: any) => n.id === "src/store.ts::MemoryStore").description).toBe("In-memory store.");
    expect(edge(g, "src/store.ts::MemoryStore.get", "src/store.ts::MemoryStore.lookup")).toBe(true);
    expect(edge(g, "src/store.ts::makeStore", "src/store.ts::MemoryStore")).toBe(true);
    expect(edge(g, "src/app.tsx::App", "src/store.ts::makeStore")).toBe(true);
    expect(edge(g, "src/app.tsx", "src/store.ts", "imports")).toBe(true);
    expect(edge(g, "src/store.ts::MemoryStore", "src/store.ts::Store", "inherits")).toBe(true);
    expect(edge(g, "lib/util.js::Box.open", "lib/util.js::helper")).toBe(true);
  });

  it("resolves TS imports through tsconfig paths and baseUrl (with comments, trailing commas and extends)", async () => {
    const p = await open({
      "tsconfig.base.json": `{\n  // shared settings\n  "compilerOptions": {\n    "baseUrl": ".",\n    "paths": { "@/*": ["src/*"], "~shared": ["packages/shared/index.ts"], },\n  },\n}\n`,
      "tsconfig.json": `{ "extends": "./tsconfig.base.json", "compilerOptions": { "strict": true } }\n`,
      "src/lib/format.ts": `export function formatPrice(cents: number): string { return (cents / 100).toFixed(2); }\n`,
      "src/legacy/format.ts": `export function formatPrice(cents: number): string { return String(cents); }\n`,
      "packages/shared/index.ts": `export function shout(s: string): string { return s.toUpperCase(); }\n`,
      "src/app/page.tsx": `import { formatPrice } from "@/lib/format";\nimport { shout } from "~shared";\nimport { formatPrice as old } from "src/legacy/format";\nexport function Page() { return shout(formatPrice(5)) + old(1); }\n`,
    });
    await p.build();
    const g = graph(p.root);
    // formatPrice is defined twice: only the alias says which one is meant.
    expect(edge(g, "src/app/page.tsx::Page", "src/lib/format.ts::formatPrice")).toBe(true);
    expect(edge(g, "src/app/page.tsx::Page", "packages/shared/index.ts::shout")).toBe(true);
    expect(edge(g, "src/app/page.tsx::Page", "src/legacy/format.ts::formatPrice")).toBe(true); // baseUrl
    for (const target of ["src/lib/format.ts", "packages/shared/index.ts", "src/legacy/format.ts"]) expect(edge(g, "src/app/page.tsx", target, "imports")).toBe(true);

    // The aliases change, no source file does: the next build resolves by the new ones.
    p.write("tsconfig.base.json", `{ "compilerOptions": { "baseUrl": ".", "paths": { "@/lib/*": ["src/legacy/*"], "~shared": ["packages/shared/index.ts"] } } }\n`);
    await p.build();
    const after = graph(p.root);
    expect(edge(after, "src/app/page.tsx", "src/legacy/format.ts", "imports")).toBe(true);
    expect(edge(after, "src/app/page.tsx", "src/lib/format.ts", "imports")).toBe(false);
  });

  it("in a monorepo each package's files resolve aliases by the package's own tsconfig", async () => {
    const p = await open({
      "packages/web/tsconfig.json": `{ "compilerOptions": { "paths": { "@/*": ["./src/*"] } } }\n`,
      "packages/web/src/util.ts": `export function slug(s: string): string { return s.toLowerCase(); }\n`,
      "packages/web/src/page.ts": `import { slug } from "@/util";\nexport function render(t: string): string { return slug(t); }\n`,
      "packages/api/tsconfig.json": `{ "compilerOptions": { "baseUrl": "lib", "paths": { "@/*": ["*"] } } }\n`,
      "packages/api/lib/util.ts": `export function slug(s: string): string { return s.trim(); }\n`,
      "packages/api/lib/route.ts": `import { slug } from "@/util";\nexport function handle(t: string): string { return slug(t); }\n`,
    });
    await p.build();
    const g = graph(p.root);
    expect(edge(g, "packages/web/src/page.ts::render", "packages/web/src/util.ts::slug")).toBe(true);
    expect(edge(g, "packages/api/lib/route.ts::handle", "packages/api/lib/util.ts::slug")).toBe(true);
    expect(edge(g, "packages/web/src/page.ts::render", "packages/api/lib/util.ts::slug")).toBe(false);
  });

  it("resolves Rust impl methods, trait impls, Type::new, self-calls and used functions", async () => {
    const p = await open({
      "src/main.rs": `mod net;\nmod store;\n\nuse crate::store::Store;\nuse net::client::connect;\n\n/// Entry point.\nfn main() {\n    let mut s = Store::new();\n    s.put("k", "v");\n    let c = connect("localhost");\n    helper(&c);\n}\n\nfn helper(c: &net::client::Conn) -> usize {\n    c.len()\n}\n`,
      "src/store.rs": `use std::collections::HashMap;\n\n/// A key-value store in memory.\npub struct Store {\n    data: HashMap<String, String>,\n}\n\nimpl Store {\n    /// An empty store.\n    pub fn new() -> Self {\n        Store { data: HashMap::new() }\n    }\n\n    pub fn put(&mut self, k: &str, v: &str) {\n        self.check(k);\n        self.data.insert(k.to_string(), v.to_string());\n    }\n\n    fn check(&self, k: &str) {\n        assert!(!k.is_empty());\n    }\n}\n\npub trait Named {\n    fn name(&self) -> String;\n}\n\nimpl Named for Store {\n    fn name(&self) -> String { "store".into() }\n}\n`,
      "src/net/mod.rs": `pub mod client;\n`,
      "src/net/client.rs": `/// A connection to a host.\npub struct Conn { host: String }\n\n/// Opens a connection.\npub fn connect(host: &str) -> Conn {\n    Conn { host: host.to_string() }\n}\n`,
      // A second \`connect\`: only the \`use\` says which one main calls.
      "src/db.rs": `use super::net::client::Conn;\n\npub fn connect(url: &str) -> Option<Conn> { None }\n`,
    });
    await p.build();
    const g = graph(p.root);
    expect(g.nodes.find((n: any) => n.id === "src/store.rs::Store")).toMatchObject({ type: "struct", description: "A key-value store in memory." });
    expect(g.nodes.find((n: any) => n.id === "src/store.rs::Store.new")).toMatchObject({ type: "method", parent: "src/store.rs::Store", description: "An empty store." });
    expect(g.nodes.find((n: any) => n.id === "src/store.rs::Named").type).toBe("interface");
    expect(edge(g, "src/store.rs::Store", "src/store.rs::Named", "inherits")).toBe(true);
    expect(edge(g, "src/main.rs::main", "src/store.rs::Store.new")).toBe(true);
    expect(edge(g, "src/main.rs::main", "src/net/client.rs::connect")).toBe(true);
    expect(edge(g, "src/main.rs::main", "src/main.rs::helper")).toBe(true);
    expect(edge(g, "src/store.rs::Store.put", "src/store.rs::Store.check")).toBe(true);
    // use crate::…, a bare path from the crate root, super::…; std:: is no file of the project.
    expect(edge(g, "src/main.rs", "src/store.rs", "imports")).toBe(true);
    expect(edge(g, "src/main.rs", "src/net/client.rs", "imports")).toBe(true);
    expect(edge(g, "src/db.rs", "src/net/client.rs", "imports")).toBe(true);
    expect(g.edges.filter((e: any) => e.source === "src/store.rs" && e.type === "imports")).toEqual([]);
    expect(edge(g, "src/main.rs::main", "src/db.rs::connect")).toBe(false);
    expect((await p.engine.search({ project_path: p.root, query: "key value store in memory" })).results[0].id).toBe("src/store.rs::Store");
  });

  it("resolves Go calls across files of a package, receivers and imported packages", async () => {
    const p = await open({
      "go.mod": "module example.com/m\n",
      "server/server.go": `package server\n\nimport "example.com/m/util"\n\n// Server answers requests.\ntype Server struct{ addr string }\n\nfunc (s *Server) Start() error { s.listen(); return util.Retry(3) }\n`,
      "server/listen.go": `package server\n\nfunc (s *Server) listen() { logStart(s.addr) }\n\nfunc logStart(a string) {}\n`,
      "util/retry.go": `package util\n\n// Retry runs f up to n times.\nfunc Retry(n int) error { return nil }\n`,
    });
    await p.build();
    const g = graph(p.root);
    expect(g.nodes.find((n: any) => n.id === "server/server.go::Server")).toMatchObject({ type: "struct", description: "Server answers requests." });
    expect(edge(g, "server/server.go::Server.Start", "server/listen.go::Server.listen")).toBe(true); // receiver, other file
    expect(edge(g, "server/listen.go::Server.listen", "server/listen.go::logStart")).toBe(true);
    expect(edge(g, "server/server.go::Server.Start", "util/retry.go::Retry")).toBe(true); // imported package
    expect(edge(g, "server/server.go::Server", "server/listen.go::Server.listen", "contains")).toBe(true);
  });
  it("resolves Java imports of a class and a package, static calls, constructors and this-calls", async () => {
    const p = await open({
      "src/main/java/com/example/util/Strings.java": `package com.example.util;\n\n/** Text helpers. */\npublic class Strings {\n  /** Pads a value on the left. */\n  public static String pad(String s, int n) { return s; }\n}\n`,
      "src/main/java/com/example/util/Clock.java": `package com.example.util;\n\npublic class Clock {\n  public long now() { return 0; }\n}\n`,
      "src/main/java/com/example/app/App.java": `package com.example.app;\n\nimport com.example.util.Strings;\nimport com.example.util.*;\n\n/** The application. */\npublic class App extends Base {\n  public String run() { Clock c = new Clock(); return Strings.pad(label(), 3); }\n  String label() { return this.name(); }\n}\n`,
      "src/main/java/com/example/app/Base.java": `package com.example.app;\n\npublic class Base {\n  String name() { return "app"; }\n}\n`,
      // A directory whose name merely ends like the package is not the package.
      "src/main/java/com/example/myutil/Strings.java": `package com.example.myutil;\n\npublic class Strings {\n  public static String pad(String s, int n) { return s; }\n}\n`,
    });
    await p.build();
    const g = graph(p.root);
    const app = "src/main/java/com/example/app/App.java";
    const util = "src/main/java/com/example/util";
    expect(edge(g, `${app}::App.run`, `${util}/Strings.java::Strings.pad`)).toBe(true); // imported class, static call
    expect(edge(g, `${app}::App.run`, `${util}/Clock.java::Clock`)).toBe(true); // wildcard import, constructor
    expect(edge(g, `${app}::App.run`, `${app}::App.label`)).toBe(true);
    expect(edge(g, `${app}::App.label`, "src/main/java/com/example/app/Base.java::Base.name")).toBe(true); // this → inherited method
    expect(edge(g, `${app}::App`, "src/main/java/com/example/app/Base.java::Base", "inherits")).toBe(true); // same package
    expect(edge(g, app, `${util}/Strings.java`, "imports")).toBe(true);
    expect(g.edges.some((e: any) => e.source === app && e.target.includes("/myutil/"))).toBe(false);
  });
});

describe("communities", () => {
  it("groups connected code across files, names them by directory and symbols", async () => {
    const files: Record<string, string> = {};
    for (const area of ["billing", "search"]) {
      for (let i = 0; i < 4; i++) {
        // Each module calls the next two of its area: a cohesive area spread over four files.
        const others = [1, 2].map((d) => (i + d) % 4);
        const imports = others.map((j) => `from ${area}.m${j} import ${area}_f${j}\n`).join("");
        const calls = others.map((j) => `${area}_f${j}()`).join(" + ");
        files[`${area}/m${i}.py`] = `${imports}\ndef ${area}_f${i}():\n    """${area} step ${i}."""\n    return ${calls}\n\ndef ${area}_g${i}():\n    return ${area}_f${i}() + ${area}_f${others[0]}()\n`;
      }
    }
    const p = await open(files);
    const r = await p.build();
    const g = graph(p.root);
    const comm = (id: string) => g.nodes.find((n: any) => n.id === id).community;
    expect(comm("billing/m0.py::billing_f0")).toBe(comm("billing/m3.py::billing_f3"));
    expect(comm("billing/m0.py::billing_f0")).not.toBe(comm("search/m0.py::search_f0"));
    expect(r.communities).toBeLessThan(8); // not one per file
    const c = g.communities.find((x: any) => x.id === comm("billing/m1.py::billing_f1"));
    expect(c.name).toMatch(/^billing/);
    expect(c.description).toMatch(/symbols in 4 files under billing\//);
  });
});

describe("what gets indexed", () => {
  it("honours .gitignore, exclude_patterns, default dirs, size, binary, generated and minified files", async () => {
    const p = await open({
      ".gitignore": "ignored.py\nsecret_dir/\n",
      "codemem.toml": '[build]\nexclude_patterns = ["fixtures", "*.gen.ts", "docs/**"]\nmax_file_bytes = 4096\n',
      "keep.py": "def kept():\n    return 1\n",
      "ignored.py": "def no(): pass\n",
      "secret_dir/a.py": "def no2(): pass\n",
      "fixtures/data.py": "def no3(): pass\n",
      "api.gen.ts": "export function no4() {}\n",
      "docs/conf.py": "def no5(): pass\n",
      "node_modules/lib/index.js": "function no6() {}\n",
      "dist/bundle.js": "function no7() {}\n",
      "package.json": "{}",
      "big.py": "x = 1\n".repeat(2000),
      "blob.py": Buffer.from([0x64, 0x65, 0x66, 0x00, 0x01, 0x02]),
      "gen_pb.go": "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\nfunc No8() {}\n",
      "app.min.js": "function a(){return 1}".repeat(10),
      "wide.js": `var x = "${"a".repeat(3000)}";\n`,
    });
    const r = await p.build();
    const g = graph(p.root);
    expect([...new Set(g.nodes.map((n: any) => n.file_path))]).toEqual(["keep.py"]);
    const reason = (f: string) => r.skipped.find((s: any) => s.path === f)?.reason;
    expect(reason("ignored.py")).toBe("gitignored");
    expect(reason("fixtures/data.py")).toBeUndefined(); // excluded directories are not even walked
    expect(reason("api.gen.ts")).toBe("excluded");
    expect(reason("big.py")).toBe("too_large");
    expect(reason("blob.py")).toBe("binary");
    expect(reason("gen_pb.go")).toBe("generated");
    expect(reason("app.min.js")).toBe("minified");
    expect(reason("wide.js")).toBe("minified");
  });
});

describe("build output directories", () => {
  it("are told by content: source in a root build/ or bin/ is indexed, output is left out and listed with its reason", async () => {
    const p = await open({
      "tsconfig.json": "{}\n",
      "src/cli.ts": "export function main(): number {\n  return runBuild();\n}\nexport function runBuild(): number {\n  return 1;\n}\n",
      // luarocks keeps its Lua build backends in build/: source, no sign of a build.
      "build/builtin.lua": "local builtin = {}\n\nfunction builtin.run(rockspec)\n  return compile_modules(rockspec)\nend\n\nfunction compile_modules(spec)\n  return spec\nend\n\nreturn builtin\n",
      "bin/release": "#!/bin/sh\nrelease_tag() {\n  git tag \"$1\"\n}\nrelease_tag \"$@\"\n",
      // CMake's build tree, Maven's classes, tsc's emitted JavaScript, a tree with no source at all.
      "out/CMakeCache.txt": "CMAKE_BUILD_TYPE:STRING=Release\n",
      "out/generated/config.c": "int config_version(void) { return 3; }\n",
      "target/classes/App.class": Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52]),
      "target/generated-sources/App.java": "class App { void run() {} }\n",
      "dist/cli.js": "function main() { return runBuild(); }\n",
      "obj/notes.txt": "scratch\n",
    });
    const r = await p.build();
    const files = new Set(graph(p.root).nodes.map((n: any) => n.file_path));
    expect([...files].sort()).toEqual(["bin/release", "build/builtin.lua", "src/cli.ts"]);
    const outputs = r.skipped.filter((s: any) => s.reason === "build_output");
    expect(outputs).toEqual([
      { path: "dist", reason: "build_output", detail: "build artifact cli.js" },
      { path: "obj", reason: "build_output", detail: "no source files" },
      { path: "out", reason: "build_output", detail: "build marker CMakeCache.txt" },
      { path: "target", reason: "build_output", detail: "build artifact classes/App.class" },
    ]);
    // A marker added later turns the directory into output at the next build.
    p.write("build/CMakeCache.txt", "CMAKE_BUILD_TYPE:STRING=Debug\n");
    const again = await p.build();
    expect(again.skipped.find((s: any) => s.path === "build")).toMatchObject({ reason: "build_output", detail: "build marker CMakeCache.txt" });
    expect(new Set(graph(p.root).nodes.map((n: any) => n.file_path)).has("build/builtin.lua")).toBe(false);
  });
});

describe("incremental builds", () => {
  it("re-parses only changed files and removes deleted and renamed ones everywhere", async () => {
    const p = await open(PY_PROJECT);
    const first = await p.build();
    const search = async (q: string) => (await p.engine.search({ project_path: p.root, query: q, limit: 50 })).results.map((x) => x.id);

    // Unchanged: nothing parsed, nothing embedded.
    const again = await p.build();
    expect(again).toMatchObject({ files_changed: 0, nodes_processed: 0, nodes_embedded: 0, node_count: first.node_count });

    // Edit one file: only its nodes are rewritten; only new or changed nodes are embedded.
    p.write("shop/payments.py", PY_PROJECT["shop/payments.py"] + "\n\ndef issue_voucher(order):\n    \"\"\"Give the customer a discount voucher.\"\"\"\n    return refund(order)\n");
    touchLater(path.join(p.root, "shop/payments.py"));
    const edited = await p.build();
    expect(edited.files_changed).toBe(1);
    expect(edited.nodes_processed).toBe(5); // module + 4 functions of payments.py
    expect(edited.nodes_embedded).toBeLessThanOrEqual(2); // the new function and its module
    expect(await search("discount voucher")).toContain("shop/payments.py::issue_voucher");

    // Rename: old path disappears from graph, lexical and vector indexes; new path appears.
    fs.renameSync(path.join(p.root, "shop/payments.py"), path.join(p.root, "shop/billing.py"));
    const renamed = await p.build();
    expect(renamed.files_removed).toBe(1);
    const ids = await search("voucher charge card gateway refund");
    expect(ids.some((id) => id.startsWith("shop/payments.py"))).toBe(false);
    expect(ids).toContain("shop/billing.py::issue_voucher");

    // Delete: gone from the graph file, the FTS index and the vector table.
    p.remove("shop/billing.py");
    const deleted = await p.build();
    expect(deleted.files_removed).toBe(1);
    const g = graph(p.root);
    expect(g.nodes.some((n: any) => n.file_path === "shop/billing.py")).toBe(false);
    expect(await search("voucher")).not.toContain("shop/billing.py::issue_voucher");
    const st = await p.engine.stats({ project_path: p.root });
    expect(st.node_count).toBe(g.nodes.length);
    const store = (await p.engine.retriever()).store as LocalStore;
    const count = (t: string) => (store.db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
    expect(count("vec_nodes")).toBe(g.nodes.length);
    expect(count("nodes")).toBe(g.nodes.length);
  });

  it("graph.json after re-indexed edits is the text a cold re-index writes", async () => {
    const files = {
      "go.mod": "module example.com/m\n",
      "server/server.go": `package server\n\n// Server answers requests.\ntype Server struct{ addr string }\n\nfunc (s *Server) Start() error { s.listen(); return nil }\n`,
      "server/listen.go": `package server\n\nfunc (s *Server) listen() { logStart(s.addr) }\n\nfunc logStart(a string) {}\n`,
      ...PY_PROJECT,
    };
    const warm = await open(files);
    const cold = await open(files);
    const text = (root: string) => fs.readFileSync(path.join(root, "codegraph-out/graph.json"), "utf8").replace(/"built_at":"[^"]*"/, "");
    const edits: ((p: typeof warm) => void)[] = [
      (p) => p.write("shop/payments.py", `${PY_PROJECT["shop/payments.py"]}\n\ndef issue_voucher(order):\n    """Give the customer a voucher."""\n    return refund(order)\n`),
      // The type moves to another file: listen.go is untouched, but its method's parent changes.
      (p) => {
        p.write("server/server.go", `package server\n\nfunc (s *Server) Start() error { s.listen(); return nil }\n`);
        p.write("server/types.go", `package server\n\n// Server answers requests.\ntype Server struct{ addr string }\n`);
      },
      (p) => p.remove("shop/models.py"),
    ];
    await warm.build();
    await cold.build();
    for (const edit of edits) {
      for (const p of [warm, cold]) {
        edit(p);
        for (const f of ["shop/payments.py", "server/server.go", "server/types.go"]) if (fs.existsSync(path.join(p.root, f))) touchLater(path.join(p.root, f));
      }
      await warm.build();
      // The cold side re-opens its engine: no warm build cache.
      const fresh = await ProjectEngine.open(cold.root, { sideEffects: false });
      await fresh.build({ project_path: cold.root });
      await fresh.close();
      expect(text(warm.root)).toBe(text(cold.root));
    }
    expect(graph(warm.root).nodes.find((n: any) => n.id === "server/listen.go::Server.listen").parent).toBe("server/types.go::Server");
    // Written from per-file pieces, the file is still exactly what JSON.stringify gives for the graph.
    const raw = fs.readFileSync(path.join(warm.root, "codegraph-out/graph.json"), "utf8");
    expect(JSON.stringify(JSON.parse(raw))).toBe(raw);
  });

  it("a build with nothing changed rewrites nothing; a missing graph.json or a touched file is still handled", async () => {
    const p = await open(PY_PROJECT);
    const first = await p.build();
    const graphFile = path.join(p.root, "codegraph-out/graph.json");
    const builtAt = async () => (await p.engine.retriever()).meta.built_at;
    const stamp = await builtAt();
    const before = fs.statSync(graphFile).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));

    const again = await p.build();
    expect(again).toMatchObject({ files_changed: 0, files_removed: 0, nodes_processed: 0, changed_paths: [], node_count: first.node_count, edge_count: first.edge_count, communities: first.communities, files_indexed: 3 });
    expect(fs.statSync(graphFile).mtimeMs).toBe(before);
    expect(await builtAt()).toBe(stamp);

    // graph.json deleted by hand: the next build writes it again.
    fs.rmSync(graphFile);
    await p.build();
    expect(graph(p.root).nodes.length).toBe(first.node_count);

    // graph.json older than the index (a daemon stopped before its deferred write): rewritten too.
    const older = fs.readFileSync(graphFile, "utf8");
    p.write("shop/models.py", PY_PROJECT["shop/models.py"] + "\n\ndef audit_order(order):\n    return order\n");
    touchLater(path.join(p.root, "shop/models.py"));
    await p.build();
    fs.writeFileSync(graphFile, older);
    await p.build();
    expect(graph(p.root).nodes.some((n: any) => n.id === "shop/models.py::audit_order")).toBe(true);
    expect(graph(p.root).built_at).toBe(await builtAt());

    // Touched but identical: not re-parsed, and answers stop calling it pending.
    touchLater(path.join(p.root, "shop/models.py"));
    p.engine.markChanged();
    expect((await p.engine.query({ project_path: p.root, question: "order total" })).freshness).toMatchObject({ stale: true, pending_files: ["shop/models.py"] });
    const touched = await p.build();
    expect(touched).toMatchObject({ files_changed: 0, nodes_processed: 0 });
    expect((await p.engine.query({ project_path: p.root, question: "order total" })).freshness).toMatchObject({ stale: false, pending_count: 0 });
  });

  it("an empty file is indexed as a module without definitions, not re-read and called pending on every answer", async () => {
    const p = await open({ ...PY_PROJECT, "shop/__init__.py": "", "shop/util/__init__.py": "" });
    const first = await p.build();
    expect(first.files_indexed).toBe(4);
    expect(graph(p.root).nodes.find((n: any) => n.id === "shop/util/__init__.py")).toMatchObject({ type: "module" });
    expect((await p.engine.query({ project_path: p.root, question: "order total" })).freshness).toMatchObject({ stale: false, pending_count: 0 });
    expect(await p.build()).toMatchObject({ files_changed: 0, changed_paths: [] });
  });

  it("a file that kills a parser worker fails alone, is not parsed again until it changes, and leaves answers up to date", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`pkg/ok_${i}.py`] = `def helper_${i}(order):\n    """Look up customer ${i}."""\n    return order\n`;
    // 150,000 one-line functions (2.9 MB, under a raised size limit): more extract than a parser worker's heap holds.
    files["codemem.toml"] = "[build]\nmax_file_bytes = 4000000\n";
    files["pkg/generated.py"] = Array.from({ length: 150_000 }, (_, i) => `def f${i}(): g(a)`).join("\n") + "\n";
    const p = await open(files);
    const first = await p.build();
    expect(first.files_indexed).toBe(30);
    expect(first.files_removed).toBe(0);
    expect(first.skipped).toEqual([{ path: "pkg/generated.py", reason: "unreadable", detail: expect.stringMatching(/^parse failed: needs more memory than a parser worker has/) }]);
    expect((await p.engine.query({ project_path: p.root, question: "look up customer" })).freshness).toMatchObject({ stale: false, pending_count: 0 });

    const again = await p.build();
    expect(again).toMatchObject({ files_changed: 0, changed_paths: [], skipped: [{ path: "pkg/generated.py", reason: "unreadable", detail: expect.stringContaining("unchanged since") }] });

    p.write("pkg/generated.py", "def regenerated():\n    return 1\n");
    touchLater(path.join(p.root, "pkg/generated.py"));
    const fixed = await p.build();
    expect(fixed).toMatchObject({ files_indexed: 31, files_skipped: 0 });
  });

  it("files of 300 and 1,200 nested classes are indexed to 100 levels and listed as too_deep, in the pool and on the main thread", async () => {
    // Comment lines keep the average line short: the files are no 'minified' ones.
    const nested = (n: number) => Array.from({ length: n }, (_, i) => `${" ".repeat(i)}class Level${i}:\n#\n#\n#`).join("\n") + `\n${" ".repeat(n)}pass\n`;
    for (const extra of [0, 30]) {
      const files: Record<string, string> = { "deep/n300.py": nested(300), "deep/n1200.py": nested(1200), "deep/shallow.py": nested(3) };
      for (let i = 0; i < extra; i++) files[`pkg/ok_${i}.py`] = `def helper_${i}(order):\n    return order\n`;
      const p = await open(files);
      const r = await p.build();
      expect(r.files_indexed, `${extra} more files`).toBe(3 + extra);
      const deep = { reason: "too_deep", detail: expect.stringContaining("100") };
      expect(r.skipped, `${extra} more files`).toEqual([{ path: "deep/n1200.py", ...deep }, { path: "deep/n300.py", ...deep }]);
      const classes = (f: string) => graph(p.root).nodes.filter((n: any) => n.file_path === f && n.type === "class");
      // The outer 100 (past ~690 levels tree-sitter's Python scanner itself loses the outer ones: the 100 it recovers are kept).
      expect(classes("deep/n300.py").map((n: any) => n.name)).toEqual(Array.from({ length: 100 }, (_, i) => `Level${i}`));
      expect(classes("deep/n1200.py")).toHaveLength(100);
      expect(classes("deep/shallow.py")).toHaveLength(3);
    }
  });

  it("force rebuilds everything", async () => {
    const p = await open(PY_PROJECT);
    const first = await p.build();
    const forced = await p.build(true);
    expect(forced.files_changed).toBe(3);
    expect(forced.nodes_embedded).toBe(first.node_count);
  });

  it("ranks exactly as a fresh index after rebuilds and re-indexed edits", async () => {
    // The second question names code (`refund`, Order.total), so the patched name index counts too.
    const ranking = async (p: Awaited<ReturnType<typeof open>>) => {
      const out: string[] = [];
      for (const query of ["charge the card for an order total with tax", "How does `refund` use Order.total and helper_3()?"]) {
        out.push(...(await p.engine.search({ project_path: p.root, query, limit: 20 })).results.map((x) => `${x.id} ${x.score}`));
      }
      return out;
    };
    // Enough files that editing one is a small build: the warm reader is patched, not reloaded.
    const files: Record<string, string> = { ...PY_PROJECT };
    for (let i = 0; i < 12; i++) files[`shop/extra_${i}.py`] = `"""Extra module ${i}."""\n\n\ndef helper_${i}(order):\n    """Look up the order's customer ${i}."""\n    return order\n`;
    const fresh = await open(files);
    await fresh.build();
    const expected = await ranking(fresh);
    const p = await open(files);
    await p.build();
    // A warm reader is patched in place by the builds below (catalog, vectors, term statistics).
    await ranking(p);
    // Re-indexing deletes rows; their share of the BM25 statistics must go with them.
    await p.build(true);
    await p.build(true);
    await ranking(p);
    p.write("shop/payments.py", PY_PROJECT["shop/payments.py"] + "\n# edited\n");
    touchLater(path.join(p.root, "shop/payments.py"));
    await p.build();
    await ranking(p);
    p.write("shop/payments.py", PY_PROJECT["shop/payments.py"]);
    touchLater(path.join(p.root, "shop/payments.py"));
    await p.build();
    expect(await ranking(p)).toEqual(expected);
    // The query's term weights follow too (fusion by rank would hide small drifts in them).
    const [w, fw] = [(await p.engine.retriever()).termWeight(), (await fresh.engine.retriever()).termWeight()];
    for (const word of ["charge", "card", "gateway", "refund", "order", "tax", "entity", "payment"]) expect(w(word), word).toBe(fw(word));
  });

  it("ranks exactly as a fresh index after a large file is deleted and others are added to a warm reader", async () => {
    const files: Record<string, string> = { ...PY_PROJECT };
    for (let i = 0; i < 12; i++) files[`shop/extra_${i}.py`] = `"""Extra module ${i}."""\n\n\ndef helper_${i}(order):\n    """Look up the order's customer ${i}."""\n    return order\n`;
    files["shop/generated.py"] = Array.from({ length: 1100 }, (_, i) => `def card_rule_${i}(order):\n    """Card rule ${i} for the order total."""\n    return ${i}\n`).join("\n\n");
    const p = await open(files);
    await p.build();
    const ranking = async (e: ProjectEngine) => (await e.search({ project_path: p.root, query: "charge the card for an order total", limit: 30 })).results.map((x) => `${x.id} ${x.score}`);
    await ranking(p.engine); // warm: later builds patch this reader
    const compare = async () => {
      const fresh = await ProjectEngine.open(p.root, { sideEffects: false });
      try {
        expect(await ranking(p.engine)).toEqual(await ranking(fresh));
      } finally {
        await fresh.close();
      }
    };
    p.remove("shop/generated.py");
    await p.build();
    await compare();
    for (const [name, n] of [["shop/late_a.py", 40], ["shop/late_b.py", 3]] as const) {
      p.write(name, Array.from({ length: n }, (_, i) => `def charge_rule_${name.slice(-4, -3)}_${i}(order):\n    """Charge the card, rule ${i}."""\n    return ${i}\n`).join("\n\n"));
      await p.build();
      await compare();
    }
  });

  it("an index of an older schema is refused for answers and rebuilt by a plain build", async () => {
    const p = await open(PY_PROJECT);
    const first = await p.build();
    await p.engine.close();
    const file = path.join(p.root, "codegraph-out/codemem_db/index.db");
    const db = new Database(file);
    db.prepare("UPDATE meta SET value = '1' WHERE key = 'schema_version'").run();
    db.close();
    const engine = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(() => engine.close());
    await expectCode(engine.search({ project_path: p.root, query: "charge card" }), "INDEX_CORRUPT");
    const rebuilt = await engine.build({ project_path: p.root });
    expect(rebuilt.node_count).toBe(first.node_count);
    expect((await engine.search({ project_path: p.root, query: "charge card" })).results[0].id).toBe("shop/payments.py::charge_card");
  });
});

describe("bad input keeps the index intact", () => {
  it("rejects relative and missing project paths", async () => {
    await expectCode(ProjectEngine.open("relative/project"), "PATH_RELATIVE");
    await expectCode(ProjectEngine.open("/definitely/not/here"), "PATH_NOT_FOUND");
  });

  it("refuses the file system's root and the home directory as a project (an index of the whole machine)", async () => {
    await expectCode(ProjectEngine.open("/"), "PATH_NOT_PROJECT");
    await expectCode(ProjectEngine.open(os.homedir()), "PATH_NOT_PROJECT");
    await expectCode(ProjectEngine.open(path.join(os.homedir(), ".")), "PATH_NOT_PROJECT");
  });

  it("a broken codemem.toml fails with CONFIG_INVALID", async () => {
    const p = makeProject({ "a.py": "def a(): pass\n", "codemem.toml": "[build\nexclude_patterns = 3" });
    cleanups.push(p.cleanup);
    await expectCode(ProjectEngine.open(p.root), "CONFIG_INVALID");
    fs.writeFileSync(path.join(p.root, "codemem.toml"), '[build]\nexclude_patterns = "docs"\n');
    await expectCode(ProjectEngine.open(p.root), "CONFIG_INVALID");
  });

  it("an edit of codemem.toml applies to the next build of a running engine; a broken one fails the build and keeps the index", async () => {
    const p = await open({ ...PY_PROJECT, "extras/lib.py": "def extra():\n    return 1\n" });
    expect((await p.build()).files_indexed).toBe(4);
    const toml = path.join(p.root, "codemem.toml");
    fs.writeFileSync(toml, '[build]\nexclude_patterns = ["extras/"]\n');
    const excluded = await p.build();
    expect(excluded).toMatchObject({ files_indexed: 3, files_removed: 1 });

    fs.writeFileSync(toml, "[build\nexclude_patterns = [");
    await expectCode(p.build(), "CONFIG_INVALID");
    // Answers go on from the index and the last good settings.
    const s = await p.engine.search({ project_path: p.root, query: "charge card" });
    expect(s.results[0].id).toBe("shop/payments.py::charge_card");
    expect((await p.engine.stats({ project_path: p.root })).file_count).toBe(3);

    fs.writeFileSync(toml, "[build]\nexclude_patterns = []\n");
    expect((await p.build()).files_indexed).toBe(4);
  });

  it("uses the external generator's graph when codegraph is installed; a malformed or missing graph keeps the previous index", async () => {
    const p = await open(PY_PROJECT);
    const before = await p.build();
    const bin = path.join(p.root, ".fakebin");
    fs.mkdirSync(bin);
    const gen = path.join(bin, "codegraph");
    const oldPath = process.env.PATH;
    cleanups.push(() => void (process.env.PATH = oldPath));
    process.env.PATH = `${bin}:${oldPath}`;

    // A generator producing a graph in its own format (only the spec's fields).
    const external = {
      nodes: [
        { id: "n1", name: "charge_card", type: "function", file_path: "shop/payments.py", description: "Charges cards", community: 0 },
        { id: "n2", name: "send_to_gateway", type: "function", file_path: "shop/payments.py", description: "Talks to the gateway", community: 0 },
        { id: "n3", name: "Order", type: "class", file_path: "shop/models.py", description: "Orders", community: 1 },
      ],
      edges: [{ source: "n1", target: "n2", type: "calls" }],
      communities: [{ id: 0, name: "payments", description: "Payment flow" }, { id: 1, name: "models", description: "Domain" }],
    };
    fs.writeFileSync(gen, `#!/bin/sh\nmkdir -p "$2/codegraph-out"\ncat > "$2/codegraph-out/graph.json" <<'JSON'\n${JSON.stringify(external)}\nJSON\n`, { mode: 0o755 });
    const ext = await (await ProjectEngine.open(p.root, { sideEffects: false })).build({ project_path: p.root });
    expect(ext.graph_source).toBe("external");
    expect(ext.node_count).toBe(3);
    const e2 = await ProjectEngine.open(p.root, { sideEffects: false });
    cleanups.push(() => e2.close());
    const hit = (await e2.search({ project_path: p.root, query: "gateway", limit: 3 })).results[0];
    expect(hit).toMatchObject({ id: "n2", file_path: "shop/payments.py", line_start: 15 }); // line found by our own parse

    fs.writeFileSync(gen, `#!/bin/sh\nmkdir -p "$2/codegraph-out"\necho '{"nodes": [{"id": 1}]' > "$2/codegraph-out/graph.json"\n`, { mode: 0o755 });
    await expectCode(e2.build({ project_path: p.root, force: true }), "GRAPH_MALFORMED");
    fs.writeFileSync(gen, `#!/bin/sh\nrm -f "$2/codegraph-out/graph.json"\n`, { mode: 0o755 });
    await expectCode(e2.build({ project_path: p.root, force: true }), "GRAPH_MISSING");
    fs.writeFileSync(gen, `#!/bin/sh\necho "boom" >&2\nexit 3\n`, { mode: 0o755 });
    await expectCode(e2.build({ project_path: p.root }), "GENERATOR_FAILED");
    e2.invalidate();
    expect((await e2.stats({ project_path: p.root })).node_count).toBe(3); // the last good index survives
    expect(before.node_count).toBeGreaterThan(3);
  });
});
