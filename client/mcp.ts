#!/usr/bin/env node
import path from "node:path";
import { parseArgs } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { resolveProcessSettings } from "../shared/config.js";
import { asCodememError, CodememError } from "../shared/errors.js";
import { configureLog, log } from "../shared/log.js";
import { TOOLS, type Operation } from "../shared/operations.js";
import { resolveProjectRoot } from "../shared/paths.js";
import { callTool } from "./call.js";
import { toolList } from "./tool-list.js";
import { callDaemon } from "./rpc.js";

/** Tools whose answer is a context for the assistant to read: their text content is the context itself. */
const CONTEXT_TOOLS = new Set(["query", "wakeup", "recursive_query"]);

export interface ShimOptions {
  project?: string;
  backend?: string;
  dbUrl?: string;
  port?: number;
}

export function parseShimArgs(argv: string[]): ShimOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "project-path": { type: "string" },
      backend: { type: "string" },
      "db-url": { type: "string" },
      "rbac-enabled": { type: "boolean" },
      "rate-limit-per-minute": { type: "string" },
      port: { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
    },
  });
  const project = (values["project-path"] as string | undefined) ?? positionals[0] ?? resolveProcessSettings().project;
  if (project !== undefined && !path.isAbsolute(project)) {
    throw new CodememError("PATH_RELATIVE", `project path "${project}" is relative; hosts must pass an absolute path (e.g. "${path.resolve(project)}").`);
  }
  for (const flag of ["port", "tls-cert", "tls-key", "rbac-enabled", "rate-limit-per-minute"] as const) {
    if (values[flag] !== undefined) {
      throw new CodememError("INVALID_ARGUMENT", `--${flag} belongs to the HTTP server mode, which is not available in this version; run codemem-mcp over stdio without it.`);
    }
  }
  const backend = values.backend as string | undefined;
  if ((backend && backend !== "local") || values["db-url"]) {
    throw new CodememError("INVALID_ARGUMENT", `backend "${backend ?? "relational"}" is not available in this version; only "local" is.`);
  }
  return { project: project ? resolveProjectRoot(project) : undefined, backend };
}

export function createServer(): McpServer {
  const server = new McpServer({ name: "codemem", version: "0.1.0" }, { capabilities: { tools: {} } });
  for (const op of TOOLS as readonly Operation[]) {
    server.registerTool(
      op.tool,
      {
        description: op.description,
        inputSchema: op.input,
        outputSchema: op.output,
        annotations: { readOnlyHint: op.readOnly, destructiveHint: false, idempotentHint: op.readOnly, openWorldHint: false },
      },
      async (args: Record<string, unknown>) => {
        try {
          const root = resolveProjectRoot(args.project_path as string);
          const result = (await callTool(root, op.name, { ...args, project_path: root }, "mcp")) as Record<string, unknown>;
          const text = CONTEXT_TOOLS.has(op.name) ? String(result.context) : JSON.stringify(result);
          return { content: [{ type: "text" as const, text }], structuredContent: result };
        } catch (err) {
          const e = asCodememError(err);
          return { isError: true, content: [{ type: "text" as const, text: `${e.code}: ${e.message}` }] };
        }
      },
    );
  }
  // The SDK's own list renders verbose JSON Schema; serve the same shapes compacted (same validation).
  const tools = toolList(TOOLS as readonly Operation[]);
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  return server;
}

async function main(): Promise<void> {
  configureLog({ debug: resolveProcessSettings().debug, component: "mcp" });
  let opts: ShimOptions;
  try {
    opts = parseShimArgs(process.argv.slice(2));
  } catch (err) {
    const e = asCodememError(err);
    process.stderr.write(`codemem-mcp: ${e.code}: ${e.message}\n`);
    process.exit(2);
  }
  const server = createServer();
  await server.connect(new StdioServerTransport());
  log.info("codemem-mcp ready", { project: opts.project });
  // Warm the project's daemon in the background so the first tool call is fast.
  if (opts.project) callDaemon(opts.project, "ping", {}, { source: "mcp" }).catch((err) => log.warn("daemon warm-up failed", { error: (err as Error).message }));
}

main().catch((err) => {
  log.error("codemem-mcp failed", { error: (err as Error).message });
  process.exit(1);
});
