import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { callDaemon, daemonStatus, stopDaemon } from "../../dist/client/rpc.js";
import { makeProject, PY_PROJECT } from "../helpers.js";

const CLI = path.resolve("dist/client/cli.js");
const require = createRequire(import.meta.url);
const p = makeProject(PY_PROJECT);
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});
const cli = (args: string[], cwd = p.root) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8", timeout: 60_000 });

describe("codemem CLI (a thin client of the daemon)", () => {
  it("builds with a relative path, answers in human form and as JSON", () => {
    const b = cli(["build", "."]);
    expect(b.status).toBe(0);
    expect(b.stdout).toMatch(/Indexed 3 files/);
    const q = cli(["query", ".", "How is VAT added?", "--json"]);
    expect(q.status).toBe(0);
    const a = JSON.parse(q.stdout);
    expect(a.citations[0].file_path).toBe("shop/models.py");
    expect(a.tokens).toBeLessThanOrEqual(800);
    const h = cli(["query", ".", "How is VAT added?"]);
    expect(h.stdout).toMatch(/shop\/models\.py:27-29/);
    expect(h.stdout).toMatch(/tokens \(o200k_base\)/);
    const s = cli(["stats", "."]);
    expect(s.stdout).toMatch(/synapse store +.*\.codemem\/synapses\.db/);
    expect(cli(["skeleton", ".", "shop/models.py"]).stdout).toMatch(/L15-24 class Order\(Entity\)/);
  });

  it("run inside the project, answers from the enclosing index; without a path, from the current directory", () => {
    expect(cli(["build", p.root]).status).toBe(0);
    const sub = path.join(p.root, "shop");
    const inSub = cli(["query", ".", "How is VAT added?", "--json"], sub);
    expect(inSub.stderr).not.toMatch(/INDEX_MISSING/);
    expect(inSub.status).toBe(0);
    expect(JSON.parse(inSub.stdout).citations[0].file_path).toBe("shop/models.py");
    const stats = cli(["stats", "--json"], sub);
    expect(stats.status).toBe(0);
    expect(JSON.parse(stats.stdout).index_path.startsWith(path.join(p.root, "codegraph-out"))).toBe(true);
    expect(fs.existsSync(path.join(sub, ".codemem"))).toBe(false);
    expect(fs.existsSync(path.join(sub, "codegraph-out"))).toBe(false);
  });

  it("a question is text whatever it starts with; whitespace alone is refused like an empty one", () => {
    expect(cli(["build", "."]).status).toBe(0);
    // An issue titled "--vat rounding": after "--", or whole (text with a space is no option).
    for (const args of [["query", ".", "--json", "--", "--vat added to an amount"], ["query", ".", "--vat added to an amount", "--json"], ["search", ".", "--json", "--", "-apply_tax"]]) {
      const r = cli(args);
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout).citations?.[0]?.file_path ?? JSON.parse(r.stdout).results[0].file_path).toBe("shop/models.py");
    }
    // Real options are still options: an unknown one is refused, even next to a spaced question.
    expect(cli(["query", ".", "--vat added", "--budgte", "300"]).status).toBe(2);
    expect(cli(["query", ".", "how?", "--bogus"]).status).toBe(2);
    for (const cmd of ["query", "search", "recursive-query", "query-docs", "neighbors"]) expect(cli([cmd, "--help"]).stdout, cmd).toMatch(/after "--"/);
    for (const question of ["", "   ", "\t\n"]) {
      for (const cmd of ["query", "search"]) {
        const r = cli([cmd, ".", question]);
        expect(r.status, `${cmd} ${JSON.stringify(question)}`).toBe(2);
        expect(r.stderr).toMatch(/INVALID_ARGUMENT/);
      }
    }
  });

  it("skeleton and neighbors --file read a file relative to the project when the current directory has no such file", () => {
    expect(cli(["build", "."]).status).toBe(0);
    const parent = path.dirname(p.root);
    const name = path.basename(p.root);
    const fromParent = cli(["skeleton", name, "shop/models.py"], parent);
    expect(fromParent.stderr).toBe("");
    expect(fromParent.stdout).toMatch(/L15-24 class Order\(Entity\)/);
    expect(cli(["neighbors", name, "--file", "shop/models.py", "--json"], parent).status).toBe(0);
    // Relative to the current directory first: inside shop/, "models.py" is shop/models.py.
    expect(cli(["skeleton", ".", "models.py"], path.join(p.root, "shop")).stdout).toMatch(/class Order/);
    // A file in neither place is named as the project's, and refused as missing.
    const missing = cli(["skeleton", name, "shop/nope.py"], parent);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/PATH_NOT_FOUND/);
    expect(cli(["skeleton", "--help"]).stdout).toMatch(/or else\s+to\s+the\s+project/);
  });

  it("npx codemem runs without an npm warning about the project's .npmrc", () => {
    // Every npm command reads the project's .npmrc; a key npm does not know was warned about on each.
    const r = spawnSync("npm", ["exec", "--offline", "--", "codemem", "--version"], { cwd: path.resolve("."), encoding: "utf8", timeout: 300_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("0.1.0");
    expect(r.stderr).not.toMatch(/Unknown project config/);
  }, 320_000);

  it("benchmark reads a question file the user names, a tool call only the project's, and never echoes a file", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "cm-questions-"));
    try {
      const shadow = path.join(outside, "shadow");
      fs.writeFileSync(shadow, "s3cr3tpw:$6$SECRETHASHxyz:19000:0:99999:7:::\n");
      const leak = cli(["benchmark", ".", "--questions", shadow]);
      expect(leak.stderr + leak.stdout).not.toContain("s3cr3tpw"); // old code: `Unexpected token 's', "s3cr3tpw:$"... is not valid JSON`
      expect(leak.status).toBe(2);
      expect(leak.stderr).toMatch(/INVALID_ARGUMENT: --questions .*shadow is not JSON/);
      // The user's own path on the command line is theirs to name.
      const qf = path.join(outside, "questions.json");
      fs.writeFileSync(qf, JSON.stringify({ questions: [{ question: "How is VAT applied?", gold_files: ["shop/models.py"] }] }));
      const ok = cli(["benchmark", ".", "--questions", qf, "--json"]);
      expect(ok.status).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({ query_count: 1, averages: { recall: 1 } });
      // A tool call (an assistant, maybe steered by what it read) names files of the project only.
      await expect(callDaemon(p.root, "benchmark", { project_path: p.root, questions_file: shadow })).rejects.toMatchObject({ code: "PATH_OUTSIDE_PROJECT" });
      fs.symlinkSync(shadow, path.join(p.root, "q.json"));
      await expect(callDaemon(p.root, "benchmark", { project_path: p.root, questions_file: "q.json" })).rejects.toMatchObject({ code: "PATH_OUTSIDE_PROJECT" });
      fs.rmSync(path.join(p.root, "q.json"));
      fs.writeFileSync(path.join(p.root, "q.json"), "s3cr3tpw:$6$SECRETHASHxyz\n");
      const inside = await callDaemon(p.root, "benchmark", { project_path: p.root, questions_file: "q.json" }).catch((e) => e);
      expect(inside.code).toBe("INVALID_ARGUMENT");
      expect(inside.message).not.toContain("s3cr3tpw");
      fs.rmSync(path.join(p.root, "q.json"));
      await expect(callDaemon(p.root, "benchmark", { project_path: p.root, questions: [{ prompt: "x" }] })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it("exits with the error family's code and a message naming the value", async () => {
    const missing = cli(["stats", "/no/such/project"]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/PATH_NOT_FOUND.*\/no\/such\/project/);
    const never = makeProject({ "a.py": "def a():\n    return 1\n" });
    try {
      for (const args of [["query", never.root, "what does a do?"], ["stats", never.root], ["search", never.root, "a"]]) {
        const r = cli(args);
        expect(r.status).toBe(3);
        expect(r.stderr).toMatch(/INDEX_MISSING: .* has no index yet; build it first/);
      }
      // No daemon was started and nothing was written there.
      expect(fs.readdirSync(never.root)).toEqual(["a.py"]);
      // With settings, the index may live elsewhere (a shared PostgreSQL): the daemon is asked.
      never.write("codemem.toml", "[query]\nbudget = 600\n");
      const asked = cli(["stats", never.root]);
      expect(asked.status).toBe(3);
      expect(asked.stderr).toMatch(/INDEX_MISSING: No index at /);
    } finally {
      await stopDaemon(never.root);
      never.cleanup();
    }
    const everything = cli(["build", "/"]);
    expect(everything.status).toBe(2);
    expect(everything.stderr).toMatch(/PATH_NOT_PROJECT.*"\/" is the file system's root/);
    const outside = cli(["skeleton", ".", "/etc/hostname"]);
    expect(outside.status).toBe(2);
    expect(outside.stderr).toMatch(/PATH_OUTSIDE_PROJECT/);
    const backend = cli(["build", ".", "--backend", "mongo"]);
    expect(backend.status).toBe(2);
    expect(backend.stderr).toMatch(/CONFIG_INVALID.*"mongo".*local.*postgres.*lancedb/);
    const leaky = cli(["build", ".", "--backend", "postgres", "--db-url", "postgres://u:hunter2secret@127.0.0.1:1/x"]);
    expect(leaky.status).toBe(2);
    expect(leaky.stderr).toMatch(/CODEMEM_DB_PASSWORD/);
    expect(leaky.stderr + leaky.stdout).not.toContain("hunter2secret");
    const usage = cli(["query"]);
    expect(usage.status).not.toBe(0);
  });

  it("checks backends step by step, refuses unknown ones, and reports on the audit log", () => {
    const ok = cli(["backend-check", "local", "--json"]);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).checks.map((c: { name: string }) => c.name)).toEqual(["better-sqlite3 native binding", "WAL journal", "FTS5", "sqlite-vec extension"]);
    expect(cli(["backend-check", "mongo"]).status).toBe(2);
    const unreachable = cli(["backend-check", "postgres", "--db-url", "postgres://codemem@127.0.0.1:1/x"]);
    expect(unreachable.status).toBe(3);
    expect(unreachable.stdout).toMatch(/FAIL .*127\.0\.0\.1:1/);
    const out = path.join(p.root, "audit-report.json");
    const r = cli(["audit-report", ".", "--format", "json", "--output", out]);
    expect(r.status).toBe(0);
    expect(JSON.parse(require("node:fs").readFileSync(out, "utf8"))).toMatchObject({ ok: true, entries: 0 });
    // A directory or a missing directory as --output is bad input, named, and nothing is written.
    const dir = cli(["audit-report", ".", "--format", "json", "--output", p.root]);
    expect(dir.status).toBe(2);
    expect(dir.stderr).toMatch(/INVALID_ARGUMENT: --output .* is a directory/);
    expect(fs.readdirSync(p.root).filter((f) => f.includes(".tmp-"))).toEqual([]);
    const nowhere = cli(["audit-report", ".", "--format", "json", "--output", "/no/such/dir/report.json"]);
    expect(nowhere.status).toBe(2);
    expect(nowhere.stderr).toMatch(/PATH_NOT_FOUND/);
  });

  it("manages the daemon", () => {
    expect(cli(["daemon", "status", "."]).stdout).toMatch(/running: pid \d+/);
    expect(cli(["daemon", "stop", "."]).stdout).toMatch(/stopped/);
    const st = cli(["daemon", "status", "."]);
    expect(st.status).toBe(4);
    expect(cli(["daemon", "start", "."]).stdout).toMatch(/daemon running/);
  });

  it("Ctrl-C during a build cancels it in the daemon too, before it writes: exit 130, the index as it was", async () => {
    // A real tree large enough that a build takes seconds: part of Python's standard library.
    const lib = "/usr/lib/python3.11";
    const big = makeProject({});
    try {
      for (const d of ["asyncio", "email", "json", "http", "logging", "unittest"]) fs.cpSync(path.join(lib, d), path.join(big.root, d), { recursive: true, filter: (f) => !f.includes("__pycache__") });
      const interrupted = async (...extra: string[]) => {
        const child = spawn(process.execPath, [CLI, "build", big.root, ...extra], { stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (d) => (stderr += d));
        const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
        // Interrupted once the daemon reports the build reading files, as a user would (a Ctrl-C that
        // comes during the write is too late by design: the build finishes).
        const phase = async () => ((await daemonStatus(big.root).catch(() => undefined)) as { build?: { phase: string } | null } | undefined)?.build?.phase;
        await waitUntilAsync(async () => ["scan", "parse"].includes((await phase()) ?? ""), 30_000);
        child.kill("SIGINT");
        return { code: await exited, stderr };
      };
      const first = await interrupted();
      expect(first.stderr).toMatch(/BUILD_CANCELLED/);
      expect(first.code).toBe(130);
      // Nothing was written: a first build leaves no index, and the daemon runs no build any more.
      expect(((await daemonStatus(big.root)) as { build?: unknown }).build ?? null).toBeNull();
      expect(cli(["stats", big.root]).stderr).toMatch(/INDEX_MISSING/);
      expect(cli(["build", big.root]).status).toBe(0);
      const nodes = JSON.parse(cli(["stats", big.root, "--json"]).stdout).node_count as number;
      const forced = await interrupted("--force");
      expect(forced.code).toBe(130);
      expect(JSON.parse(cli(["stats", big.root, "--json"]).stdout).node_count).toBe(nodes);
    } finally {
      await stopDaemon(big.root);
      big.cleanup();
    }
  });

  it("keeps its own directories out of git: .codemem/ and codegraph-out/ carry a .gitignore of *", async () => {
    const g = makeProject({ "app.py": "def main():\n    return 1\n" });
    try {
      spawnSync("git", ["init", "-q"], { cwd: g.root });
      expect(cli(["build", g.root]).status).toBe(0);
      for (const d of [".codemem", "codegraph-out"]) expect(fs.readFileSync(path.join(g.root, d, ".gitignore"), "utf8")).toMatch(/^\*$/m);
      // git sees the project's file and nothing of codemem's.
      const st = spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: g.root, encoding: "utf8" });
      expect(st.stdout.trim().split("\n")).toEqual(["?? app.py"]);
    } finally {
      await stopDaemon(g.root);
      g.cleanup();
    }
  });

  it("lists this user's daemons and stops them all; a killed daemon drops out of the list", async () => {
    // A state directory of this test only: --all must not stop the daemons of other test files.
    const env = { ...process.env, XDG_STATE_HOME: fs.mkdtempSync(path.join(os.tmpdir(), "codemem-state-")) };
    const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 60_000, env });
    const a = makeProject({ "a.py": "def a():\n    return 1\n" });
    const b = makeProject({ "b.py": "def b():\n    return 2\n" });
    const c = makeProject({ "c.py": "def c():\n    return 3\n" });
    try {
      for (const x of [a, b, c]) expect(run(["daemon", "start", x.root]).status).toBe(0);
      const listed = JSON.parse(run(["daemon", "list", "--json"]).stdout) as { root: string; pid: number; answering: boolean }[];
      expect(listed.map((d) => d.root).sort()).toEqual([a.root, b.root, c.root].sort());
      expect(listed.every((d) => d.answering)).toBe(true);
      expect(run(["daemon", "list"]).stdout).toContain(b.root);
      // kill -9 leaves its note behind; the list checks the process and forgets it.
      const killed = listed.find((d) => d.root === c.root)!.pid;
      process.kill(killed, "SIGKILL");
      await waitUntil(() => !fs.existsSync(`/proc/${killed}`) || fs.readFileSync(`/proc/${killed}/stat`, "utf8").includes(") Z "));
      expect((JSON.parse(run(["daemon", "list", "--json"]).stdout) as { root: string }[]).map((d) => d.root).sort()).toEqual([a.root, b.root].sort());
      expect(run(["daemon", "stop", a.root, "--all"]).status).toBe(2);
      const stopped = JSON.parse(run(["daemon", "stop", "--all", "--json"]).stdout) as { root: string; stopped: boolean }[];
      expect(stopped.map((r) => r.root).sort()).toEqual([a.root, b.root].sort());
      expect(stopped.every((r) => r.stopped)).toBe(true);
      expect(JSON.parse(run(["daemon", "list", "--json"]).stdout)).toEqual([]);
      expect(run(["daemon", "list"]).stdout).toMatch(/no daemon is running/);
      // The project's own daemon (another state directory) still runs.
      expect(cli(["daemon", "status", "."]).status).toBe(0);
    } finally {
      for (const x of [a, b, c]) {
        await stopDaemon(x.root).catch(() => {});
        x.cleanup();
      }
    }
  });

  it("usage errors exit 2 like other bad input; setup commands speak plainly without --json", () => {
    for (const args of [["query"], ["search", ".", "x", "--limit"], ["stats", "--no-such-flag"], ["frobnicate"]]) {
      const r = cli(args);
      expect(r.status, args.join(" ")).toBe(2);
    }
    expect(cli(["--help"]).status).toBe(0);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-home-"));
    const proj = makeProject({ "a.py": "def a():\n    return 1\n" });
    const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: proj.root, encoding: "utf8", timeout: 60_000, env: { ...process.env, HOME: home } });
    try {
      const settings = path.join(proj.root, ".claude/settings.json");
      expect(run(["install-hooks", "."]).stdout).toBe(`created ${settings}\n`);
      expect(run(["install-hooks", "."]).stdout).toBe(`unchanged ${settings}\n`);
      // Nothing but our hooks was in it: the file goes (it was left as {}).
      expect(run(["uninstall-hooks", "."]).stdout).toBe(`deleted ${settings}\n`);
      expect(fs.existsSync(settings)).toBe(false);
      fs.mkdirSync(path.dirname(settings), { recursive: true });
      fs.writeFileSync(settings, JSON.stringify({ model: "opus" }));
      expect(run(["install-hooks", "."]).stdout).toBe(`updated ${settings}\n`);
      expect(run(["uninstall-hooks", "."]).stdout).toBe(`updated ${settings}\n`);
      expect(JSON.parse(fs.readFileSync(settings, "utf8"))).toEqual({ model: "opus" });
      spawnSync("git", ["init", "-q"], { cwd: proj.root });
      expect(run(["init-hook", "."]).stdout).toMatch(/^installed .*\.git\/hooks\/post-commit\n$/);
      expect(run(["init-hook", ".", "--remove"]).stdout).toMatch(/^removed /);
      // A service that was written but not started is not a success.
      const svc = run(["install-service", "."]);
      expect(svc.stdout).not.toMatch(/^\{/);
      expect(svc.status).toBe(/^installed and started/.test(svc.stdout) ? 0 : 1);
      expect(run(["uninstall-service", "."]).stdout).toMatch(/^removed .*codemem-.*\.service/);
    } finally {
      proj.cleanup();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

async function waitUntilAsync(ok: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function waitUntil(ok: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
