import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CodememError } from "../shared/errors.js";
import { writeFileAtomic } from "../shared/paths.js";

/** Absolute path of the MCP shim in this installation (run with the same node that runs the CLI). */
export const MCP_MAIN = fileURLToPath(new URL("./mcp.js", import.meta.url));
export const SERVER_NAME = "codemem";

export type Host = "project" | "vscode" | "cursor" | "claude-user";

export interface McpInstallResult {
  host: Host;
  file: string;
  action: "added" | "updated" | "unchanged";
}

/** Host configuration files and the key each one keeps its servers under. */
function target(host: Host, root: string, home: string): { file: string; key: "mcpServers" | "servers"; entry: Record<string, unknown> } {
  const base = { command: process.execPath };
  switch (host) {
    case "project": // Claude Code and other hosts reading a project .mcp.json
      return { file: path.join(root, ".mcp.json"), key: "mcpServers", entry: { ...base, args: [MCP_MAIN, root], env: {} } };
    case "vscode": // VS Code: `servers`, project from the workspace folder
      return { file: path.join(root, ".vscode", "mcp.json"), key: "servers", entry: { type: "stdio", ...base, args: [MCP_MAIN], env: { CODEMEM_PROJECT: "${workspaceFolder}" } } };
    case "cursor": // Cursor's user-level file
      return { file: path.join(home, ".cursor", "mcp.json"), key: "mcpServers", entry: { ...base, args: [MCP_MAIN, root], env: {} } };
    case "claude-user": // Claude Code's user-level file, per-project section
      return { file: path.join(home, ".claude.json"), key: "mcpServers", entry: { type: "stdio", ...base, args: [MCP_MAIN, root], env: {} } };
  }
}

function readJson(file: string): Record<string, any> {
  if (!fs.existsSync(file)) return {};
  try {
    const v = JSON.parse(fs.readFileSync(file, "utf8"));
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not a JSON object");
    return v;
  } catch (err) {
    throw new CodememError("CONFIG_INVALID", `${file} is not valid JSON (${(err as Error).message}); fix or remove it, nothing was changed.`, { file });
  }
}

/** Adds or updates our server entry in each host file, leaving every other server and key as it was. */
export function installMcp(root: string, hosts: Host[], opts: { home?: string } = {}): McpInstallResult[] {
  const home = opts.home ?? os.homedir();
  return hosts.map((host) => {
    const t = target(host, root, home);
    const doc = readJson(t.file);
    // Claude Code keeps per-project servers under projects[<root>] in ~/.claude.json.
    const holder: Record<string, any> = host === "claude-user" ? ((doc.projects ??= {})[root] ??= {}) : doc;
    const servers = (holder[t.key] ??= {});
    if (typeof servers !== "object" || Array.isArray(servers)) {
      throw new CodememError("CONFIG_INVALID", `${t.file}: "${t.key}" is not an object; fix it by hand, nothing was changed.`);
    }
    const before = JSON.stringify(servers[SERVER_NAME]);
    servers[SERVER_NAME] = t.entry;
    const action = before === undefined ? "added" : before === JSON.stringify(t.entry) ? "unchanged" : "updated";
    if (action !== "unchanged") writeFileAtomic(t.file, JSON.stringify(doc, null, 2) + "\n");
    return { host, file: t.file, action };
  });
}
