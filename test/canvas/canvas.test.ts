import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import WebSocket from "ws";
import { startCanvas } from "../../dist/daemon/canvas/server.js";
import { appendEvent } from "../../dist/shared/events.js";
import { SynapseStore } from "../../dist/daemon/synapse/store.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const eventsModule = pathToFileURL(path.join(repo, "dist/shared/events.js")).href;
const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = path.join(repo, "test-artifacts");

/** Twelve nodes in three communities, as graph.json has them. */
function smallGraph() {
  const c = (community: number, file: string, name: string, type = "function") => ({
    id: `${file}::${name}`,
    name,
    type,
    file_path: file,
    description: `${type} ${name} in ${file}`,
    community,
    qualified_name: name,
    line_start: 1,
  });
  const nodes = [
    c(0, "app/auth.py", "login"),
    c(0, "app/auth.py", "logout"),
    c(0, "app/auth.py", "hash_password"),
    c(0, "app/tokens.py", "TokenStore", "class"),
    c(1, "app/db.py", "Session", "class"),
    c(1, "app/db.py", "commit", "method"),
    c(1, "app/db.py", "rollback", "method"),
    c(1, "app/models.py", "User", "class"),
    c(2, "app/api.py", "create_app"),
    c(2, "app/api.py", "get_user"),
    c(2, "app/api.py", "post_login"),
    c(2, "app/routes.py", "register_routes"),
  ];
  const e = (a: string, b: string, type = "calls") => ({ source: a, target: b, type });
  const edges = [
    e("app/auth.py::login", "app/auth.py::hash_password"),
    e("app/auth.py::login", "app/tokens.py::TokenStore"),
    e("app/auth.py::logout", "app/tokens.py::TokenStore"),
    e("app/db.py::Session", "app/db.py::commit", "contains"),
    e("app/db.py::Session", "app/db.py::rollback", "contains"),
    e("app/models.py::User", "app/db.py::Session"),
    e("app/api.py::create_app", "app/routes.py::register_routes"),
    e("app/routes.py::register_routes", "app/api.py::get_user"),
    e("app/routes.py::register_routes", "app/api.py::post_login"),
    e("app/api.py::post_login", "app/auth.py::login"),
    e("app/api.py::get_user", "app/models.py::User"),
    e("app/auth.py::login", "app/db.py::commit"),
  ];
  const communities = [
    { id: 0, name: "auth · login, TokenStore", description: "", size: 4 },
    { id: 1, name: "db · Session, User", description: "", size: 4 },
    { id: 2, name: "api · create_app, routes", description: "", size: 4 },
  ];
  return { nodes, edges, communities };
}

function tempProject(graph: unknown): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-canvas-")));
  fs.mkdirSync(path.join(root, "codegraph-out"), { recursive: true });
  fs.writeFileSync(path.join(root, "codegraph-out", "graph.json"), JSON.stringify(graph));
  return root;
}

/** Appends an event from a separate Node process, as an MCP shim or CLI would. */
function appendFromAnotherProcess(root: string, event: Record<string, unknown>): Promise<number> {
  const script = `import(${JSON.stringify(eventsModule)}).then((m) => { m.appendEvent(process.argv[1], JSON.parse(process.argv[2])); process.stdout.write(String(process.pid)); })`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script, root, JSON.stringify(event)], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, CODEMEM_EVENT_LOG: "1" } });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`event writer exited with ${code}`))));
  });
}

const pulsed = (page: Page, id: string, timeout = 5000) =>
  page.waitForFunction((nodeId) => (window as any).__codemem.pulses.some((p: { id: string }) => p.id === nodeId), id, { timeout });

describe("live canvas in headless Chromium", () => {
  let root: string;
  let canvas: Awaited<ReturnType<typeof startCanvas>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) {
      throw new Error(`Debian's chromium is missing at ${CHROMIUM}: install it with "apt-get install -y chromium" (CI installs it); the canvas test needs a real browser.`);
    }
    root = tempProject(smallGraph());
    canvas = await startCanvas(root, { port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("pageerror", (err) => pageErrors.push(String(err)));
    page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
    await page.goto(canvas.url);
    await page.waitForFunction(() => (window as any).__codemem?.ready === true, undefined, { timeout: 20_000 });
  });

  afterAll(async () => {
    await browser?.close();
    await canvas?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it("draws every node, colours communities and lists them in the legend", async () => {
    const st = await page.evaluate(() => {
      const s = (window as any).__codemem;
      return { nodeCount: s.nodeCount, legend: [...document.querySelectorAll("#legend li .name")].map((e) => e.textContent) };
    });
    expect(st.nodeCount).toBe(12);
    expect(st.legend).toEqual(["auth · login, TokenStore", "db · Session, User", "api · create_app, routes"]);
    expect(pageErrors).toEqual([]);
  });

  it("pulses the node named by a tool call made in another process", async () => {
    const id = "app/db.py::Session";
    const pid = await appendFromAnotherProcess(root, { source: "cli", kind: "tool_call", tool: "codemem_query", nodes: [id] });
    expect(pid).not.toBe(process.pid);
    await pulsed(page, id);
    const last = await page.evaluate(() => (window as any).__codemem.lastEvent);
    expect(last).toMatchObject({ pid, source: "cli", kind: "tool_call", tool: "codemem_query", nodes: [id] });
    // Taken mid-pulse (after the 250 ms grow transition), so the artifact shows what a user sees.
    await page.waitForTimeout(400);
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, "canvas.png") });
    expect(fs.statSync(path.join(ARTIFACTS, "canvas.png")).size).toBeGreaterThan(10_000);
  });

  it("pulses every node of a file named by an event", async () => {
    await appendFromAnotherProcess(root, { source: "watch", kind: "watch_batch", files: ["app/api.py"] });
    await pulsed(page, "app/api.py::create_app");
    await pulsed(page, "app/api.py::get_user");
    await pulsed(page, "app/api.py::post_login");
  });

  it("lights a search's results, not every node of their files, and shows its question in the activity log", async () => {
    const since = await page.evaluate(() => Date.now());
    const question = "how are users fetched by the api and which routes register them";
    await appendFromAnotherProcess(root, {
      source: "mcp",
      kind: "tool_call",
      tool: "codemem_search",
      text: question,
      nodes: ["app/api.py::create_app"],
      files: ["app/api.py", "app/routes.py"],
    });
    await pulsed(page, "app/api.py::create_app");
    await pulsed(page, "app/routes.py::register_routes"); // a file none of whose nodes is named lights its nodes
    const lit = await page.evaluate((t) => (window as any).__codemem.pulses.filter((p: { at: number }) => p.at >= t).map((p: { id: string }) => p.id), since);
    expect(lit).not.toContain("app/api.py::get_user");
    expect(lit).not.toContain("app/api.py::post_login");
    const line = await page.evaluate(() => {
      const li = document.querySelector("#activity li")!;
      return { text: li.textContent, clamp: getComputedStyle(li).whiteSpace };
    });
    expect(line.text).toContain(question);
    expect(line.clamp).not.toBe("nowrap");
  });

  it("draws the same graph in the same place at every load", async () => {
    const positions = () => page.evaluate(() => (window as any).__codemem.cy.nodes().map((n: any) => [n.id(), Math.round(n.position("x")), Math.round(n.position("y"))]).sort());
    const before = await positions();
    await page.reload();
    await page.waitForFunction(() => (window as any).__codemem?.ready === true, undefined, { timeout: 20_000 });
    expect(await positions()).toEqual(before);
  });

  it("shows the serving process's own events with CODEMEM_EVENT_LOG=0 (in-process bus)", async () => {
    const before = process.env.CODEMEM_EVENT_LOG;
    process.env.CODEMEM_EVENT_LOG = "0";
    try {
      const id = "app/auth.py::hash_password";
      const event = appendEvent(root, { source: "serve", kind: "tool_call", tool: "codemem_search", nodes: [id] });
      await pulsed(page, id);
      const file = path.join(root, ".codemem", "events.jsonl");
      const lines = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      expect(lines).not.toContain(event.ts); // it really never reached the file
    } finally {
      if (before === undefined) delete process.env.CODEMEM_EVENT_LOG;
      else process.env.CODEMEM_EVENT_LOG = before;
    }
  });

  it("delivers an event that arrives by both the bus and the file tail once", async () => {
    const before = await page.evaluate(() => (window as any).__codemem.events);
    const prev = process.env.CODEMEM_EVENT_LOG;
    process.env.CODEMEM_EVENT_LOG = "1";
    try {
      appendEvent(root, { source: "serve", kind: "tool_call", tool: "codemem_dedupe", nodes: ["app/auth.py::logout"] });
    } finally {
      if (prev === undefined) delete process.env.CODEMEM_EVENT_LOG;
      else process.env.CODEMEM_EVENT_LOG = prev;
    }
    expect(fs.readFileSync(path.join(root, ".codemem", "events.jsonl"), "utf8")).toContain("codemem_dedupe");
    await pulsed(page, "app/auth.py::logout");
    await new Promise((r) => setTimeout(r, 1000)); // several tail polls (200 ms)
    const after = await page.evaluate(() => (window as any).__codemem.events);
    expect(after - before).toBe(1);
  });

  it("draws learned links over the graph: session synapses dashed, git co-change dotted, refreshed by a history event", async () => {
    const store = SynapseStore.open(path.join(root, ".codemem/synapses.db"));
    store.reinforce(["app/auth.py::login", "app/db.py::Session"], { source: "tool:query" });
    // History speaks of files: a file stands for its first displayed node.
    store.learnHistory([{ sha: "c1", at: Date.now(), files: 2, ids: ["app/routes.py", "app/models.py"] }], { maxFiles: 30 });
    store.close();
    await appendFromAnotherProcess(root, { source: "daemon", kind: "history", commits: 1, learned: 1 });
    await page.waitForFunction(() => (window as any).__codemem.learned.cochange === 1, undefined, { timeout: 5000 });
    const drawn = await page.evaluate(() => {
      const cy = (window as any).__codemem.cy;
      const one = (type: string) => {
        const e = cy.edges(`[type = '${type}']`)[0];
        return { ends: [e.source().id(), e.target().id()].sort(), line: e.style("line-style") };
      };
      return { synapse: one("synapse"), cochange: one("cochange") };
    });
    expect(drawn.synapse).toEqual({ ends: ["app/auth.py::login", "app/db.py::Session"], line: "dashed" });
    expect(drawn.cochange).toEqual({ ends: ["app/models.py::User", "app/routes.py::register_routes"], line: "dotted" });
    expect(pageErrors).toEqual([]);
  });

  it("refetches the graph when a build event arrives", async () => {
    const g = smallGraph();
    g.nodes.push({ ...g.nodes[0]!, id: "app/auth.py::reset_password", name: "reset_password" });
    fs.writeFileSync(path.join(root, "codegraph-out", "graph.json"), JSON.stringify(g));
    await appendFromAnotherProcess(root, { source: "daemon", kind: "build" });
    await page.waitForFunction(() => (window as any).__codemem.nodeCount === 13, undefined, { timeout: 5000 });
  });
});

describe("canvas server", () => {
  it("summarises a big graph into community super-nodes and top nodes, and maps hidden nodes to them", async () => {
    const nodes = Array.from({ length: 5000 }, (_, i) => ({ id: `n${i}`, name: `f${i}`, type: "function", file_path: `src/m${i % 50}.ts`, community: i % 5 }));
    // A star per community: hubs n0..n4 get high degree.
    const edges = nodes.slice(5).map((n, i) => ({ source: n.id, target: `n${i % 5}`, type: "calls" }));
    const communities = [0, 1, 2, 3, 4].map((id) => ({ id, name: `c${id}`, size: 1000 }));
    const root = tempProject({ nodes, edges, communities });
    const canvas = await startCanvas(root, { port: 0 });
    try {
      const view = (await (await fetch(new URL("/graph", canvas.url))).json()) as {
        summarised: boolean;
        totalNodes: number;
        nodes: { id: string; type: string }[];
        edges: unknown[];
      };
      expect(view.summarised).toBe(true);
      expect(view.totalNodes).toBe(5000);
      expect(view.nodes.length).toBeLessThanOrEqual(900);
      expect(view.nodes.filter((n) => n.type === "community").map((n) => n.id).sort()).toEqual([0, 1, 2, 3, 4].map((c) => `community:${c}`));
      expect(view.nodes.map((n) => n.id)).toContain("n0");

      const ws = new WebSocket(new URL("/events", canvas.url.replace("http", "ws")));
      const got = new Promise<{ targets: string[] }>((resolve) =>
        ws.on("message", (d) => {
          const msg = JSON.parse(String(d));
          if (msg.type === "event") resolve(msg);
        }),
      );
      await new Promise((r) => ws.once("open", r));
      const hidden = view.nodes.some((n) => n.id === "n4999") ? "n4998" : "n4999";
      appendEvent(root, { source: "cli", kind: "tool_call", nodes: ["n0", hidden] });
      const msg = await got;
      ws.close();
      expect(msg.targets.sort()).toEqual(["community:4", "n0"].sort());
    } finally {
      await canvas.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("answers GRAPH_MISSING without a graph and refuses foreign Host headers", async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-canvas-")));
    const canvas = await startCanvas(root, { port: 0 });
    try {
      const res = await fetch(new URL("/graph", canvas.url));
      expect(res.status).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe("GRAPH_MISSING");
      const lib = await fetch(new URL("/lib/cytoscape.min.js", canvas.url));
      expect(lib.status).toBe(200);
      const port = new URL(canvas.url).port;
      const rebinding = await new Promise<number>((resolve, reject) => {
        import("node:http").then(({ default: http }) =>
          http.get({ host: "127.0.0.1", port, path: "/graph", headers: { host: `evil.example:${port}` } }, (r) => resolve(r.statusCode ?? 0)).on("error", reject),
        );
      });
      expect(rebinding).toBe(403);
    } finally {
      await canvas.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("canvas on every interface (serve --host 0.0.0.0)", () => {
  /** One GET with the given Host header, at the canvas's real port: the status. */
  const getWithHost = (port: string, host: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      import("node:http").then(({ default: http }) =>
        http
          .get({ host: "127.0.0.1", port, path: "/graph", headers: { host } }, (r) => {
            let body = "";
            r.on("data", (d) => (body += d));
            r.on("end", () => resolve({ status: r.statusCode ?? 0, body }));
          })
          .on("error", reject),
      );
    });
  /** A WebSocket upgrade with the given Host and Origin: "open", or the HTTP status it was refused with. */
  const upgrade = (port: string, host: string, origin?: string) =>
    new Promise<string | number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/events`, { headers: { host }, ...(origin ? { origin } : {}) });
      ws.once("open", () => {
        ws.close();
        resolve("open");
      });
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("error", () => resolve(-1));
    });

  it("answers only its own names and refuses another site's WebSocket (DNS rebinding)", async () => {
    const root = tempProject(smallGraph());
    // Old code: bound beyond loopback, every Host was served and a page of evil.example could open /events.
    const canvas = await startCanvas(root, { port: 0, host: "0.0.0.0", allowHosts: ["canvas.internal"] });
    try {
      const port = new URL(canvas.url).port;
      const lan = Object.values(os.networkInterfaces()).flat().find((a) => a && a.family === "IPv4" && !a.internal)?.address;
      for (const own of [`127.0.0.1:${port}`, `localhost:${port}`, `canvas.internal:${port}`, ...(lan ? [`${lan}:${port}`] : [])]) {
        expect((await getWithHost(port, own)).status, own).toBe(200);
      }
      const foreign = await getWithHost(port, `evil.example:${port}`);
      expect(foreign.status).toBe(403);
      expect(JSON.parse(foreign.body).code).toBe("FORBIDDEN_HOST");

      expect(await upgrade(port, `127.0.0.1:${port}`)).toBe("open"); // no Origin: not a browser
      expect(await upgrade(port, `127.0.0.1:${port}`, `http://127.0.0.1:${port}`)).toBe("open");
      // A rebinding page: its own name in both Host and Origin.
      expect(await upgrade(port, `evil.example:${port}`, `http://evil.example:${port}`)).toBe(403);
      // Another site's page reaching the right name.
      expect(await upgrade(port, `127.0.0.1:${port}`, "http://evil.example")).toBe(403);
      expect(await upgrade(port, `127.0.0.1:${port}`, "null")).toBe(403);
      await expect(startCanvas(root, { port: 0, allowHosts: ["http://x.example/"] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    } finally {
      await canvas.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
