#!/usr/bin/env node
/**
 * Claude Code PostToolUse hook (docs/hooks.md). Reads the payload on stdin; for a bulky Bash
 * output prints `hookSpecificOutput.updatedToolOutput` in Bash's own output shape, the only
 * delivery the host applies to a built-in tool; saves the original for `codemem last`; hands the
 * daemon notification to a detached child. Any failure: exit 0, no output.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { toProjectPath } from "../shared/paths.js";
import { compressFast } from "./compress-lines.js";
import { answerAndExit, armHardCap, findProjectRoot, readStdin } from "./hook-io.js";
import { notifyDetached } from "./notify.js";
import { saveLast } from "./store-last.js";

/** The whole hook finishes within this, even when the daemon hangs. */
export const HOOK_CAP_MS = 900;
/** The daemon notification (in the detached child) gives up after this. */
export const NOTIFY_TIMEOUT_MS = 300;
// Larger outputs are left alone: reading and scanning them would cost more time than the cap allows.
const MAX_INPUT_CHARS = 4_000_000;

interface PostToolUsePayload {
  hook_event_name?: string;
  session_id?: string;
  cwd?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_response?: unknown;
}

export interface HookDecision {
  /** The JSON to print, or undefined for no output. */
  out?: unknown;
  root: string;
  tool: string;
  files: string[];
  original_file?: string;
  replacement?: string;
}

const PATH_IN_TEXT = /(?:^|[\s'"`(=])((?:\.{1,2}\/|\/)?[\w@+-][\w@.+-]*(?:\/[\w@.+-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?=[:\s'"`),]|$)/gm;

/** Project-relative files a tool call touched: its path arguments, then paths its output names. */
export function touchedFiles(root: string, cwd: string, input: Record<string, unknown> | undefined, outputText: string): string[] {
  const found = new Set<string>();
  const add = (p: unknown) => {
    if (typeof p !== "string" || p === "" || found.size >= 50) return;
    const abs = path.resolve(cwd, p);
    if (abs.includes(`${path.sep}node_modules${path.sep}`)) return;
    try {
      if (!fs.statSync(abs).isFile()) return;
      found.add(toProjectPath(root, abs));
    } catch {
      // Missing or outside the project.
    }
  };
  for (const key of ["file_path", "path", "notebook_path"]) add(input?.[key]);
  let candidates = 0;
  for (const m of outputText.slice(0, 200_000).matchAll(PATH_IN_TEXT)) {
    if (++candidates > 300 || found.size >= 50) break;
    add(m[1]);
  }
  return [...found];
}

function bashText(resp: Record<string, unknown>): string | null {
  if (typeof resp.stdout !== "string") return null;
  // Output over ~30 KB reaches hooks cut short; the host keeps the whole of it in this file.
  if (typeof resp.persistedOutputPath === "string") {
    try {
      return fs.readFileSync(resp.persistedOutputPath, "utf8");
    } catch {
      return null; // only the start of the output: nothing safe to compress
    }
  }
  const stderr = typeof resp.stderr === "string" ? resp.stderr : "";
  return stderr ? `${resp.stdout}\n${stderr}` : resp.stdout;
}

/** What the hook does with one payload (pure apart from saving the original). */
export function decide(payload: PostToolUsePayload, now = new Date()): HookDecision | null {
  if (payload.hook_event_name && payload.hook_event_name !== "PostToolUse") return null;
  const cwd = typeof payload.cwd === "string" && payload.cwd ? payload.cwd : process.cwd();
  const root = findProjectRoot(cwd);
  if (!root) return null; // no project: nowhere to keep the original, so nothing is dropped
  const tool = typeof payload.tool_name === "string" ? payload.tool_name : "";
  const resp = payload.tool_response;
  const decision: HookDecision = { root, tool, files: [] };

  let text = "";
  if (tool === "Bash" && resp && typeof resp === "object" && !Array.isArray(resp)) {
    const r = resp as Record<string, unknown>;
    text = bashText(r) ?? "";
    if (text && text.length <= MAX_INPUT_CHARS && r.isImage !== true) {
      const c = compressFast(text, { kind: "auto" });
      if (c.kept === "compressed") {
        const original_file = saveLast(root, tool, text, now);
        const rel = path.relative(root, original_file).split(path.sep).join("/");
        const shown = c.text.split("\n").length;
        const total = text.split("\n").length;
        const replacement = `${c.text}\n[codemem: ${shown} of ${total} lines shown, ${c.dropped_lines} noise lines dropped; full output: ${rel} (\`codemem last\`)]`;
        if (replacement.length < text.length) {
          const { persistedOutputPath: _p, persistedOutputSize: _s, ...rest } = r;
          // Bash's own shape: a bare string is rejected and the original output used instead.
          decision.out = {
            hookSpecificOutput: {
              hookEventName: "PostToolUse",
              updatedToolOutput: { ...rest, stdout: replacement, stderr: "" },
            },
          };
          decision.original_file = original_file;
          decision.replacement = replacement;
        }
      }
    }
  }
  decision.files = touchedFiles(root, cwd, payload.tool_input, text);
  return decision;
}

async function main(): Promise<void> {
  armHardCap(HOOK_CAP_MS);
  const raw = await readStdin(HOOK_CAP_MS / 2);
  const payload = JSON.parse(raw) as PostToolUsePayload;
  const d = decide(payload);
  if (!d) answerAndExit(undefined);
  try {
    notifyDetached({
      root: d.root,
      tool: d.tool,
      files: d.files,
      original_file: d.original_file,
      replacement: d.replacement,
      delivery: d.out ? "updatedToolOutput" : "none",
      timeoutMs: NOTIFY_TIMEOUT_MS,
    });
  } catch {
    // No notification is better than a failed tool call.
  }
  answerAndExit(d.out);
}

if (process.argv[1] && pathToFileURL(fs.realpathSync(process.argv[1])).href === import.meta.url) {
  main().catch(() => process.exit(0));
}
