import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CodememError } from "../shared/errors.js";
import { writeFileAtomic } from "../shared/paths.js";

/** Trailing shell comment on every command we install: how uninstall recognises ours. */
export const HOOK_MARKER = "# codemem-hook";

// Tools whose output or arguments are worth a hook: Bash output is compressed; the others name
// the files the synapse store learns from. Read output is never replaced (docs/hooks.md).
export const POST_TOOL_USE_MATCHER = "Bash|Read|Edit|MultiEdit|Write|NotebookEdit|Grep|Glob";

interface HookCommand {
  type: string;
  command?: string;
  timeout?: number;
  [k: string]: unknown;
}
interface MatcherGroup {
  matcher?: string;
  hooks?: HookCommand[];
  [k: string]: unknown;
}
type Settings = Record<string, unknown> & { hooks?: Record<string, MatcherGroup[] | unknown> };

export interface HooksChange {
  settings_file: string;
  added: string[];
  updated: string[];
  removed: string[];
  changed: boolean;
  /** What happened to the settings file: created, updated, deleted (nothing but our hooks was in it) or unchanged. */
  file: "created" | "updated" | "deleted" | "unchanged";
}

/** The codemem package directory holding dist/ (this module lives in dist/hooks/). */
function defaultHome(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function ourCommand(home: string, script: string): string {
  return `${shQuote(process.execPath)} ${shQuote(path.join(home, "dist", "hooks", script))} ${HOOK_MARKER}`;
}

function isOurs(h: unknown): boolean {
  const cmd = (h as HookCommand | null)?.command;
  return typeof cmd === "string" && (cmd.includes(HOOK_MARKER) || /codemem.*[\\/]dist[\\/]hooks[\\/](post-tool-use|session-start)\.js/.test(cmd));
}

function settingsPath(root: string): string {
  return path.join(root, ".claude", "settings.json");
}

function readSettings(file: string): Settings {
  let raw: string;
  try {
    raw = fs.readFileSync(file, "utf8");
  } catch {
    return {};
  }
  if (raw.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new CodememError("CONFIG_INVALID", `${file} is not valid JSON (${(err as Error).message}); fix or remove it, then install the hooks again.`, { value: file });
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new CodememError("CONFIG_INVALID", `${file} must hold a JSON object; fix it, then install the hooks again.`, { value: file });
  }
  const s = parsed as Settings;
  if (s.hooks !== undefined && (typeof s.hooks !== "object" || s.hooks === null || Array.isArray(s.hooks))) {
    throw new CodememError("CONFIG_INVALID", `"hooks" in ${file} must be an object of event names; fix it, then install the hooks again.`, { value: file });
  }
  return s;
}

/** The project's settings file, through a link only while it stays in the project (a clone can ship one to ~/.bashrc). */
function writeSettings(root: string, file: string, s: Settings): void {
  writeFileAtomic(file, `${JSON.stringify(s, null, 2)}\n`, { within: root });
}

function groupsOf(s: Settings, event: string): MatcherGroup[] {
  const g = s.hooks?.[event];
  return Array.isArray(g) ? (g as MatcherGroup[]) : [];
}

/** Merges the codemem hooks into `<root>/.claude/settings.json`, keeping every other key and hook; idempotent. */
export function installHooks(root: string, opts: { home?: string } = {}): HooksChange {
  const home = opts.home ?? defaultHome();
  const file = settingsPath(root);
  const before = readSettings(file);
  const s = JSON.parse(JSON.stringify(before)) as Settings;
  const existed = fs.existsSync(file);
  const change: HooksChange = { settings_file: file, added: [], updated: [], removed: [], changed: false, file: "unchanged" };
  const wanted: { event: string; group: MatcherGroup }[] = [
    { event: "PostToolUse", group: { matcher: POST_TOOL_USE_MATCHER, hooks: [{ type: "command", command: ourCommand(home, "post-tool-use.js"), timeout: 5 }] } },
    { event: "SessionStart", group: { hooks: [{ type: "command", command: ourCommand(home, "session-start.js"), timeout: 10 }] } },
  ];
  s.hooks = (s.hooks ?? {}) as Record<string, unknown>;
  for (const { event, group } of wanted) {
    const groups = groupsOf(s, event);
    const at = groups.findIndex((g) => Array.isArray(g?.hooks) && g.hooks.some(isOurs));
    if (at < 0) {
      s.hooks[event] = [...groups, group];
      change.added.push(event);
    } else if (JSON.stringify(groups[at]) !== JSON.stringify(group)) {
      const others = (groups[at].hooks ?? []).filter((h) => !isOurs(h));
      if (others.length === 0) groups[at] = group;
      else {
        // Someone put other commands in our group: leave them there, ours moves to its own group.
        groups[at] = { ...groups[at], hooks: others };
        groups.push(group);
      }
      s.hooks[event] = groups;
      change.updated.push(event);
    }
  }
  change.changed = JSON.stringify(s) !== JSON.stringify(before);
  if (change.changed) {
    writeSettings(root, file, s);
    change.file = existed ? "updated" : "created";
  }
  return change;
}

/** Removes only the codemem hooks from `<root>/.claude/settings.json`, dropping what that leaves empty. */
export function uninstallHooks(root: string): HooksChange {
  const file = settingsPath(root);
  const change: HooksChange = { settings_file: file, added: [], updated: [], removed: [], changed: false, file: "unchanged" };
  if (!fs.existsSync(file)) return change;
  const before = readSettings(file);
  const s = JSON.parse(JSON.stringify(before)) as Settings;
  if (!s.hooks) return change;
  for (const event of Object.keys(s.hooks)) {
    const groups = s.hooks[event];
    if (!Array.isArray(groups)) continue;
    let touched = false;
    const kept: MatcherGroup[] = [];
    for (const g of groups as MatcherGroup[]) {
      if (!Array.isArray(g?.hooks) || !g.hooks.some(isOurs)) {
        kept.push(g);
        continue;
      }
      touched = true;
      const others = g.hooks.filter((h) => !isOurs(h));
      if (others.length > 0) kept.push({ ...g, hooks: others });
    }
    if (!touched) continue;
    change.removed.push(event);
    if (kept.length > 0) s.hooks[event] = kept;
    else delete s.hooks[event];
  }
  if (Object.keys(s.hooks).length === 0) delete s.hooks;
  change.changed = JSON.stringify(s) !== JSON.stringify(before);
  if (!change.changed) return change;
  // A settings file that held only our hooks goes with them (it was left as `{}`).
  if (Object.keys(s).length === 0) {
    fs.rmSync(file);
    change.file = "deleted";
  } else {
    writeSettings(root, file, s);
    change.file = "updated";
  }
  return change;
}
