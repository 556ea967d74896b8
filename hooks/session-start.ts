#!/usr/bin/env node
/**
 * Claude Code SessionStart hook: one decay tick, then the wake-up context handed to the assistant
 * as `hookSpecificOutput.additionalContext`. The daemon may be started, but the whole hook stays
 * within SESSION_CAP_MS; a daemon that is not ready by then serves the next session. Exit 0 always.
 */
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { answerAndExit, armHardCap, findProjectRoot, readStdin } from "./hook-io.js";
import { callQuiet, recordEvent } from "./notify.js";

/** The whole hook's budget: a cold daemon start may take longer, and then this session goes without. */
export const SESSION_CAP_MS = 2500;
const DECAY_TIMEOUT_MS = 800;

async function main(): Promise<void> {
  const started = Date.now();
  armHardCap(SESSION_CAP_MS);
  const raw = await readStdin(300);
  const payload = (raw.trim() ? JSON.parse(raw) : {}) as { cwd?: string; hook_event_name?: string; source?: string };
  if (payload.hook_event_name && payload.hook_event_name !== "SessionStart") answerAndExit(undefined);
  const root = findProjectRoot(payload.cwd || process.cwd());
  if (!root) answerAndExit(undefined);
  const left = () => Math.max(50, SESSION_CAP_MS - 150 - (Date.now() - started));

  // ticks: 0 = decay by elapsed wall-clock time only, so memory lifetime does not depend on how often sessions start.
  await callQuiet(root, "synapse_decay", { project_path: root, ticks: 0 }, { timeoutMs: Math.min(DECAY_TIMEOUT_MS, left()), autostart: true });
  const wake = (await callQuiet(root, "wakeup", { project_path: root }, { timeoutMs: left(), autostart: true })) as { context?: unknown; tokens?: unknown } | undefined;
  const context = typeof wake?.context === "string" && wake.context.trim() ? wake.context : undefined;
  await recordEvent(root, {
    hook: "session_start",
    source_kind: payload.source,
    daemon: wake !== undefined,
    context_tokens: typeof wake?.tokens === "number" ? wake.tokens : 0,
    ms: Date.now() - started,
  });
  answerAndExit(context ? { hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: context } } : undefined);
}

if (process.argv[1] && pathToFileURL(fs.realpathSync(process.argv[1])).href === import.meta.url) {
  main().catch(() => process.exit(0));
}
