import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CodememError } from "../shared/errors.js";

export const BLOCK_START = "# >>> codemem >>>";
export const BLOCK_END = "# <<< codemem <<<";

export interface GitHookChange {
  hook_file: string;
  /** "installed" | "updated" | "unchanged" | "removed" | "absent" */
  action: string;
  created_file: boolean;
}

function git(root: string, args: string[]): string {
  return execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
}

/** The directory git runs hooks from: core.hooksPath when set (husky), else .git/hooks. */
export function gitHooksDir(root: string): string {
  let dir: string;
  try {
    dir = git(root, ["rev-parse", "--git-path", "hooks"]);
  } catch {
    throw new CodememError("INVALID_ARGUMENT", `${root} is not a git repository; run \`git init\` there first or pass the repository root.`, { value: root });
  }
  let hooksPath = "";
  try {
    hooksPath = git(root, ["config", "core.hooksPath"]);
  } catch {
    // Unset: exit status 1.
  }
  if (hooksPath) dir = hooksPath.replace(/^~(?=\/)/, process.env.HOME ?? "~");
  const abs = path.resolve(root, dir);
  // husky 9 points core.hooksPath at .husky/_ (regenerated on install) and runs .husky/<hook>.
  if (path.basename(abs) === "_" && path.basename(path.dirname(abs)) === ".husky") return path.dirname(abs);
  return abs;
}

function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function defaultScript(): string {
  return path.join(path.dirname(fileURLToPath(import.meta.url)), "git-post-commit.js");
}

/** The marked block: runs in the background with output discarded, so the commit is never delayed. */
export function gitBlock(script = defaultScript()): string {
  return [
    BLOCK_START,
    "# Hands the commit's files to the codemem daemon for re-indexing, in the background.",
    `${shQuote(process.execPath)} ${shQuote(script)} "$(git rev-parse --show-toplevel)" </dev/null >/dev/null 2>&1 &`,
    BLOCK_END,
  ].join("\n");
}

const BLOCK_RE = new RegExp(`${BLOCK_START.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}[\\s\\S]*?${BLOCK_END.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\n?`);

/** Adds the codemem block to the post-commit hook (creating it if absent); running twice changes nothing. */
export function installGitHook(root: string, opts: { script?: string } = {}): GitHookChange {
  const dir = gitHooksDir(root);
  const file = path.join(dir, "post-commit");
  const block = gitBlock(opts.script);
  let text: string | null = null;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    // Absent: created below.
  }
  if (text === null) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, `#!/bin/sh\n${block}\n`, { mode: 0o755 });
    fs.chmodSync(file, 0o755);
    return { hook_file: file, action: "installed", created_file: true };
  }
  const shebang = /^#!(.*)$/m.exec(text.split("\n", 1)[0] ?? "")?.[1] ?? "";
  if (shebang && !/\b(sh|bash|dash|zsh|ksh)\b/.test(shebang)) {
    throw new CodememError("INVALID_ARGUMENT", `${file} is not a shell script (#!${shebang.trim()}); add this line to it yourself: node ${defaultScript()} "$(git rev-parse --show-toplevel)" &`, { value: file });
  }
  let next: string;
  let action: string;
  const m = BLOCK_RE.exec(text);
  if (m) {
    const current = m[0].trim();
    if (current === block) {
      action = "unchanged";
      next = text;
    } else {
      next = text.replace(current, block);
      action = "updated";
    }
  } else {
    action = "installed";
    // A top-level `exit` would end the script before an appended block: then it goes first.
    if (/^\s*exit\b/m.test(text) && text.startsWith("#!")) {
      const nl = text.indexOf("\n");
      next = nl < 0 ? `${text}\n${block}\n` : `${text.slice(0, nl + 1)}${block}\n${text.slice(nl + 1)}`;
    } else {
      next = `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}${block}\n`;
    }
  }
  if (next !== text) fs.writeFileSync(file, next);
  const mode = fs.statSync(file).mode;
  if ((mode & 0o111) !== 0o111) fs.chmodSync(file, mode | 0o755);
  return { hook_file: file, action, created_file: false };
}

/** Removes only the codemem block; a hook left with nothing but its shebang is deleted. */
export function uninstallGitHook(root: string): GitHookChange {
  const file = path.join(gitHooksDir(root), "post-commit");
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return { hook_file: file, action: "absent", created_file: false };
  }
  const m = BLOCK_RE.exec(text);
  if (!m) return { hook_file: file, action: "absent", created_file: false };
  const next = text.slice(0, m.index) + text.slice(m.index + m[0].length);
  if (/^(#![^\n]*)?\s*$/.test(next)) fs.rmSync(file, { force: true });
  else fs.writeFileSync(file, next);
  return { hook_file: file, action: "removed", created_file: false };
}
