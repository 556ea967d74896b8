import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installMcp, MCP_MAIN } from "../../dist/client/install-mcp.js";
import { makeProject } from "../helpers.js";

const p = makeProject({ ".mcp.json": JSON.stringify({ mcpServers: { other: { command: "/usr/bin/other", args: [] } }, extra: 1 }) });
const home = makeProject({});
afterAll(() => {
  p.cleanup();
  home.cleanup();
});
const read = (f: string) => JSON.parse(fs.readFileSync(f, "utf8"));

describe("install-mcp", () => {
  it("merges into host files without clobbering other servers, idempotently", () => {
    const r = installMcp(p.root, ["project", "vscode", "cursor", "claude-user"], { home: home.root });
    expect(r.map((x) => x.action)).toEqual(["added", "added", "added", "added"]);
    const project = read(path.join(p.root, ".mcp.json"));
    expect(project.mcpServers.other.command).toBe("/usr/bin/other");
    expect(project.extra).toBe(1);
    expect(project.mcpServers.codemem).toEqual({ command: process.execPath, args: [MCP_MAIN, p.root], env: {} });
    expect(path.isAbsolute(project.mcpServers.codemem.command)).toBe(true);
    const vscode = read(path.join(p.root, ".vscode/mcp.json"));
    expect(vscode.servers.codemem.env).toEqual({ CODEMEM_PROJECT: "${workspaceFolder}" });
    expect(read(path.join(home.root, ".claude.json")).projects[p.root].mcpServers.codemem.args).toEqual([MCP_MAIN, p.root]);
    const again = installMcp(p.root, ["project", "vscode", "cursor", "claude-user"], { home: home.root });
    expect(again.map((x) => x.action)).toEqual(["unchanged", "unchanged", "unchanged", "unchanged"]);
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

  it("refuses a broken host file and leaves it as it was", () => {
    const bad = path.join(p.root, ".mcp.json");
    fs.writeFileSync(bad, "{ not json");
    expect(() => installMcp(p.root, ["project"], { home: home.root })).toThrow(/not valid JSON/);
    expect(fs.readFileSync(bad, "utf8")).toBe("{ not json");
  });
});
