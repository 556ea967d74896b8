import { describe, expect, it } from "vitest";
import { Extractor } from "../../dist/daemon/index/extract.js";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
import { resolveGraph } from "../../dist/daemon/index/resolve.js";

/** The resolved graph of a few files given inline; `calls(a, b)` says whether a CALLS edge links them. */
async function graphOf(files: Record<string, string>) {
  const x = new Extractor();
  const extracts = await Promise.all(Object.entries(files).map(([p, text]) => x.extract(p, text, languageForPath(p)!)));
  const { nodes, edges } = resolveGraph(extracts);
  const calls = (s: string, t: string) => edges.some((e) => e.source === s && e.target === t && e.type === "calls");
  const callees = (s: string) => edges.filter((e) => e.source === s && e.type === "calls").map((e) => e.target).sort();
  return { nodes, edges, calls, callees };
}

describe("recursion", () => {
  it("a function or method calling itself has a CALLS edge to itself, in TypeScript, Python and Go", async () => {
    const g = await graphOf({
      "a.ts": "export function walk(n: number): number { return n <= 0 ? 0 : walk(n - 1); }\nclass Tree { visit(): void { this.visit(); } }\n",
      "b.py": "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n",
      "c.go": "package c\n\nfunc fib(n int) int {\n\tif n < 2 {\n\t\treturn n\n\t}\n\treturn fib(n-1) + fib(n-2)\n}\n",
    });
    expect(g.calls("a.ts::walk", "a.ts::walk")).toBe(true);
    expect(g.calls("a.ts::Tree.visit", "a.ts::Tree.visit")).toBe(true);
    expect(g.calls("b.py::fact", "b.py::fact")).toBe(true);
    expect(g.calls("c.go::fib", "c.go::fib")).toBe(true);
    // Nothing contains or inherits itself.
    expect(g.edges.filter((e) => e.source === e.target && e.type !== "calls")).toEqual([]);
  });
});

describe("guards against calls matched by name alone", () => {
  it("a call with a receiver never resolves to a top-level function (`[].reduce()`, `xs.reduce()` beside a free `reduce`)", async () => {
    const g = await graphOf({
      "ops.ts": "export function reduce(f: any) { return f; }\n",
      "use.ts": "export function total(xs: any) { return [1, 2].reduce((a, b) => a + b) + xs.reduce(0); }\n",
    });
    expect(g.callees("use.ts::total")).toEqual([]);
  });

  it("a receiver that is a literal, a builtin, or a value of a module outside the project calls nothing of the project", async () => {
    const g = await graphOf({
      "jar.py": "class CookieJar:\n    def items(self):\n        return []\n",
      "use.py": "def headers(raw):\n    d = {}\n    for k, v in d.items():\n        pass\n    return dict(raw).items()\n",
      "emit.ts": "export class Bus { emitLater(): void {} }\n",
      "main.ts": "import { EventEmitter } from \"events\";\nexport function start(): void {\n  const e = new EventEmitter();\n  e.emitLater();\n  Object.keys({}).forEach(String);\n}\n",
    });
    expect(g.callees("use.py::headers")).toEqual([]);
    expect(g.callees("main.ts::start")).toEqual([]);
  });

  it("parameters, locals and nested helpers shadow the project's names for bare calls", async () => {
    const g = await graphOf({
      "timer.ts": "export function delay(ms: number) { return ms; }\nexport function later() { return delay(1); }\n",
      "retry.ts": "export function retry(delay: () => void) {\n  delay();\n}\nexport function again() {\n  const delay = () => 1;\n  return delay();\n}\n",
      "a.py": "def tick():\n    pass\n\ndef run(tick):\n    tick()\n\ndef loop():\n    def tick():\n        pass\n    tick()\n",
    });
    expect(g.calls("timer.ts::later", "timer.ts::delay")).toBe(true);
    expect(g.callees("retry.ts::retry")).toEqual([]);
    expect(g.callees("retry.ts::again")).toEqual([]);
    expect(g.callees("a.py::run")).toEqual([]);
    expect(g.callees("a.py::loop")).toEqual([]);
  });

  it("a project package does not capture the standard library's module of the same name (`import json` beside `flask/json/`)", async () => {
    const g = await graphOf({
      "src/flask/__init__.py": "",
      "src/flask/json/__init__.py": "def dumps(obj):\n    return str(obj)\n",
      "src/flask/app.py": "import json\nfrom flask import json as fjson\n\ndef save(x):\n    return json.dumps(x)\n\ndef send(x):\n    return fjson.dumps(x)\n",
    });
    expect(g.callees("src/flask/app.py::save")).toEqual([]);
    expect(g.calls("src/flask/app.py::send", "src/flask/json/__init__.py::dumps")).toBe(true);
  });
});

describe("inheritance across files", () => {
  it("this.m() and super.m() reach a base class's method in another file; super(…) its constructor", async () => {
    const g = await graphOf({
      "base.ts": "export class Subscription {\n  constructor(teardown?: () => void) {}\n  add(t: any): void {}\n  unsubscribe(): void {}\n}\n",
      "sub.ts": "import { Subscription } from './base';\nexport class Subscriber extends Subscription {\n  constructor() {\n    super();\n  }\n  complete(): void {\n    this.add(1);\n    super.unsubscribe();\n  }\n}\n",
    });
    expect(g.calls("sub.ts::Subscriber.constructor", "base.ts::Subscription.constructor")).toBe(true);
    expect(g.calls("sub.ts::Subscriber.complete", "base.ts::Subscription.add")).toBe(true);
    expect(g.calls("sub.ts::Subscriber.complete", "base.ts::Subscription.unsubscribe")).toBe(true);
  });

  it("Python's super().m() reaches the base's method, not the class's own", async () => {
    const g = await graphOf({
      "pkg/__init__.py": "",
      "pkg/base.py": "class Base:\n    def __init__(self):\n        pass\n\n    def close(self):\n        pass\n",
      "pkg/session.py": "from .base import Base\n\nclass Session(Base):\n    def __init__(self):\n        super().__init__()\n\n    def close(self):\n        super().close()\n",
    });
    expect(g.calls("pkg/session.py::Session.__init__", "pkg/base.py::Base.__init__")).toBe(true);
    expect(g.callees("pkg/session.py::Session.close")).toEqual(["pkg/base.py::Base.close"]);
  });
});

describe("receiver types", () => {
  it("TypeScript: typed parameters of callbacks, new C(), return types, typed fields, this.x = new C()", async () => {
    const g = await graphOf({
      "subscriber.ts": "export class Subscriber<T> {\n  next(v: T): void {}\n  error(e: any): void {}\n}\n",
      "scheduler.ts": "export class Scheduler {\n  schedule(): void {}\n  now(): number { return 0; }\n}\nexport function asap(): Scheduler { return new Scheduler(); }\n",
      "observable.ts": [
        "import { Subscriber } from './subscriber';",
        "import { Scheduler, asap } from './scheduler';",
        "export class Observable<T> {",
        "  private sched: Scheduler;",
        "  constructor(private readonly owner: Scheduler) {",
        "    this.sched = asap();",
        "    this.extra = new Scheduler();",
        "  }",
        "  subscribe(fn: (s: Subscriber<T>) => void): void {",
        "    const run = (subscriber: Subscriber<T>) => subscriber.next(1 as any);",
        "    const s = new Scheduler();",
        "    s.schedule();",
        "    asap().now();",
        "    this.sched.schedule();",
        "    this.owner.now();",
        "  }",
        "}",
      ].join("\n"),
      "other.ts": "export class Queue {\n  next(): void {}\n  schedule(): void {}\n}\n",
    });
    expect(g.callees("observable.ts::Observable.subscribe")).toEqual(["scheduler.ts::Scheduler", "scheduler.ts::Scheduler.now", "scheduler.ts::Scheduler.schedule", "scheduler.ts::asap", "subscriber.ts::Subscriber.next"]);
  });

  it("Python: annotated parameters, C(...) locals, self.x = C() fields and return annotations", async () => {
    const g = await graphOf({
      "req/__init__.py": "",
      "req/models.py": "class PreparedRequest:\n    def prepare(self):\n        pass\n\nclass Request:\n    def prepare(self) -> PreparedRequest:\n        return PreparedRequest()\n",
      "req/sessions.py": [
        "from .models import PreparedRequest, Request",
        "",
        "class Session:",
        "    def __init__(self):",
        "        self.last = PreparedRequest()",
        "",
        "    def send(self, request: PreparedRequest):",
        "        request.prepare()",
        "",
        "    def build(self, req):",
        "        p = Request()",
        "        p.prepare().prepare()",
        "        self.last.prepare()",
      ].join("\n"),
    });
    expect(g.callees("req/sessions.py::Session.send")).toEqual(["req/models.py::PreparedRequest.prepare"]);
    expect(g.callees("req/sessions.py::Session.build")).toEqual(["req/models.py::PreparedRequest.prepare", "req/models.py::Request", "req/models.py::Request.prepare"]);
  });

  it("Go: x := New(), c, _ := Create(w), methods promoted through embedded structs, composite literals, fields", async () => {
    const g = await graphOf({
      "gin.go": "package gin\n\ntype RouterGroup struct{}\n\nfunc (g *RouterGroup) GET(p string) {}\n\ntype Engine struct {\n\tRouterGroup\n\ttrees methodTrees\n}\n\nfunc New() *Engine { return &Engine{} }\n\ntype Context struct{ engine *Engine }\n\nfunc CreateTestContext(w int) (c *Context, r *Engine) { return nil, nil }\n\nfunc (c *Context) Next() {}\n",
      "tree.go": "package gin\n\ntype methodTrees []int\n\nfunc (t methodTrees) get(m string) int { return 0 }\n",
      "render.go": "package gin\n\ntype ProtoBuf struct{ d int }\n\nfunc (p ProtoBuf) Render(w int) error { return nil }\n",
      "other.go": "package gin\n\ntype Other struct{}\n\nfunc (o *Other) GET(p string) {}\nfunc (o *Other) Next() {}\nfunc (o *Other) Render(w int) error { return nil }\n",
      "use_test.go": "package gin\n\nfunc TestAll(w int) {\n\trouter := New()\n\trouter.GET(\"/\")\n\tc, _ := CreateTestContext(w)\n\tc.Next()\n\t(ProtoBuf{1}).Render(w)\n\tc.engine.trees.get(\"x\")\n}\n",
    });
    expect(g.callees("use_test.go::TestAll")).toEqual(["gin.go::Context.Next", "gin.go::CreateTestContext", "gin.go::New", "gin.go::RouterGroup.GET", "render.go::ProtoBuf.Render", "tree.go::methodTrees.get"]);
  });
});

describe("receiver types across files and members patched from elsewhere", () => {
  it("Python: a variable another file binds with a declared type is typed where it is imported; *args and **kwargs are builtins", async () => {
    const g = await graphOf({
      "app.py": "class Flask:\n    def setdefault(self, k):\n        pass\n",
      "globals.py": "from app import Flask\ncurrent_app: Flask = make_proxy()\n",
      "use.py": "from globals import current_app\n\ndef run(*args, **kwargs):\n    kwargs.setdefault('a')\n    args.setdefault()\n    current_app.setdefault('b')\n",
    });
    expect(g.callees("use.py::run")).toEqual(["app.py::Flask.setdefault"]);
  });

  it("a type's own method wins over one a test file patches onto it (`Observable.prototype.subscribe = function`)", async () => {
    const g = await graphOf({
      "observable.ts": "export class Observable {\n  subscribe(): void {}\n}\n",
      "use.ts": "import { Observable } from './observable';\nexport function run(o: Observable) {\n  o.subscribe();\n}\n",
      "patch-spec.ts": "import { Observable } from './observable';\nObservable.prototype.subscribe = function () {};\n",
    });
    expect(g.callees("use.ts::run")).toEqual(["observable.ts::Observable.subscribe"]);
  });
});

describe("contextual types of callbacks", () => {
  it("an untyped callback parameter takes the type the callee declares for it (`operate((source, subscriber) => subscriber.next())`)", async () => {
    const g = await graphOf({
      "subscriber.ts": "export class Subscriber<T> {\n  next(v?: T): void {}\n}\n",
      "observable.ts": "export class Observable<T> {\n  subscribe(): void {}\n}\n",
      "queue.ts": "export class Queue {\n  next(): void {}\n  subscribe(): void {}\n}\n",
      "lift.ts": "import { Observable } from './observable';\nimport { Subscriber } from './subscriber';\nexport function operate<T>(init: (source: Observable<T>, subscriber: Subscriber<T>) => void): void {}\n",
      "take.ts": "import { operate } from './lift';\nexport function take() {\n  return operate((source, subscriber) => {\n    source.subscribe();\n    subscriber.next();\n  });\n}\n",
    });
    expect(g.callees("take.ts::take")).toEqual(["lift.ts::operate", "observable.ts::Observable.subscribe", "subscriber.ts::Subscriber.next"]);
  });
});

describe("classes made through a module", () => {
  it("mod.C(…).m() is C's m, and what m returns types the next call", async () => {
    const g = await graphOf({
      "req/__init__.py": "from .models import Request\n",
      "req/models.py": "class PreparedRequest:\n    def send(self):\n        pass\n\nclass Request:\n    def prepare(self) -> PreparedRequest:\n        pass\n",
      "other.py": "class Other:\n    def prepare(self):\n        pass\n\n    def send(self):\n        pass\n",
      "t.py": "import req\n\ndef test():\n    r = req.Request(1).prepare()\n    r.send()\n",
    });
    expect(g.callees("t.py::test")).toEqual(["req/models.py::PreparedRequest.send", "req/models.py::Request", "req/models.py::Request.prepare"]);
  });
});

describe("contextual types through constructors", () => {
  it("new C((subscriber) => subscriber.next()) types the parameter by C's constructor", async () => {
    const g = await graphOf({
      "subscriber.ts": "export class Subscriber<T> {\n  next(v?: T): void {}\n}\n",
      "queue.ts": "export class Queue {\n  next(): void {}\n}\n",
      "observable.ts": "import { Subscriber } from './subscriber';\nexport class Observable<T> {\n  constructor(subscribe?: (this: Observable<T>, subscriber: Subscriber<T>) => void) {}\n}\n",
      "of.ts": "import { Observable } from './observable';\nexport function of() {\n  return new Observable((subscriber) => {\n    subscriber.next();\n  });\n}\n",
    });
    expect(g.callees("of.ts::of")).toEqual(["observable.ts::Observable", "subscriber.ts::Subscriber.next"]);
  });
});

describe("declared types and decorators (flask)", () => {
  it("Python: a file-level variable's declared type wins over its value from outside the project (`current_app: FlaskProxy = LocalProxy(…)`)", async () => {
    const g = await graphOf({
      "app.py": "class Flask:\n    def ensure_sync(self, f):\n        return f\n",
      "globals.py":
        "import typing as t\nfrom werkzeug.local import LocalProxy\nfrom app import Flask\n\nif t.TYPE_CHECKING:\n    class ProxyMixin(t.Protocol):\n        def _get_current_object(self): ...\n\n    class FlaskProxy(ProxyMixin, Flask): ...\n\ncurrent_app: FlaskProxy = LocalProxy(None, 'app')\n",
      "views.py": "from globals import current_app\n\ndef as_view(f):\n    current_app.ensure_sync(f)\n    return current_app._get_current_object()\n",
    });
    expect(g.callees("views.py::as_view")).toEqual(["app.py::Flask.ensure_sync", "globals.py::ProxyMixin._get_current_object"]);
  });

  it("Python: a decorator's call belongs to the definition it decorates (`@app.route('/')` above `def index`)", async () => {
    const g = await graphOf({
      "app.py": "class Flask:\n    def route(self, rule):\n        return lambda f: f\n",
      "views.py": "from app import Flask\n\napp = Flask()\n\n@app.route('/')\ndef index():\n    return 'hi'\n\nclass V:\n    @app.route('/v')\n    def get(self):\n        pass\n",
    });
    expect(g.callees("views.py::index")).toEqual(["app.py::Flask.route"]);
    expect(g.callees("views.py::V.get")).toEqual(["app.py::Flask.route"]);
  });
});

describe("Go: the module's root package and type assertions (cobra)", () => {
  it("a package importing the module's root package by its module path reaches the root's functions", async () => {
    const g = await graphOf({
      "cobra.go": "package cobra\n\nfunc WriteStringAndCheck(s string) {}\n",
      "doc/man.go": 'package doc\n\nimport (\n\t"strings"\n\n\t"github.com/spf13/cobra"\n)\n\nfunc manPreamble() {\n\tcobra.WriteStringAndCheck(strings.ToUpper("x"))\n}\n',
    });
    expect(g.callees("doc/man.go::manPreamble")).toEqual(["cobra.go::WriteStringAndCheck"]);
  });

  it("c := in.(*Command) types c by the asserted type", async () => {
    const g = await graphOf({
      "command.go": "package cobra\n\ntype Command struct{}\n\nfunc (c *Command) Runnable() bool { return true }\n\ntype Other struct{}\n\nfunc (o *Other) Runnable() bool { return false }\n\nfunc usage(in interface{}) {\n\tc := in.(*Command)\n\tc.Runnable()\n}\n",
    });
    expect(g.callees("command.go::usage")).toEqual(["command.go::Command.Runnable"]);
  });
});

describe("destructured parameters shadow project names (rxjs)", () => {
  it("TypeScript and JavaScript: `run(({ hot, cold: c, e = 1 }) => …)` binds hot, c and e; a bare call of them is not the project's function", async () => {
    for (const ext of ["ts", "js"]) {
      const g = await graphOf({
        [`marbles.${ext}`]: "export function cold() {}\nexport function hot() {}\nexport function e() {}\n",
        [`spec.${ext}`]: `import { cold, hot, e } from './marbles';\nexport function test(s) {\n  s.run(({ hot, cold: c, e = 1 }) => {\n    hot();\n    c();\n    e();\n  });\n  cold();\n}\n`,
      });
      expect(g.callees(`spec.${ext}::test`)).toEqual([`marbles.${ext}::cold`]);
    }
  });
});
