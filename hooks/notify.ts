/**
 * The hooks' only way to the daemon and the event stream. Everything here fails soft: a hook
 * must never fail or stall the assistant because codemem is missing, stopped or hung.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureOwnDir } from "../shared/own-files.js";

export type HookEventName = "post_tool_use" | "session_start" | "git_commit";

/** Input of the daemon's `hook_event` operation. */
export interface HookEventInput {
  project_path: string;
  event: HookEventName;
  files: string[];
  tool?: string;
  tokens_saved?: number;
}

export interface CallQuietOptions {
  /** Give up after this long (the daemon call keeps no hook waiting longer). */
  timeoutMs: number;
  /** Start the daemon when none runs (session start and git hooks only). */
  autostart?: boolean;
}

type RpcModule = { callDaemon(root: string, op: string, input: unknown, opts?: { timeoutMs?: number; autostart?: boolean; source?: string }): Promise<unknown> };
type EventsModule = { appendEvent(root: string, input: Record<string, unknown> & { source: "hook"; kind: string }): unknown };

// Dynamic imports: the hook runs even when the client or event modules are absent or broken.
async function load<T>(rel: string): Promise<T | null> {
  try {
    return (await import(new URL(rel, import.meta.url).href)) as T;
  } catch {
    return null;
  }
}

/** One daemon call with a hard deadline; undefined on any failure or timeout. */
export async function callQuiet(root: string, op: string, input: unknown, opts: CallQuietOptions): Promise<unknown> {
  const deadline = Date.now() + opts.timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), opts.timeoutMs);
    timer.unref();
  });
  const call = (async () => {
    const rpc = await load<RpcModule>("../client/rpc.js");
    if (!rpc) return undefined;
    const left = Math.max(1, deadline - Date.now());
    return rpc.callDaemon(root, op, input, { timeoutMs: left, autostart: opts.autostart ?? false, source: "hook" });
  })().catch(() => undefined);
  try {
    return await Promise.race([call, timeout]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Appends one hook event to `.codemem/events.jsonl`; silently nothing when unavailable. */
export async function recordEvent(root: string, fields: Record<string, unknown>): Promise<void> {
  const events = await load<EventsModule>("../shared/events.js");
  try {
    events?.appendEvent(root, { source: "hook", kind: "hook", ...fields });
  } catch {
    // Activity logging never fails a hook.
  }
}

/** Tells the daemon what a hook saw (reinforcing the synapses of the files) and logs the event. */
export async function notifyHookEvent(input: HookEventInput, opts: CallQuietOptions & { extra?: Record<string, unknown> }): Promise<boolean> {
  const t0 = Date.now();
  const reply = await callQuiet(input.project_path, "hook_event", input, opts);
  await recordEvent(input.project_path, {
    hook: input.event,
    tool: input.tool,
    files: input.files.slice(0, 50),
    tokens_saved: input.tokens_saved ?? 0,
    daemon: reply !== undefined,
    ms: Date.now() - t0,
    ...opts.extra,
  });
  return reply !== undefined;
}

/** A post-tool-use job finished after the hook has exited (see runJob). */
export interface NotifyJob {
  root: string;
  tool: string;
  files: string[];
  /** The saved original, when the output was compressed. */
  original_file?: string;
  /** The text the host was handed instead (the compressed output), when any. */
  replacement?: string;
  /** How the compressed text reached the model: only "updatedToolOutput" replaces, i.e. saves. */
  delivery: "updatedToolOutput" | "none";
  timeoutMs: number;
}

const SELF = fileURLToPath(import.meta.url);

/**
 * Hands a job to a detached child and returns at once: counting tokens needs o200k (~300 ms to
 * load cold) and the daemon may be slow, and neither may hold up the assistant.
 */
export function notifyDetached(job: NotifyJob): void {
  const dir = path.join(job.root, ".codemem", "hooks", "jobs");
  ensureOwnDir(dir);
  const file = path.join(dir, `${Date.now()}-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify(job), { flag: "wx" }); // O_EXCL: never through a link
  const child = spawn(process.execPath, [SELF, file], { detached: true, stdio: "ignore" });
  child.on("error", () => undefined);
  child.unref();
}

/** Runs a job in the detached child: token accounting, daemon notification, event. */
export async function runJob(file: string): Promise<void> {
  let job: NotifyJob;
  try {
    job = JSON.parse(fs.readFileSync(file, "utf8")) as NotifyJob;
  } finally {
    fs.rmSync(file, { force: true });
  }
  let original_tokens: number | undefined;
  let tokens: number | undefined;
  let tokens_saved = 0;
  if (job.original_file && job.replacement !== undefined) {
    const { countTokens } = await import("../shared/tokens.js");
    original_tokens = countTokens(fs.readFileSync(job.original_file, "utf8"));
    tokens = countTokens(job.replacement);
    // A saving only counts where the host replaces the output; additionalContext would add, not save.
    if (job.delivery === "updatedToolOutput") tokens_saved = Math.max(0, original_tokens - tokens);
  }
  await notifyHookEvent(
    { project_path: job.root, event: "post_tool_use", files: job.files, tool: job.tool, tokens_saved },
    {
      timeoutMs: job.timeoutMs,
      autostart: false,
      extra: { delivery: job.delivery, ...(original_tokens !== undefined ? { original_tokens, tokens } : {}), ...(job.original_file ? { original: path.basename(job.original_file) } : {}) },
    },
  );
}

if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url && process.argv[2]) {
  runJob(process.argv[2])
    .catch(() => undefined)
    .finally(() => process.exit(0));
}
