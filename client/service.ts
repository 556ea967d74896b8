import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CodememError } from "../shared/errors.js";
import { checkOwnState, ensureOwnDir } from "../shared/own-files.js";
import { resolveProjectRoot } from "../shared/paths.js";
import { DAEMON_ENV, DAEMON_MAIN, DAEMON_NODE_FLAGS } from "./rpc.js";
import { daemonFiles, projectHash } from "./socket-path.js";

/** Templates shipped in the package's scripts/ folder. */
const TEMPLATE_DIR = fileURLToPath(new URL("../../scripts/", import.meta.url));

export type ServiceManager = "systemd" | "launchd";

export interface ServiceOptions {
  /** Home directory to install under; defaults to os.homedir() (which honours HOME). */
  home?: string;
  /** Platform override (tests); defaults to process.platform. */
  platform?: NodeJS.Platform;
  /** false: only write (or remove) the file, never run systemctl/launchctl. */
  activate?: boolean;
}

export interface ServiceCommand {
  cmd: string;
  ok: boolean;
  output: string;
}

export interface ServiceResult {
  manager: ServiceManager;
  /** Service name: the systemd unit or the launchd label. */
  name: string;
  file: string;
  /** install: the file was written; uninstall: the file was removed. */
  file_changed: boolean;
  /** install: enabled and started; uninstall: stopped and disabled. */
  activated: boolean;
  /** Why activation did not happen, and what to do instead. */
  reason?: string;
  commands: ServiceCommand[];
}

function managerFor(platform: NodeJS.Platform): ServiceManager {
  if (platform === "linux") return "systemd";
  if (platform === "darwin") return "launchd";
  throw new CodememError("INVALID_ARGUMENT", `Login services are supported on Linux (systemd) and macOS (launchd), not ${platform}; run \`codemem daemon start\` instead.`);
}

function serviceLocation(root: string, manager: ServiceManager, home: string): { name: string; file: string } {
  const hash = projectHash(root);
  if (manager === "systemd") {
    const name = `codemem-${hash}.service`;
    return { name, file: path.join(home, ".config", "systemd", "user", name) };
  }
  const name = `dev.codemem.${hash}`;
  return { name, file: path.join(home, "Library", "LaunchAgents", `${name}.plist`) };
}

function checkPath(p: string, what: string): void {
  if (/["\\\n\r]/.test(p)) {
    throw new CodememError("INVALID_ARGUMENT", `${what} ${JSON.stringify(p)} contains a quote, backslash or newline, which a service file cannot carry; move the project or run \`codemem daemon start\` instead.`);
  }
}

/** Renders the systemd unit for a project from scripts/codemem.service. */
export function renderSystemdUnit(root: string): string {
  const files = daemonFiles(root);
  const values: Record<string, string> = { NODE: process.execPath, MAIN: DAEMON_MAIN, PROJECT: root, LOG: files.log };
  for (const [k, v] of Object.entries(values)) checkPath(v, k === "PROJECT" ? "The project path" : `The ${k.toLowerCase()} path`);
  const tpl = fs.readFileSync(path.join(TEMPLATE_DIR, "codemem.service"), "utf8");
  // systemd expands %-specifiers in most settings: a literal % is written %%.
  // Each flag brings its own separator: no flags leave no double space in ExecStart.
  const flags = DAEMON_NODE_FLAGS.map((f) => ` "${f}"`).join("");
  const env = Object.entries(DAEMON_ENV).map(([k, v]) => `${k}=${v}`).join(" ");
  return tpl.replace(" @FLAGS@", flags).replace("@ENV@", env).replace(/@(NODE|MAIN|PROJECT|LOG)@/g, (_m, k: string) => values[k].replace(/%/g, "%%"));
}

/** Renders the launchd agent for a project from scripts/codemem.plist. */
export function renderLaunchdPlist(root: string, label: string): string {
  const files = daemonFiles(root);
  const values: Record<string, string> = { LABEL: label, NODE: process.execPath, MAIN: DAEMON_MAIN, PROJECT: root, LOG: files.log };
  const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  const tpl = fs.readFileSync(path.join(TEMPLATE_DIR, "codemem.plist"), "utf8");
  // One line per flag, none (not a blank line) without flags.
  const flags = DAEMON_NODE_FLAGS.map((f) => `    <string>${xml(f)}</string>\n`).join("");
  return tpl.replace("    <string>@FLAGS@</string>\n", flags).replace(/@(LABEL|NODE|MAIN|PROJECT|LOG)@/g, (_m, k: string) => xml(values[k]));
}

function run(cmd: string, args: string[]): ServiceCommand {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 15_000 });
  const output = (r.error ? r.error.message : `${r.stdout ?? ""}${r.stderr ?? ""}`).trim();
  return { cmd: [cmd, ...args].join(" "), ok: !r.error && r.status === 0, output };
}

/** Runs commands in order, stopping at the first failure. */
function runAll(list: [string, string[]][], into: ServiceCommand[]): ServiceCommand | undefined {
  for (const [cmd, args] of list) {
    const r = run(cmd, args);
    into.push(r);
    if (!r.ok) return r;
  }
  return undefined;
}

function firstLine(s: string): string {
  return s.split("\n").find((l) => l.trim()) ?? "no output";
}

/**
 * Installs the project's daemon as a login service: a systemd user unit (enabled and started
 * when a user systemd is reachable) or a launchd agent (loaded). Reports what was done.
 */
export function installService(root: string, opts: ServiceOptions = {}): ServiceResult {
  const realRoot = resolveProjectRoot(root);
  const manager = managerFor(opts.platform ?? process.platform);
  const home = opts.home ?? os.homedir();
  const { name, file } = serviceLocation(realRoot, manager, home);
  const text = manager === "systemd" ? renderSystemdUnit(realRoot) : renderLaunchdPlist(realRoot, name);
  checkOwnState(realRoot);
  ensureOwnDir(daemonFiles(realRoot).stateDir); // the log file's directory
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  const result: ServiceResult = { manager, name, file, file_changed: true, activated: false, commands: [] };
  if (opts.activate === false) {
    result.reason = "activation skipped on request (activate: false)";
    return result;
  }
  if (manager === "systemd") {
    const failed = runAll([["systemctl", ["--user", "daemon-reload"]], ["systemctl", ["--user", "enable", "--now", name]]], result.commands);
    if (failed) {
      result.reason = `${failed.cmd} failed: ${firstLine(failed.output)}. No user systemd is reachable here (common in containers and SSH sessions without lingering); the unit file is written but not enabled. Enable it later with \`systemctl --user daemon-reload && systemctl --user enable --now ${name}\`, or use \`codemem daemon start\`.`;
    } else result.activated = true;
  } else {
    // Reloading an already loaded agent: unload first, ignoring "not loaded".
    result.commands.push(run("launchctl", ["unload", file]));
    const failed = runAll([["launchctl", ["load", "-w", file]]], result.commands);
    if (failed) result.reason = `${failed.cmd} failed: ${firstLine(failed.output)}; the agent file is written but not loaded.`;
    else result.activated = true;
  }
  return result;
}

/** Stops and removes the project's login service; reports what was done. */
export function uninstallService(root: string, opts: ServiceOptions = {}): ServiceResult {
  const realRoot = resolveProjectRoot(root);
  const manager = managerFor(opts.platform ?? process.platform);
  const home = opts.home ?? os.homedir();
  const { name, file } = serviceLocation(realRoot, manager, home);
  const result: ServiceResult = { manager, name, file, file_changed: false, activated: false, commands: [] };
  const exists = fs.existsSync(file);
  if (opts.activate !== false && exists) {
    if (manager === "systemd") {
      const failed = runAll([["systemctl", ["--user", "disable", "--now", name]]], result.commands);
      if (failed) result.reason = `${failed.cmd} failed: ${firstLine(failed.output)}; the unit file is removed anyway.`;
      else result.activated = true;
    } else {
      const failed = runAll([["launchctl", ["unload", "-w", file]]], result.commands);
      if (failed) result.reason = `${failed.cmd} failed: ${firstLine(failed.output)}; the agent file is removed anyway.`;
      else result.activated = true;
    }
  }
  if (exists) {
    fs.rmSync(file, { force: true });
    result.file_changed = true;
    if (manager === "systemd" && opts.activate !== false) result.commands.push(run("systemctl", ["--user", "daemon-reload"]));
  } else result.reason ??= `no service file at ${file}; nothing to remove`;
  return result;
}
