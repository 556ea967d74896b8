import fs from "node:fs";
import { filesOf, nodesOf } from "../shared/activity.js";
import { resolveProcessSettings } from "../shared/config.js";
import { asCodememError, CodememError } from "../shared/errors.js";
import { appendEvent } from "../shared/events.js";
import { hasIndex, stateDirs } from "../shared/paths.js";
import { callDaemon } from "./rpc.js";

/** Tools that only read the code index. */
const ANSWERS_FROM_INDEX = new Set(["codemem_query", "codemem_search", "codemem_wakeup", "codemem_skeleton", "codemem_recursive_query", "codemem_stats", "codemem_benchmark"]);

/** The text a tool call asked (a query, a question, a file), for the activity stream; cut to 200 characters. */
function questionOf(input: Record<string, unknown>): { text?: string } {
  const t = input.question ?? input.query ?? input.file_path;
  if (typeof t !== "string" || !t) return {};
  const one = t.replace(/\s+/g, " ").trim();
  return { text: one.length > 200 ? `${one.slice(0, 199)}…` : one };
}

/**
 * A tool call from a client process: forwarded to the daemon, then recorded in the activity stream by
 * this process (so CODEMEM_EVENT_LOG=0 here silences exactly this process's lines).
 */
export async function callTool(root: string, op: string, input: Record<string, unknown>, source: "cli" | "mcp"): Promise<unknown> {
  const started = performance.now();
  const tool = op.startsWith("codemem_") ? op : `codemem_${op}`; // the declarations (zod) stay unloaded in the CLI
  // Answered here: no daemon is started, and nothing is written, in a directory never built. A
  // project with settings (codemem.toml, CODEMEM_BACKEND) may read a shared index built elsewhere.
  if (ANSWERS_FROM_INDEX.has(tool) && !hasIndex(root) && !fs.existsSync(stateDirs(root).configFile) && !resolveProcessSettings().backend) {
    throw new CodememError("INDEX_MISSING", `${root} has no index yet; build it first (\`codemem build ${root}\` or the codemem_build tool).`, { value: root });
  }
  try {
    const result = await callDaemon(root, op, input, { source });
    appendEvent(root, { source, kind: "tool_call", tool, ...questionOf(input), nodes: nodesOf(result).slice(0, 50), files: filesOf(result).slice(0, 50), ms: Math.round(performance.now() - started), ok: true });
    return result;
  } catch (err) {
    appendEvent(root, { source, kind: "tool_call", tool, ...questionOf(input), ok: false, error: asCodememError(err).code, ms: Math.round(performance.now() - started) });
    throw err;
  }
}
