import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { PY_PROJECT } from "../helpers.js";
import { waitFor } from "../daemon/helpers.js";

/**
 * A cloned repository can commit codemem's own state paths as symbolic links: a `build` must never
 * write through them (the case: `codegraph-out/graph.json -> ../../../.bashrc`, whose next
 * interactive shell ran what a docstring held). Each case clones a real git repository carrying the
 * link, runs the real CLI (which starts the real daemon), and checks the link's target is untouched.
 */
const CLI = path.resolve("dist/client/cli.js");
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cm-links-")));
const projects: string[] = [];
afterAll(async () => {
  for (const p of projects) await stopDaemon(p).catch(() => undefined);
  fs.rmSync(base, { recursive: true, force: true });
});

const env = { ...process.env, CODEMEM_IDLE_MINUTES: "1" };

function cli(...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: base, env, encoding: "utf8", timeout: 120_000 });
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "m", GIT_AUTHOR_EMAIL: "m@e", GIT_COMMITTER_NAME: "m", GIT_COMMITTER_EMAIL: "m@e" } });
}

/** A file of the user's outside every project (their ~/.bashrc), with its content and mtime. */
function victim(name: string): { file: string; unchanged: () => void } {
  const file = path.join(base, "home", name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, "# the user's own file\nexport PS1='$ '\n");
  const old = new Date(Date.now() - 3_600_000);
  fs.utimesSync(file, old, old);
  const before = fs.readFileSync(file);
  const mtime = fs.statSync(file).mtimeMs;
  return {
    file,
    unchanged: () => {
      expect(fs.readFileSync(file).equals(before)).toBe(true);
      expect(fs.statSync(file).mtimeMs).toBe(mtime);
    },
  };
}

/** An attacker's repository committing `links` (repo path → link text), and the user's clone of it. */
function cloneWithLinks(name: string, links: Record<string, string>): string {
  const upstream = path.join(base, `${name}-upstream`);
  for (const [rel, body] of Object.entries(PY_PROJECT)) {
    fs.mkdirSync(path.dirname(path.join(upstream, rel)), { recursive: true });
    fs.writeFileSync(path.join(upstream, rel), body);
  }
  for (const [rel, to] of Object.entries(links)) {
    fs.mkdirSync(path.dirname(path.join(upstream, rel)), { recursive: true });
    fs.symlinkSync(to, path.join(upstream, rel));
  }
  git(upstream, "init", "-q");
  git(upstream, "add", "-f", ".");
  git(upstream, "commit", "-qm", "project");
  const clone = path.join(base, name);
  git(base, "clone", "-q", upstream, clone);
  for (const rel of Object.keys(links)) expect(fs.lstatSync(path.join(clone, rel)).isSymbolicLink()).toBe(true);
  projects.push(clone);
  return clone;
}

describe("a cloned repository's links in codemem's state", () => {
  const cases: [string, string][] = [
    ["graph", "codegraph-out/graph.json"],
    ["store-choice", ".codemem/store.json"],
    ["daemon-log", ".codemem/daemon.log"],
    ["events", ".codemem/events.jsonl"],
    ["index-db", "codegraph-out/codemem_db/index.db"],
    ["synapse-wal", ".codemem/synapses.db-wal"],
  ];
  for (const [name, rel] of cases) {
    it(`build refuses a linked ${rel} and writes nothing through it`, () => {
      const v = victim(`${name}.bashrc`);
      const clone = cloneWithLinks(name, { [rel]: path.relative(path.dirname(path.join(base, name, rel)), v.file) });
      const r = cli("build", clone);
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toContain("PATH_UNSAFE");
      expect(r.stderr).toContain(path.join(clone, rel));
      v.unchanged();
    });
  }

  it("a shipped .codemem linked to another directory is refused, and nothing lands there", () => {
    const elsewhere = path.join(base, "someone-elses");
    fs.mkdirSync(elsewhere);
    const clone = cloneWithLinks("state-dir", { ".codemem": elsewhere });
    const r = cli("build", clone);
    expect(r.status, r.stderr).toBe(4);
    // The socket's check meets it first where the socket lives in .codemem/ (a short project path).
    expect(r.stderr).toMatch(/PATH_UNSAFE|RUNTIME_DIR_UNSAFE/);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it("after the link is removed as the error says, the build succeeds", async () => {
    const v = victim("fixed.bashrc");
    const clone = cloneWithLinks("fixed", { "codegraph-out/graph.json": v.file });
    expect(cli("build", clone).status).toBe(4);
    fs.rmSync(path.join(clone, "codegraph-out"), { recursive: true, force: true });
    const r = cli("build", clone);
    expect(r.status, r.stderr).toBe(0);
    // A first build's graph.json is written by its fill, after the build answered.
    const graph = path.join(clone, "codegraph-out", "graph.json");
    await waitFor("graph.json", () => fs.existsSync(graph));
    expect(fs.lstatSync(graph).isFile()).toBe(true);
    v.unchanged();
  });

  it("a link put in place under a running daemon is refused at the write, not followed", async () => {
    const v = victim("late.bashrc");
    const clone = cloneWithLinks("late", {});
    expect(cli("build", clone).status).toBe(0); // the daemon now runs, its state checked at start
    const graph = path.join(clone, "codegraph-out", "graph.json");
    await waitFor("graph.json", () => fs.existsSync(graph));
    fs.rmSync(graph);
    fs.symlinkSync(v.file, graph);
    fs.appendFileSync(path.join(clone, "shop", "models.py"), "\n\ndef refund(order):\n    return order\n");
    const r = cli("build", clone);
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toContain("PATH_UNSAFE");
    v.unchanged();
  });
});
