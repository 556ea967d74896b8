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
export const HOSTS: readonly Host[] = ["project", "vscode", "cursor", "claude-user"];

export interface McpInstallResult {
  host: Host;
  file: string;
  /** removed: our entry left the file, which stays; deleted: the file held only ours and is gone. */
  action: "added" | "updated" | "unchanged" | "removed" | "deleted" | "absent";
  /** The entry names this machine's node and codemem paths in a file meant to be committed. */
  machine_paths?: boolean;
}

/** Files a project commits (teammates read them); the others are the user's own. */
const SHARED: ReadonlySet<Host> = new Set(["project", "vscode", "cursor"]);

/**
 * How a host starts the shim: `codemem-mcp` when that name on PATH is this installation (a
 * teammate's checkout finds their own), else this machine's node and shim paths.
 */
export function shimCommand(env: NodeJS.ProcessEnv = process.env): { command: string; args: string[]; portable: boolean } {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return undefined;
    }
  };
  const mine = real(MCP_MAIN);
  for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    if (mine && real(path.join(dir, "codemem-mcp")) === mine) return { command: "codemem-mcp", args: [], portable: true };
  }
  return { command: process.execPath, args: [MCP_MAIN], portable: false };
}

/**
 * Host configuration files, the key each keeps its servers under, and our entry. Project files
 * carry no project path: Claude Code gives the servers it starts CLAUDE_PROJECT_DIR, VS Code and
 * Cursor expand `${workspaceFolder}`. Only the user-level Claude file names the project.
 */
function target(host: Host, root: string, home: string, shim = shimCommand()): { file: string; key: "mcpServers" | "servers"; entry: Record<string, unknown> } {
  const base = { command: shim.command };
  const workspace = { CODEMEM_PROJECT: "${workspaceFolder}" };
  switch (host) {
    case "project": // Claude Code and other hosts reading a project .mcp.json
      return { file: path.join(root, ".mcp.json"), key: "mcpServers", entry: { ...base, args: shim.args, env: {} } };
    case "vscode": // VS Code: `servers`, project from the workspace folder
      return { file: path.join(root, ".vscode", "mcp.json"), key: "servers", entry: { type: "stdio", ...base, args: shim.args, env: workspace } };
    case "cursor": // Cursor's project file (its ~/.cursor/mcp.json is one entry for every project)
      return { file: path.join(root, ".cursor", "mcp.json"), key: "mcpServers", entry: { ...base, args: shim.args, env: workspace } };
    case "claude-user": // Claude Code's user-level file, per-project section
      return { file: path.join(home, ".claude.json"), key: "mcpServers", entry: { type: "stdio", command: process.execPath, args: [MCP_MAIN, root], env: {} } };
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

/** The object holding the host's servers (created when `create`), checked to be an object. */
function serversOf(host: Host, doc: Record<string, any>, root: string, file: string, key: string, create: boolean): Record<string, unknown> | undefined {
  // Claude Code keeps per-project servers under projects[<root>] in ~/.claude.json.
  const holder: Record<string, any> | undefined = host === "claude-user" ? (create ? ((doc.projects ??= {})[root] ??= {}) : doc.projects?.[root]) : doc;
  if (!holder) return undefined;
  if (create) holder[key] ??= {};
  const servers = holder[key];
  if (servers === undefined) return undefined;
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new CodememError("CONFIG_INVALID", `${file}: "${key}" is not an object; fix it by hand, nothing was changed.`, { file });
  }
  return servers;
}

export function checkHosts(hosts: string[]): Host[] {
  for (const h of hosts) if (!(HOSTS as readonly string[]).includes(h)) throw new CodememError("INVALID_ARGUMENT", `unknown host "${h}"; use ${HOSTS.join(", ")}.`, { value: h });
  return hosts as Host[];
}

/**
 * A host file, written through a link (dotfiles kept in a repository) except where a project's own
 * file leads out of the project: a clone can ship `.mcp.json -> ~/.claude.json` (PATH_UNSAFE).
 */
function writeHostFile(host: Host, root: string, file: string, doc: unknown): void {
  writeFileAtomic(file, JSON.stringify(doc, null, 2) + "\n", SHARED.has(host) ? { within: root } : {});
}

/** Adds or updates our server entry in each host file, leaving every other server and key as it was. */
export function installMcp(root: string, hosts: Host[], opts: { home?: string; env?: NodeJS.ProcessEnv } = {}): McpInstallResult[] {
  const home = opts.home ?? os.homedir();
  const shim = shimCommand(opts.env);
  return hosts.map((host) => {
    const t = target(host, root, home, shim);
    const doc = readJson(t.file);
    const servers = serversOf(host, doc, root, t.file, t.key, true)!;
    const before = JSON.stringify(servers[SERVER_NAME]);
    servers[SERVER_NAME] = t.entry;
    const action = before === undefined ? "added" : before === JSON.stringify(t.entry) ? "unchanged" : "updated";
    if (action !== "unchanged") writeHostFile(host, root, t.file, doc);
    return { host, file: t.file, action, ...(SHARED.has(host) && !shim.portable ? { machine_paths: true } : {}) };
  });
}

/**
 * Removes our server entry from each host file, then the holders install left empty: Claude's
 * `projects[<root>]` when it held nothing but our `mcpServers` (Claude Code's own entries carry
 * more keys and stay), a host file's bare servers key. A file left holding nothing is deleted.
 */
export function uninstallMcp(root: string, hosts: Host[], opts: { home?: string } = {}): McpInstallResult[] {
  const home = opts.home ?? os.homedir();
  return hosts.map((host) => {
    const t = target(host, root, home);
    const doc = readJson(t.file);
    const servers = serversOf(host, doc, root, t.file, t.key, false);
    if (!servers || !(SERVER_NAME in servers)) return { host, file: t.file, action: "absent" };
    delete servers[SERVER_NAME];
    pruneEmptied(host, doc, root, t.key);
    if (Object.keys(doc).length > 0) {
      writeHostFile(host, root, t.file, doc);
      return { host, file: t.file, action: "removed" };
    }
    fs.rmSync(t.file);
    const dir = path.dirname(t.file);
    if (dir !== root && dir !== home && fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
    return { host, file: t.file, action: "deleted" };
  });
}

const isEmptyObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/** Deletes the holders of our entry that install created and that hold nothing now. */
function pruneEmptied(host: Host, doc: Record<string, any>, root: string, key: string): void {
  const holder: Record<string, any> = host === "claude-user" ? doc.projects[root] : doc;
  if (Object.keys(holder).length === 1 && isEmptyObject(holder[key])) delete holder[key];
  if (host === "claude-user" && isEmptyObject(holder)) {
    delete doc.projects[root];
    if (isEmptyObject(doc.projects)) delete doc.projects;
  }
}
