import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { redactDbUrl } from "../shared/config.js";
import { asCodememError, CodememError } from "../shared/errors.js";
import { TOOLS, type Operation } from "../shared/operations.js";
import { enclosingProject, isWithin, resolveProjectRoot } from "../shared/paths.js";
import { callTool } from "./call.js";
import { toolList } from "./tool-list.js";

/*
 * The MCP server itself, the same for both transports: stdio (client/mcp.ts, the `codemem-mcp`
 * entry) and HTTP (client/http.ts). Each tool is one operation of shared/operations.ts, called on the
 * project's daemon.
 */

/**
 * Tools whose answer is a text for the assistant to read, and the field holding it. They return
 * that text alone, without structured content: hosts (Claude Code, VS Code) hand the model
 * `structuredContent` as JSON in place of the text when both are present, so an answer's `tokens`
 * would not be what the model reads (a query of 782 tokens arrived as ~2,400).
 */
export const TEXT_ANSWERS: Record<string, string> = { query: "context", wakeup: "context", recursive_query: "context", skeleton: "outline" };

/** The project and backend a server was started for (`--backend`, `--db-url`). */
export interface Served {
  project: string;
  backend?: string;
  dbUrl?: string;
  /** The user allowed calls naming other directories (--allow-any-project, CODEMEM_ALLOW_ANY_PROJECT). */
  anyProject?: boolean;
}

/**
 * The project a call is about: the nearest directory at or above the one named that holds an index
 * (as the CLI), so a subdirectory never gets an index of its own; `codemem_build` too. A server
 * started for a project answers for it and the directories inside it only: a call naming another
 * directory (which the assistant may have read in untrusted text) would index it, create its
 * `.codemem/` and return its code. A server started for no project answers for any.
 */
export function projectOf(tool: string, given: string | undefined, served?: Served): string {
  if (given === undefined && served) return served.project;
  const dir = resolveProjectRoot(given);
  const nearest = enclosingProject(dir);
  if (served && isWithin(served.project, dir)) return nearest && isWithin(served.project, nearest) ? nearest : served.project;
  if (served && !served.anyProject) {
    throw new CodememError(
      "PROJECT_NOT_SERVED",
      `${tool}: project_path "${given}" is outside ${served.project}, the project this server was started for, and is not served. Leave project_path out to use that project; to work on ${dir}, open it in your host (its server starts for it), or add --allow-any-project to codemem-mcp's args in your host's configuration.`,
      { value: given, served: served.project },
    );
  }
  return nearest ?? dir;
}

export function createServer(served?: Served): McpServer {
  // A server started for a project answers for it when a call names none.
  const instructions = served ? `codemem answers for ${served.project}${served.anyProject ? "" : " only"}; project_path may be omitted.` : undefined;
  const server = new McpServer({ name: "codemem", version: "0.1.0" }, { capabilities: { tools: {} }, ...(instructions ? { instructions } : {}) });
  for (const op of TOOLS as readonly Operation[]) {
    const textField = TEXT_ANSWERS[op.name];
    const input = served ? op.input.partial({ project_path: true } as Record<string, true>) : op.input;
    server.registerTool(
      op.tool,
      {
        description: op.description,
        inputSchema: input,
        ...(textField ? {} : { outputSchema: op.output }),
        annotations: { readOnlyHint: op.readOnly, destructiveHint: false, idempotentHint: op.readOnly, openWorldHint: false },
      },
      async (args: Record<string, unknown>) => {
        try {
          const root = projectOf(op.tool, args.project_path as string | undefined, served);
          const input: Record<string, unknown> = { ...args, project_path: root };
          // A database URL in a tool call is the assistant's choice (maybe steered by what it read),
          // not the user's: it would decide where the user's database password goes.
          if (args.db_url !== undefined && !(root === served?.project && args.db_url === served.dbUrl)) {
            throw new CodememError(
              "CONFIG_UNTRUSTED",
              `${op.tool}: db_url ${redactDbUrl(String(args.db_url))} comes from the assistant, not from you, and would decide where your database password is sent. Start codemem-mcp with --db-url (or CODEMEM_DB_URL in its environment), or run \`codemem build ${root} --db-url …\` yourself.`,
            );
          }
          // A build naming no backend goes to the one this server was started for: the first build
          // of a project served with --backend postgres must not land on the local default.
          if (op.name === "build" && served?.backend && root === served.project && args.backend === undefined && args.db_url === undefined) {
            input.backend = served.backend;
            if (served.dbUrl) input.db_url = served.dbUrl;
          }
          const result = (await callTool(root, op.name, input, "mcp")) as Record<string, unknown>;
          if (textField) return { content: [{ type: "text" as const, text: String(result[textField]) }] };
          return { content: [{ type: "text" as const, text: JSON.stringify(result) }], structuredContent: result };
        } catch (err) {
          const e = asCodememError(err);
          return { isError: true, content: [{ type: "text" as const, text: `${e.code}: ${e.message}` }] };
        }
      },
    );
  }
  // The SDK's own list renders verbose JSON Schema; serve the same shapes compacted (same validation).
  const tools = toolList(TOOLS as readonly Operation[], { projectDefault: !!served });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  return server;
}
