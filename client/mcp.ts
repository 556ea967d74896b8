#!/usr/bin/env node
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { redactDbUrl, resolveConfig, resolveProcessSettings } from "../shared/config.js";
import { asCodememError, CodememError } from "../shared/errors.js";
import { configureLog, log } from "../shared/log.js";
import { checkExpanded, enclosingProject, resolveProjectRoot } from "../shared/paths.js";
import { createServer, type Served } from "./mcp-server.js";
import { callDaemon } from "./rpc.js";
import type { HttpServerOptions } from "./http.js";

export interface ShimOptions {
  /** The project served: the directory given, or the nearest one above it holding an index. */
  project?: string;
  /** --allow-any-project: calls may name directories outside the served project. */
  anyProject?: boolean;
  backend?: string;
  dbUrl?: string;
  /** HTTP server mode (section 4.3): set only with --port. */
  http?: Omit<HttpServerOptions, "project" | "auditMaxBytes" | "served">;
}

const HTTP_ONLY_FLAGS = ["host", "tls-cert", "tls-key", "rbac-enabled", "rate-limit-per-minute", "trusted-proxy", "allow-from", "directory-file", "socket-group", "proxy-secret-file", "allow-host"] as const;

function intFlag(v: string, flag: string, max: number): number {
  const n = Number(v);
  if (v.trim() === "" || !Number.isInteger(n) || n < 0 || n > max) {
    throw new CodememError("INVALID_ARGUMENT", `--${flag} must be an integer from 0 to ${max}; got "${v}".`);
  }
  return n;
}

/** --socket, --socket-group, --proxy-secret-file, --allow-host: absolute paths, set ones only. */
function httpListenFlags(values: Record<string, unknown>): Partial<NonNullable<ShimOptions["http"]>> {
  const out: Partial<NonNullable<ShimOptions["http"]>> = {};
  if (values.socket !== undefined) out.socket = path.resolve(values.socket as string);
  if (values["socket-group"] !== undefined) out.socketGroup = values["socket-group"] as string;
  if (values["proxy-secret-file"] !== undefined) out.proxySecretFile = path.resolve(values["proxy-secret-file"] as string);
  if (values["allow-host"] !== undefined) out.allowHosts = values["allow-host"] as string[];
  return out;
}

export function parseShimArgs(argv: string[]): ShimOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        "project-path": { type: "string" },
        backend: { type: "string" },
        "db-url": { type: "string" },
        "allow-any-project": { type: "boolean" },
        "rbac-enabled": { type: "boolean" },
        "rate-limit-per-minute": { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "tls-cert": { type: "string" },
        "tls-key": { type: "string" },
        "trusted-proxy": { type: "string", multiple: true },
        "allow-from": { type: "string", multiple: true },
        "directory-file": { type: "string" },
        socket: { type: "string" },
        "socket-group": { type: "string" },
        "proxy-secret-file": { type: "string" },
        "allow-host": { type: "string", multiple: true },
      },
    });
  } catch (err) {
    // Node's own messages name the option and the fix ("use --rate-limit-per-minute=-XYZ").
    throw new CodememError("INVALID_ARGUMENT", (err as Error).message.replace(/\s+/g, " ").trim());
  }
  const { values, positionals } = parsed;
  const project = (values["project-path"] as string | undefined) ?? positionals[0] ?? resolveProcessSettings().project;
  if (project !== undefined) checkExpanded(project, "the project path (argument, --project-path, CODEMEM_PROJECT or CLAUDE_PROJECT_DIR)");
  if (project !== undefined && !path.isAbsolute(project)) {
    throw new CodememError("PATH_RELATIVE", `project path "${project}" is relative; hosts must pass an absolute path (e.g. "${path.resolve(project)}").`);
  }
  let httpOpts: ShimOptions["http"];
  if (values.port !== undefined || values.socket !== undefined) {
    const env = resolveProcessSettings().server;
    const rate = values["rate-limit-per-minute"] as string | undefined;
    const proxies = values["trusted-proxy"] as string[] | undefined;
    const allowFrom = values["allow-from"] as string[] | undefined;
    const directoryFile = (values["directory-file"] as string | undefined) ?? env.directoryFile;
    httpOpts = {
      port: values.port !== undefined ? intFlag(values.port as string, "port", 65535) : undefined,
      host: values.host as string | undefined,
      ...httpListenFlags(values),
      tlsCert: values["tls-cert"] as string | undefined,
      tlsKey: values["tls-key"] as string | undefined,
      rbac: (values["rbac-enabled"] as boolean | undefined) ?? env.rbacEnabled ?? false,
      rateLimitPerMinute: rate !== undefined ? intFlag(rate, "rate-limit-per-minute", 1_000_000) : env.rateLimitPerMinute,
      // No proxy is trusted unless named (loopback was: any local process could claim any identity).
      trustedProxies: proxies?.length ? proxies : (env.trustedProxies ?? []),
      allowFrom: allowFrom?.length ? allowFrom : env.allowFrom,
      directoryFile: directoryFile ? path.resolve(directoryFile) : undefined,
    };
    if (!project) throw new CodememError("INVALID_ARGUMENT", "the HTTP server serves one project: pass its absolute path (positional, --project-path or CODEMEM_PROJECT).");
    if (values["allow-any-project"]) throw new CodememError("INVALID_ARGUMENT", "--allow-any-project applies to the stdio server; the HTTP server serves its one project only.");
  } else {
    for (const flag of HTTP_ONLY_FLAGS) {
      if (values[flag] !== undefined) {
        throw new CodememError("INVALID_ARGUMENT", `--${flag} belongs to the HTTP server mode; add --port N (or --socket PATH), or run codemem-mcp over stdio without it.`);
      }
    }
  }
  // Hosts start servers in whatever directory the user opened: a subdirectory is served by the
  // project enclosing it (as the CLI answers), never given a second index and daemon of its own.
  const given = project ? resolveProjectRoot(project) : undefined;
  const root = given ? (enclosingProject(given) ?? given) : undefined;
  if ((values.backend !== undefined || values["db-url"] !== undefined) && !root) {
    throw new CodememError("INVALID_ARGUMENT", "--backend and --db-url apply to one project: pass its absolute path (positional, --project-path or CODEMEM_PROJECT).");
  }
  // For a server of one project, CODEMEM_BACKEND / CODEMEM_DB_URL (a host configuration's `env`) stand for the flags.
  const proc = resolveProcessSettings();
  const backend = (values.backend as string | undefined) ?? (root ? proc.backend : undefined);
  const dbUrl = (values["db-url"] as string | undefined) ?? (root ? proc.dbUrl : undefined);
  // Validated now (names, URL without password); the daemon serves the backend the project was built on.
  const store = root && (backend !== undefined || dbUrl !== undefined) ? resolveConfig(root, { backend, dbUrl }).store : undefined;
  const anyProject = !!root && !httpOpts && ((values["allow-any-project"] as boolean | undefined) ?? proc.allowAnyProject);
  return { project: root, ...(anyProject ? { anyProject } : {}), ...(store ? { backend: store.backend, dbUrl: store.dbUrl } : {}), ...(httpOpts ? { http: httpOpts } : {}) };
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
  if (opts.backend) await checkServedBackend(opts.project!, opts.backend, opts.dbUrl);
  if (opts.http) {
    // Loaded only in server mode: the stdio shim stays as light as before.
    const { startHttpServer } = await import("./http.js");
    const srv = await startHttpServer({ project: opts.project!, ...opts.http, served: servedBy(opts) });
    // One line on stdout with the address, for supervisors and tests that bind port 0.
    process.stdout.write(JSON.stringify({ url: srv.url }) + "\n");
    const stop = () => void srv.close().then(() => process.exit(0));
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    callDaemon(opts.project!, "ping", {}, { source: "http" }).catch((err) => log.warn("daemon warm-up failed", { error: (err as Error).message }));
    return;
  }
  const server = createServer(servedBy(opts));
  await server.connect(new StdioServerTransport());
  log.info("codemem-mcp ready", { project: opts.project });
  // Warm the project's daemon in the background so the first tool call is fast.
  if (opts.project) callDaemon(opts.project, "ping", {}, { source: "mcp" }).catch((err) => log.warn("daemon warm-up failed", { error: (err as Error).message }));
}

function servedBy(opts: ShimOptions): Served | undefined {
  return opts.project ? { project: opts.project, backend: opts.backend, dbUrl: opts.dbUrl, anyProject: opts.anyProject } : undefined;
}

/**
 * The daemon serves the backend the project was last built on; a server started for another one
 * would answer from the wrong index, so it refuses to start and says how to move the project.
 */
async function checkServedBackend(project: string, backend: string, dbUrl: string | undefined): Promise<void> {
  let served: { backend: string; index_path: string };
  try {
    served = (await callDaemon(project, "stats", { project_path: project }, { source: "mcp" })) as typeof served;
  } catch (err) {
    log.info("no index to serve yet; a codemem_build naming no backend builds on the one this server was started for", { error: asCodememError(err).message, backend });
    return;
  }
  const wantUrl = dbUrl ? redactDbUrl(dbUrl) : undefined;
  if (served.backend !== backend || (wantUrl && !served.index_path.startsWith(wantUrl))) {
    process.stderr.write(
      `codemem-mcp: CONFIG_INVALID: the project's index is on ${served.backend} (${served.index_path}), not ${backend}${wantUrl ? ` at ${wantUrl}` : ""}; ` +
        `move it with \`codemem build ${project} --backend ${backend}${dbUrl ? ` --db-url ${dbUrl}` : ""}\`, or drop --backend/--db-url.\n`,
    );
    process.exit(2);
  }
}

/** True when this module is the process's entry point (also through an npm bin symlink), not imported by client/http.ts. */
function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  main().catch((err) => {
    const e = asCodememError(err);
    log.error("codemem-mcp failed", { code: e.code, error: e.message });
    process.exit(1);
  });
}
