import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installMcp, MCP_MAIN, uninstallMcp } from "../../dist/client/install-mcp.js";
import { installHooks } from "../../dist/hooks/install.js";
import { makeProject } from "../helpers.js";

const CLI = path.resolve("dist/client/cli.js");
const p = makeProject({ ".mcp.json": JSON.stringify({ mcpServers: { other: { command: "/usr/bin/other", args: [] } }, extra: 1 }) });
const home = makeProject({});
afterAll(() => {
  p.cleanup();
  home.cleanup();
});
const read = (f: string) => JSON.parse(fs.readFileSync(f, "utf8"));

describe("install-mcp", () => {
  it("merges into host files without clobbering other servers, idempotently; committed files name no project path", () => {
    const r = installMcp(p.root, ["project", "vscode", "cursor", "claude-user"], { home: home.root, env: { PATH: "/usr/bin:/bin" } });
    expect(r.map((x) => x.action)).toEqual(["added", "added", "added", "added"]);
    const project = read(path.join(p.root, ".mcp.json"));
    expect(project.mcpServers.other.command).toBe("/usr/bin/other");
    expect(project.extra).toBe(1);
    // Claude Code tells the server its project (CLAUDE_PROJECT_DIR); the file carries no project path.
    expect(project.mcpServers.codemem).toEqual({ command: process.execPath, args: [MCP_MAIN], env: {} });
    const vscode = read(path.join(p.root, ".vscode/mcp.json"));
    expect(vscode.servers.codemem.env).toEqual({ CODEMEM_PROJECT: "${workspaceFolder}" });
    // Cursor's entry is the project's own, not one global entry every install repoints.
    expect(read(path.join(p.root, ".cursor/mcp.json")).mcpServers.codemem.env).toEqual({ CODEMEM_PROJECT: "${workspaceFolder}" });
    expect(fs.existsSync(path.join(home.root, ".cursor/mcp.json"))).toBe(false);
    for (const f of [".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json"]) expect(fs.readFileSync(path.join(p.root, f), "utf8")).not.toContain(p.root);
    // Without codemem-mcp on PATH the shared files name this machine's paths, and the result says so.
    expect(r.map((x) => !!x.machine_paths)).toEqual([true, true, true, false]);
    expect(read(path.join(home.root, ".claude.json")).projects[p.root].mcpServers.codemem.args).toEqual([MCP_MAIN, p.root]);
    const again = installMcp(p.root, ["project", "vscode", "cursor", "claude-user"], { home: home.root, env: { PATH: "/usr/bin:/bin" } });
    expect(again.map((x) => x.action)).toEqual(["unchanged", "unchanged", "unchanged", "unchanged"]);
  });

  it("with codemem-mcp on PATH, committed files name a command a teammate's checkout resolves too", () => {
    const bin = makeProject({});
    const q = makeProject({});
    try {
      fs.symlinkSync(MCP_MAIN, path.join(bin.root, "codemem-mcp"));
      const r = installMcp(q.root, ["project", "vscode", "cursor"], { home: home.root, env: { PATH: `${bin.root}:/usr/bin` } });
      expect(r.every((x) => !x.machine_paths)).toBe(true);
      expect(read(path.join(q.root, ".mcp.json")).mcpServers.codemem).toEqual({ command: "codemem-mcp", args: [], env: {} });
      for (const f of [".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json"]) {
        const text = fs.readFileSync(path.join(q.root, f), "utf8");
        expect(text).not.toContain(q.root);
        expect(text).not.toContain(process.execPath);
        expect(text).not.toContain("dist/client");
      }
    } finally {
      bin.cleanup();
      q.cleanup();
    }
  });

  it("uninstall-mcp removes only our entries; a file that held only ours goes", () => {
    const q = makeProject({ ".vscode/mcp.json": JSON.stringify({ servers: { other: { command: "x" } } }) });
    const h = makeProject({ ".claude.json": JSON.stringify({ userID: "u-2" }) });
    try {
      installMcp(q.root, ["project", "vscode", "cursor", "claude-user"], { home: h.root });
      const r = uninstallMcp(q.root, ["project", "vscode", "cursor", "claude-user"], { home: h.root });
      // A file that held only ours is deleted, and the result says so; the others lose our entry only.
      expect(r.map((x) => x.action)).toEqual(["deleted", "removed", "deleted", "removed"]);
      expect(fs.existsSync(path.join(q.root, ".mcp.json"))).toBe(false);
      expect(fs.existsSync(path.join(q.root, ".cursor"))).toBe(false);
      expect(read(path.join(q.root, ".vscode/mcp.json"))).toEqual({ servers: { other: { command: "x" } } });
      const user = read(path.join(h.root, ".claude.json"));
      expect(user.userID).toBe("u-2");
      expect(user).toEqual({ userID: "u-2" }); // no empty projects[<root>] left behind
      expect(uninstallMcp(q.root, ["project", "claude-user"], { home: h.root }).map((x) => x.action)).toEqual(["absent", "absent"]);
    } finally {
      q.cleanup();
      h.cleanup();
    }
  });

  it("codemem uninstall-mcp --host claude-user leaves ~/.claude.json as it was before install-mcp, and says what it did", () => {
    const q = makeProject({});
    const h = makeProject({});
    const file = path.join(h.root, ".claude.json");
    // Claude Code's own entry for another project, and its own (empty) mcpServers for this one.
    const cases = [
      { userID: "u-3", projects: { "/elsewhere": { allowedTools: ["Bash"], mcpServers: { x: { command: "x" } } } } },
      { userID: "u-3", projects: { [q.root]: { allowedTools: [], mcpServers: {}, history: [] } } },
    ];
    const cli = (cmd: string) => spawnSync(process.execPath, [CLI, cmd, q.root, "--host", "claude-user"], { env: { ...process.env, HOME: h.root }, encoding: "utf8", timeout: 60_000 });
    try {
      for (const before of cases) {
        fs.writeFileSync(file, JSON.stringify(before, null, 2));
        expect(cli("install-mcp").status).toBe(0);
        expect(read(file).projects[q.root].mcpServers.codemem.args).toEqual([MCP_MAIN, q.root]);
        const out = cli("uninstall-mcp");
        expect(out.status).toBe(0);
        // Old code: {"projects": {"<root>": {"mcpServers": {}}}} stayed, reported as "removed <file>".
        expect(read(file)).toEqual(before);
        expect(out.stdout).toContain(file);
        expect(out.stdout).not.toMatch(/^removed\s+\//m);
      }
      expect(cli("uninstall-mcp").stdout).toMatch(/no codemem entry/);
    } finally {
      q.cleanup();
      h.cleanup();
    }
  });

  it("writes a host file through its symlink and keeps its mode", () => {
    const h = makeProject({ "dotfiles/claude.json": JSON.stringify({ numStartups: 3, userID: "u-1" }) });
    const target = path.join(h.root, "dotfiles/claude.json");
    fs.chmodSync(target, 0o600);
    fs.symlinkSync(target, path.join(h.root, ".claude.json"));
    try {
      expect(installMcp(p.root, ["claude-user"], { home: h.root })[0].action).toBe("added");
      expect(fs.lstatSync(path.join(h.root, ".claude.json")).isSymbolicLink()).toBe(true);
      expect(fs.statSync(target).mode & 0o777).toBe(0o600);
      const doc = read(target);
      expect(doc.userID).toBe("u-1");
      expect(doc.projects[p.root].mcpServers.codemem.args).toEqual([MCP_MAIN, p.root]);
      expect(fs.readdirSync(path.join(h.root, "dotfiles"))).toEqual(["claude.json"]);
    } finally {
      h.cleanup();
    }
  });

  it("does not write a project's host file through a link that leads out of the project (a clone can ship one)", () => {
    const outside = makeProject({ "claude.json": JSON.stringify({ userID: "u-1" }) });
    const q = makeProject({ "vendor/mcp.json": JSON.stringify({ mcpServers: {} }) });
    fs.symlinkSync(path.join(outside.root, "claude.json"), path.join(q.root, ".mcp.json"));
    fs.mkdirSync(path.join(q.root, ".claude"));
    fs.symlinkSync(path.join(outside.root, "claude.json"), path.join(q.root, ".claude", "settings.json"));
    fs.mkdirSync(path.join(q.root, ".vscode"));
    fs.symlinkSync(path.join(q.root, "vendor/mcp.json"), path.join(q.root, ".vscode", "mcp.json"));
    const before = fs.readFileSync(path.join(outside.root, "claude.json"), "utf8");
    try {
      expect(() => installMcp(q.root, ["project"], { home: home.root })).toThrow(expect.objectContaining({ code: "PATH_UNSAFE" }));
      expect(() => installHooks(q.root, { home: home.root })).toThrow(expect.objectContaining({ code: "PATH_UNSAFE" }));
      expect(fs.readFileSync(path.join(outside.root, "claude.json"), "utf8")).toBe(before);
      // A link that stays inside the project is the project's own file: written through, still a link.
      expect(installMcp(q.root, ["vscode"], { home: home.root })[0].action).toBe("added");
      expect(fs.lstatSync(path.join(q.root, ".vscode", "mcp.json")).isSymbolicLink()).toBe(true);
      expect(read(path.join(q.root, "vendor/mcp.json")).servers.codemem).toBeDefined();
    } finally {
      q.cleanup();
      outside.cleanup();
    }
  });

  it("refuses a broken host file and leaves it as it was", () => {
    const bad = path.join(p.root, ".mcp.json");
    fs.writeFileSync(bad, "{ not json");
    expect(() => installMcp(p.root, ["project"], { home: home.root })).toThrow(/not valid JSON/);
    expect(fs.readFileSync(bad, "utf8")).toBe("{ not json");
  });
});
