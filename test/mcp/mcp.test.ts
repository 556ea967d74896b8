import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callDaemon, stopDaemon } from "../../dist/client/rpc.js";
import { trustProject } from "../../dist/shared/config.js";
import { countTokens } from "../../dist/shared/tokens.js";
import { pgTestClient, pgTestSettings } from "../helpers-pg.js";
import { makeProject, PY_PROJECT } from "../helpers.js";

const SHIM = path.resolve("dist/client/mcp.js");
let p: ReturnType<typeof makeProject>;
let client: Client;

beforeAll(async () => {
  p = makeProject(PY_PROJECT);
  client = new Client({ name: "codemem-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, p.root], stderr: "pipe" }));
});
afterAll(async () => {
  await client.close();
  await stopDaemon(p.root);
  p.cleanup();
});

const call = async (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: { project_path: p.root, ...args } });

describe("codemem-mcp over stdio with the SDK client", () => {
  it("lists the fifteen tools with every parameter's description, values, bounds and default, in at most 2,000 o200k tokens", async () => {
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name).sort()).toEqual(
      [
        "codemem_benchmark", "codemem_build", "codemem_export_synapse_memory", "codemem_query", "codemem_query_docs",
        "codemem_recursive_query", "codemem_search", "codemem_skeleton", "codemem_stats", "codemem_synapse_decay",
        "codemem_synapse_stats", "codemem_synaptic_neighbors", "codemem_wakeup", "codemem_trace", "codemem_impact",
      ].sort(),
    );
    const q = list.tools.find((t) => t.name === "codemem_query")!;
    expect(q.annotations?.readOnlyHint).toBe(true);
    // Started for a project: project_path may be omitted. A query answers with its text alone.
    expect(q.inputSchema.required).toEqual(["question"]);
    expect(list.tools.find((t) => t.name === "codemem_build")!.annotations?.readOnlyHint).toBe(false);
    // What the model needs to call right: each parameter's meaning, values, bounds and default
    // (old list: `group_by: string`, `limit: integer`, no description anywhere)...
    const params = (name: string) => list.tools.find((t) => t.name === name)!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(params("codemem_search").group_by).toMatchObject({ type: "string", enum: ["node", "file"], default: "node" });
    expect(params("codemem_search").limit).toMatchObject({ type: "integer", minimum: 1, maximum: 100, default: 10 });
    expect(params("codemem_query").budget).toMatchObject({ minimum: 200, maximum: 20000 });
    expect(params("codemem_synaptic_neighbors").node_ids).toMatchObject({ type: "array", items: { type: "string" } });
    for (const t of list.tools) for (const [k, v] of Object.entries(t.inputSchema.properties!)) expect([t.name, k, typeof (v as { description?: string }).description]).toEqual([t.name, k, "string"]);
    // ...and no output schemas, which hosts do not show the model; zod's "no bound" (±2^53) is no bound.
    expect(list.tools.filter((t) => t.outputSchema)).toEqual([]);
    expect(JSON.stringify(list)).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(countTokens(JSON.stringify(list))).toBeLessThanOrEqual(2000);
  });

  it("refuses a database URL chosen by the assistant: nothing connects there", async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const r = await call("codemem_build", { backend: "postgres", db_url: `postgres://me@127.0.0.1:${port}/codemem` });
      expect(connections).toBe(0); // old code: the daemon connected (and would send CODEMEM_DB_PASSWORD)
      expect(r.isError).toBe(true);
      expect((r.content as { text: string }[])[0].text).toMatch(/^CONFIG_UNTRUSTED: codemem_build: db_url .* comes from the assistant/);
    } finally {
      server.close();
    }
  });

  it("builds, answers and searches through the daemon", async () => {
    const b = await call("codemem_build", {});
    expect(b.isError).toBeFalsy();
    expect(b.structuredContent).toMatchObject({ files_indexed: 3, graph_source: "builtin" });
    const q = await call("codemem_query", { question: "How are card payments retried?" });
    expect(q.isError).toBeFalsy();
    // What the host hands the model is the answer's text alone, and its tokens are the ones counted.
    expect(q.structuredContent).toBeUndefined();
    expect(q.content).toHaveLength(1);
    const text = (q.content as any)[0].text as string;
    expect(text).toMatch(/shop\/payments\.py:\d+-\d+/);
    const direct = (await callDaemon(p.root, "query", { project_path: p.root, question: "How are card payments retried?" })) as { context: string; tokens: number };
    expect(countTokens(direct.context)).toBe(direct.tokens);
    expect(countTokens(text)).toBeLessThanOrEqual(direct.tokens + 40);
    const sk = await call("codemem_skeleton", { file_path: "shop/payments.py" });
    const outline = (await callDaemon(p.root, "skeleton", { project_path: p.root, file_path: "shop/payments.py" })) as { outline: string; tokens: number };
    expect(sk.structuredContent).toBeUndefined();
    expect((sk.content as any)[0].text).toBe(outline.outline);
    expect(countTokens((sk.content as any)[0].text)).toBe(outline.tokens);
    // A call naming no project goes to the one the server was started for.
    const unnamed = await client.callTool({ name: "codemem_stats", arguments: {} });
    expect(unnamed.isError).toBeFalsy();
    expect((unnamed.structuredContent as any).index_path).toContain(p.root);
    const s = await call("codemem_search", { query: "VAT" });
    expect((s.structuredContent as any).results[0].name).toBe("apply_tax");
    const st = await call("codemem_stats", {});
    expect((st.structuredContent as any).node_count).toBeGreaterThan(5);
  });

  it("refuses relative paths, unknown arguments and missing projects with stable codes", async () => {
    const rel = await client.callTool({ name: "codemem_query", arguments: { project_path: "shop", question: "x" } });
    expect(rel.isError).toBe(true);
    expect(JSON.stringify(rel.content)).toMatch(/PATH_RELATIVE|absolute/);
    const extra = await call("codemem_search", { query: "x", role: "admin" });
    expect(extra.isError).toBe(true);
    const missing = await client.callTool({ name: "codemem_stats", arguments: { project_path: "/no/such/project" } });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toMatch(/PATH_NOT_FOUND/);
  });

  it("tool calls reinforce the shared synapse store and land in the event stream", async () => {
    for (let i = 0; i < 3; i++) await call("codemem_query", { question: "order total tax and card charge" });
    await call("codemem_skeleton", { file_path: "shop/payments.py" }); // an answer's list teaches nothing; an outline opened does
    const stats = (await call("codemem_synapse_stats", {})).structuredContent as any;
    expect(stats.edges).toBeGreaterThan(0);
    const n = (await call("codemem_synaptic_neighbors", { node_ids: ["shop/payments.py::charge_card"] })).structuredContent as any;
    expect(n.neighbors.length).toBeGreaterThan(0);
    const lines = fs.readFileSync(path.join(p.root, ".codemem/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const mine = lines.filter((e) => e.source === "mcp" && e.kind === "tool_call" && e.tool === "codemem_query");
    expect(mine.length).toBeGreaterThanOrEqual(3);
    expect(mine[0].nodes.length).toBeGreaterThan(0);
    expect(mine.at(-1).text).toBe("order total tax and card charge"); // the canvas shows what was asked
    const decay = (await call("codemem_synapse_decay", {})).structuredContent as any;
    expect(decay.ticks).toBe(1);
    const exp = (await call("codemem_export_synapse_memory", {})).structuredContent as any;
    expect(exp.written).toContain(path.join(p.root, ".codemem/synapse-memory.md"));
    expect(exp.markdown).toMatch(/charge_card|apply_tax|Order/);
  });
});

describe("codemem-mcp launch", () => {
  it("writes nothing but protocol messages on stdout", async () => {
    const child = spawn(process.execPath, [SHIM, p.root], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c) => (out += c));
    const send = (m: object) => child.stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "codemem_stats", arguments: { project_path: p.root } } });
    const deadline = Date.now() + 10_000;
    while (!out.includes('"id":2') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.kill();
    const lines = out.trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const l of lines) expect(JSON.parse(l).jsonrpc).toBe("2.0");
  });

  it("refuses a relative project path at launch", async () => {
    const child = spawn(process.execPath, [SHIM, "relative/dir"], { stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (c) => (err += c));
    const code = await new Promise((r) => child.on("exit", r));
    expect(code).toBe(2);
    expect(err).toMatch(/PATH_RELATIVE/);
  });
});

describe("codemem-mcp started by Claude Code for a project", () => {
  it("serves the project Claude Code names in CLAUDE_PROJECT_DIR, so .mcp.json needs no path", async () => {
    const c = new Client({ name: "codemem-test", version: "1.0.0" });
    const env: Record<string, string> = { ...(process.env as Record<string, string>), CLAUDE_PROJECT_DIR: p.root };
    delete env.CODEMEM_PROJECT;
    try {
      await c.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM], env, stderr: "pipe" }));
      expect(c.getInstructions()).toContain(p.root);
      const stats = await c.callTool({ name: "codemem_stats", arguments: {} });
      expect(stats.isError).toBeFalsy();
      expect((stats.structuredContent as { node_count: number }).node_count).toBeGreaterThan(5);
    } finally {
      await c.close();
    }
  });
});

describe("codemem-mcp --backend", () => {
  it.each([["flags"], ["environment"]])("builds a project it was started for on that backend when codemem_build names none (%s)", async (how) => {
    const { dbUrl, password } = await pgTestSettings();
    const schemaKey = `mcp_served_${how}_${process.pid}`;
    const passwordFile = path.join(os.tmpdir(), `codemem-mcp-test-pw-${process.pid}`);
    fs.writeFileSync(passwordFile, password + "\n", { mode: 0o600 });
    const q = makeProject({ ...PY_PROJECT, "codemem.toml": `[store]\nproject = "${schemaKey}"\npassword_file = "${passwordFile}"\n` });
    trustProject(q.root); // the user's own settings file
    const admin = await pgTestClient();
    const served = new Client({ name: "codemem-test", version: "1.0.0" });
    try {
      // The daemon already runs, started by a client without these settings (as another assistant's would be).
      await callDaemon(q.root, "ping", {}, { source: "cli" });
      const env: Record<string, string> = { ...(process.env as Record<string, string>) };
      const args = [SHIM, q.root];
      if (how === "flags") args.push("--backend", "postgres", "--db-url", dbUrl);
      else Object.assign(env, { CODEMEM_BACKEND: "postgres", CODEMEM_DB_URL: dbUrl });
      await served.connect(new StdioClientTransport({ command: process.execPath, args, env, stderr: "pipe" }));
      const built = await served.callTool({ name: "codemem_build", arguments: { project_path: q.root } });
      expect(built.isError).toBeFalsy();
      const stats = (await served.callTool({ name: "codemem_stats", arguments: { project_path: q.root } })).structuredContent as { backend: string; node_count: number };
      expect(stats).toMatchObject({ backend: "postgres" });
      expect(stats.node_count).toBeGreaterThan(5);
      expect(fs.existsSync(path.join(q.root, "codegraph-out/codemem_db/index.db"))).toBe(false);
    } finally {
      await served.close();
      await stopDaemon(q.root);
      await admin.query(`DROP SCHEMA IF EXISTS "codemem_${schemaKey}" CASCADE`);
      fs.rmSync(passwordFile, { force: true });
      await admin.end();
      q.cleanup();
    }
  });
});

/** Environment of a host starting the server: no project of the test runner's own. */
function hostEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...extra };
  for (const k of ["CODEMEM_PROJECT", "CLAUDE_PROJECT_DIR", "CODEMEM_ALLOW_ANY_PROJECT"]) if (!(k in extra)) delete env[k];
  return env;
}

async function startHost(args: string[], env: Record<string, string> = hostEnv()): Promise<Client> {
  const c = new Client({ name: "codemem-test", version: "1.0.0" });
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [SHIM, ...args], env, stderr: "pipe" }));
  return c;
}

const textOf = (r: { content?: unknown }) => ((r.content as { text: string }[] | undefined) ?? [])[0]?.text ?? "";
const hasState = (dir: string) => fs.existsSync(path.join(dir, ".codemem")) || fs.existsSync(path.join(dir, "codegraph-out"));

describe("codemem-mcp started in a subdirectory of a project", () => {
  let q: ReturnType<typeof makeProject>;
  let sub: string;
  beforeAll(async () => {
    q = makeProject(PY_PROJECT);
    sub = path.join(q.root, "shop");
    await callDaemon(q.root, "build", { project_path: q.root }, { source: "cli" });
  });
  afterAll(async () => {
    await stopDaemon(q.root);
    q.cleanup();
  });

  it.each([["argument"], ["CODEMEM_PROJECT"], ["CLAUDE_PROJECT_DIR"]])("serves the enclosing project's index, builds it, and creates nothing in the subdirectory (%s)", async (how) => {
    const c = how === "argument" ? await startHost([sub]) : await startHost([], hostEnv({ [how]: sub }));
    try {
      expect(c.getInstructions()).toContain(q.root);
      // Old code: INDEX_MISSING, then a daemon rooted in shop/ and shop/.codemem.
      const st = await c.callTool({ name: "codemem_stats", arguments: {} });
      expect(st.isError, textOf(st)).toBeFalsy();
      expect((st.structuredContent as { index_path: string; node_count: number }).index_path).toContain(path.join(q.root, "codegraph-out"));
      const s = await c.callTool({ name: "codemem_search", arguments: { project_path: sub, query: "VAT" } });
      expect(s.isError, textOf(s)).toBeFalsy();
      expect((s.structuredContent as { results: { name: string }[] }).results[0].name).toBe("apply_tax");
      // A build from a server opened in a subdirectory builds the enclosing project, not a nested index.
      const b = await c.callTool({ name: "codemem_build", arguments: { project_path: sub } });
      expect(b.isError, textOf(b)).toBeFalsy();
      expect((b.structuredContent as { files_indexed: number }).files_indexed).toBe(3);
      expect(hasState(sub)).toBe(false);
    } finally {
      await c.close();
    }
  });

  it("a server started for no project answers a call naming a subdirectory from the enclosing index", async () => {
    const c = await startHost([]);
    try {
      const sk = await c.callTool({ name: "codemem_skeleton", arguments: { project_path: sub, file_path: "shop/payments.py" } });
      expect(sk.isError, textOf(sk)).toBeFalsy();
      expect(textOf(sk)).toMatch(/charge_card/);
      expect(hasState(sub)).toBe(false);
    } finally {
      await c.close();
    }
  });
});

describe("codemem-mcp started for a project answers for that project only", () => {
  let a: ReturnType<typeof makeProject>;
  beforeAll(async () => {
    a = makeProject(PY_PROJECT);
    await callDaemon(a.root, "build", { project_path: a.root }, { source: "cli" });
  });
  afterAll(async () => {
    await stopDaemon(a.root);
    a.cleanup();
  });

  it("refuses every tool naming another directory with PROJECT_NOT_SERVED; nothing is created there", async () => {
    const b = makeProject(PY_PROJECT);
    const c = await startHost([a.root]);
    try {
      const calls: [string, Record<string, unknown>][] = [
        ["codemem_build", {}],
        ["codemem_skeleton", { file_path: "shop/payments.py" }],
        ["codemem_search", { query: "VAT" }],
        ["codemem_stats", {}],
        ["codemem_synapse_decay", {}],
      ];
      for (const dir of [b.root, path.join(b.root, "shop"), path.dirname(a.root)]) {
        for (const [name, args] of calls) {
          const r = await c.callTool({ name, arguments: { ...args, project_path: dir } });
          expect([name, dir, r.isError]).toEqual([name, dir, true]);
          expect(textOf(r)).toMatch(/^PROJECT_NOT_SERVED: /);
        }
      }
      // Old code: b was indexed, its code returned, b/.codemem and b/codegraph-out created.
      expect(hasState(b.root)).toBe(false);
      // Its own project and directories inside it are served.
      const own = await c.callTool({ name: "codemem_search", arguments: { project_path: path.join(a.root, "shop"), query: "VAT" } });
      expect(own.isError, textOf(own)).toBeFalsy();
    } finally {
      await c.close();
      b.cleanup();
    }
  });

  it.each([["--allow-any-project"], ["CODEMEM_ALLOW_ANY_PROJECT=1"]])("serves any directory when the user's own configuration says so (%s)", async (how) => {
    const b = makeProject(PY_PROJECT);
    const c = how.startsWith("--") ? await startHost([a.root, how]) : await startHost([a.root], hostEnv({ CODEMEM_PROJECT: a.root, CODEMEM_ALLOW_ANY_PROJECT: "1" }));
    try {
      const built = await c.callTool({ name: "codemem_build", arguments: { project_path: b.root } });
      expect(built.isError, textOf(built)).toBeFalsy();
      const sk = await c.callTool({ name: "codemem_skeleton", arguments: { project_path: b.root, file_path: "shop/payments.py" } });
      expect(textOf(sk)).toMatch(/charge_card/);
    } finally {
      await c.close();
      await stopDaemon(b.root);
      b.cleanup();
    }
  });
});

describe("an unexpanded host variable as the project path", () => {
  it("is refused at launch with PATH_UNEXPANDED, not read as a directory under the working directory", async () => {
    const child = spawn(process.execPath, [SHIM], { env: hostEnv({ CODEMEM_PROJECT: "${workspaceFolder}" }), stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (c) => (err += c));
    const code = await new Promise((r) => child.on("exit", r));
    expect(code).toBe(2);
    expect(err).toMatch(/PATH_UNEXPANDED/); // old code: PATH_RELATIVE suggesting "<cwd>/${workspaceFolder}"
  });

  it("is refused in a tool call with PATH_UNEXPANDED", async () => {
    const c = await startHost([]);
    try {
      for (const v of ["${workspaceFolder}", "${workspaceFolder}/src", "/${workspaceFolder}", "~/project"]) {
        const r = await c.callTool({ name: "codemem_stats", arguments: { project_path: v } });
        expect([v, textOf(r).split(":")[0]]).toEqual([v, "PATH_UNEXPANDED"]);
      }
    } finally {
      await c.close();
    }
  });
});
