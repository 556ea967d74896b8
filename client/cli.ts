#!/usr/bin/env node
import path from "node:path";
import { Command, Option, type ParseOptionsResult } from "commander";
import { resolveConfig, resolveProcessSettings, trustProject } from "../shared/config.js";
import { asCodememError, CodememError, exitCodeFor } from "../shared/errors.js";
import { configureLog } from "../shared/log.js";
import { enclosingProject, resolveProjectRoot, toProjectPath } from "../shared/paths.js";
import { questionsOf } from "../shared/benchmark-questions.js";
import * as f from "./format.js";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { installGitHook, uninstallGitHook } from "../hooks/git-hook.js";
import { installHooks, uninstallHooks } from "../hooks/install.js";
import { readLast } from "../hooks/store-last.js";
import { callTool } from "./call.js";
import { checkHosts, installMcp, uninstallMcp } from "./install-mcp.js";
import { listDaemons } from "./daemon-registry.js";
import { callDaemon, cancelBuild, connectedTo, daemonStatus, pingDaemon, stopDaemon } from "./rpc.js";
import { installService, uninstallService } from "./service.js";

/** The codemem installation (the folder holding dist/), for hook commands. */
const HOME = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

function printJson(v: unknown): void {
  process.stdout.write(JSON.stringify(v, null, 2) + "\n");
}

/**
 * The project a command is about: `dir` (default: the current directory) or, when that holds no
 * index, the nearest directory above it that does. `build` walks up only without a path: given one,
 * it indexes that directory (a package of a monorepo may have an index of its own).
 */
function rootOf(dir: string | undefined, opts: { literal?: boolean } = {}): string {
  const given = resolveProjectRoot(path.resolve(dir ?? process.cwd()));
  return opts.literal && dir !== undefined ? given : (enclosingProject(given) ?? given);
}

/** What uninstall-mcp did to each host file, said as it happened. */
const UNINSTALLED = {
  removed: (file: string) => `removed codemem's entry from ${file}`,
  deleted: (file: string) => `deleted ${file} (it held only codemem's entry)`,
  absent: (file: string) => `no codemem entry in ${file}`,
};

/** The one place CLI output and failures are rendered; exit codes follow the error family. */
async function run(root: string, op: string, input: Record<string, unknown>, json: boolean, human: (r: any) => string, beforePrint?: () => void): Promise<void> {
  const result = await callTool(root, op, { project_path: root, ...input }, "cli").finally(beforePrint);
  process.stdout.write((json ? JSON.stringify(result, null, 2) : human(result)) + "\n");
}

/** The questions of a file the user named on the command line (any path they can read; the daemon reads project files only). */
function readQuestions(file: string) {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(abs, "utf8");
  } catch (err) {
    throw new CodememError("INVALID_ARGUMENT", `--questions ${abs} cannot be read (${(err as NodeJS.ErrnoException).code}); check the path.`, { value: abs });
  }
  return questionsOf(text, `--questions ${abs}`);
}

function isInside(root: string, abs: string): boolean {
  try {
    return toProjectPath(root, abs) !== "";
  } catch {
    return false; // PATH_OUTSIDE_PROJECT
  }
}

/**
 * A file named on the command line: relative to the current directory when that names a file
 * inside the project, else relative to the project, as a tool call reads it (`codemem skeleton
 * proj src/a.py` run from proj's parent).
 */
function fileArg(root: string, file: string): string {
  if (path.isAbsolute(file)) return file;
  const fromCwd = path.resolve(file);
  const inside = isInside(root, fromCwd);
  if (inside && fs.existsSync(fromCwd)) return fromCwd;
  const fromRoot = path.join(root, file);
  // Neither exists: the error names the path the user most likely meant.
  return fs.existsSync(fromRoot) || !inside ? fromRoot : fromCwd;
}

/** Text with a space cannot be an option's name: "--train compression level" is a question. */
const isText = (arg: string) => /^-[^\s=]*\s/.test(arg);

/**
 * A command whose last argument is free text (a question, a query). commander reads any argument
 * that starts with "-" as an option; here one that holds a space before any "=" is text. Unknown
 * real options (no space) are still refused.
 */
class TextCommand extends Command {
  override parseOptions(argv: string[]): ParseOptionsResult {
    const r = super.parseOptions(argv);
    // After the first unknown option commander classes every later argument as unknown; take the
    // text and the plain words back, leaving the real unknown options to be refused.
    if (!r.unknown.some(isText)) return r;
    const back = (a: string) => isText(a) || !a.startsWith("-");
    return { operands: [...r.operands, ...r.unknown.filter(back)], unknown: r.unknown.filter((a) => !back(a)) };
  }
}

const textHelp = (name: string) => `
Text that starts with "-" is still text: put it after "--" (options go before it),
  codemem ${name} . --json -- "--train compression level"
or quote it whole: an argument holding a space is never read as an option.`;

/** A subcommand taking free text (see TextCommand), with the inherited settings `command()` gives. */
function textCommand(parent: Command, name: string): Command {
  const c = new TextCommand(name).copyInheritedSettings(parent).addHelpText("after", textHelp(name));
  parent.addCommand(c);
  return c;
}

function int(name: string) {
  return (v: string) => {
    const x = Number(v);
    if (!Number.isInteger(x) || x < 1) throw new CodememError("INVALID_ARGUMENT", `${name} must be a positive integer; got "${v}".`);
    return x;
  };
}

/**
 * While a build runs: the first Ctrl-C asks the daemon to cancel it (the build's reply then says
 * BUILD_CANCELLED and the CLI exits 130), a second one exits at once.
 */
function cancelOnInterrupt(root: string): { off: () => void } {
  let asked = false;
  const onSigint = () => {
    if (asked) process.exit(130);
    asked = true;
    // Still reaching the daemon (starting it, replacing one of an older installation): the build was never sent.
    if (!connectedTo(root)) {
      process.stderr.write("\r\x1b[Kcodemem: BUILD_CANCELLED: cancelled before the build reached the daemon; the index is as it was.\n");
      process.exit(130);
    }
    process.stderr.write("\r\x1b[Kcancelling the build (Ctrl-C again to leave it running in the daemon)…\n");
    cancelBuild(root).then(
      (cancelled) => void (cancelled || process.stderr.write("the build is already writing the index; it finishes (Ctrl-C again to leave it to the daemon)\n")),
      () => process.exit(130),
    );
  };
  process.on("SIGINT", onSigint);
  return { off: () => process.off("SIGINT", onSigint) };
}

/** A progress bar on stderr while the daemon builds: polls the daemon's status for the build phase. */
function showProgress(root: string): () => void {
  let stopped = false;
  const started = Date.now();
  const tick = async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, 200));
      if (stopped) break;
      const st = (await daemonStatus(root).catch(() => undefined)) as { build?: { phase: string; done: number; total: number } | null } | undefined;
      const b = st?.build;
      if (!b || stopped) continue;
      const width = 28;
      const frac = b.total > 0 ? Math.min(1, b.done / b.total) : 0;
      const bar = "█".repeat(Math.round(frac * width)).padEnd(width, "░");
      process.stderr.write(`\r${b.phase.padEnd(8)} ${bar} ${b.total > 0 ? `${b.done}/${b.total}` : ""}  ${((Date.now() - started) / 1000).toFixed(1)}s\x1b[K`);
    }
  };
  void tick();
  return () => {
    stopped = true;
    process.stderr.write("\r\x1b[K");
  };
}

export function program(): Command {
  const p = new Command("codemem")
    .description("Local code memory for AI coding assistants: index a project, ask it questions.")
    .version("0.1.0")
    .showHelpAfterError()
    // Set before the commands are added: subcommands copy it (they exited 1 on usage errors by themselves).
    .exitOverride();
  const json = new Option("--json", "print machine-readable JSON");
  const PATH_HELP = "project root or a directory inside it (default: the current directory)";

  p.command("build")
    .description("Build or update the index (incremental by content hash)")
    .argument("[path]", "project root (default: the current directory)")
    .option("--force", "rebuild everything")
    .option("--optimize", "recluster communities, merge FTS segments, ANALYZE and VACUUM after building")
    .option("--batch-size <n>", "nodes per embedding batch (default 1000, or [build] batch_size)", int("--batch-size"))
    .option("--backend <value>", "storage backend: local (SQLite, default), postgres (PostgreSQL + pgvector) or lancedb (embedded files); later commands follow it")
    .option("--db-url <url>", "postgres URL without password (the password comes from CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE)")
    .option("--exclude-secrets", "leave likely secrets out of the index (kept by later builds)")
    .option("--no-exclude-secrets", "index secrets again (undoes an earlier --exclude-secrets)")
    .option("--history <n>", "re-learn co-change from the last n git commits (default: new commits, in the background)", int("--history"))
    .addOption(json)
    .action(async (dir, o) => {
      const root = rootOf(dir, { literal: true });
      // Validated here too, so a bad value fails before a daemon starts.
      if (o.backend !== undefined || o.dbUrl !== undefined) resolveConfig(root, { backend: o.backend, dbUrl: o.dbUrl });
      const stop = !o.json && process.stderr.isTTY ? showProgress(root) : undefined;
      // Ctrl-C stops the daemon's build too (it would go on to the end), before it writes anything.
      const interrupted = cancelOnInterrupt(root);
      await run(root, "build", { force: !!o.force, optimize: !!o.optimize, ...(o.batchSize ? { batch_size: o.batchSize } : {}), ...(o.excludeSecrets !== undefined ? { exclude_secrets: o.excludeSecrets } : {}), ...(o.backend !== undefined ? { backend: o.backend } : {}), ...(o.dbUrl !== undefined ? { db_url: o.dbUrl } : {}), ...(o.history !== undefined ? { history: o.history } : {}) }, !!o.json, f.formatBuild, () => {
        interrupted.off();
        stop?.();
      });
    });

  p.command("stats").description("Index statistics and the synapse store location").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => run(rootOf(dir), "stats", {}, !!o.json, f.formatStats));

  textCommand(p, "query").description("Answer a question with a small cited context").argument("<path>").argument("<question>", 'the question, in words (one starting with "-": after "--")')
    .option("--budget <tokens>", "total token budget, 200-20000 (default 800, or [query] budget)", int("--budget")).addOption(json)
    .action((dir, question, o) => run(rootOf(dir), "query", { question, ...(o.budget ? { budget: o.budget } : {}) }, !!o.json, f.formatAnswer));

  textCommand(p, "search").description("Hybrid search for symbols and files").argument("<path>").argument("<query>", 'names or words to look for (starting with "-": after "--")')
    .option("--limit <n>", "number of results, 1-100 (default 10)", int("--limit"))
    .addOption(new Option("--group-by <unit>", "node (default) or file: one result per file, `--limit` distinct files").choices(["node", "file"])).addOption(json)
    .action((dir, query, o) => run(rootOf(dir), "search", { query, ...(o.limit ? { limit: o.limit } : {}), ...(o.groupBy ? { group_by: o.groupBy } : {}) }, !!o.json, f.formatSearch));

  p.command("wakeup").description("Session-start context for the project").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => run(rootOf(dir), "wakeup", {}, !!o.json, f.formatAnswer));

  p.command("skeleton").description("Outline of one file from the graph").argument("<path>")
    .argument("<file>", "the file: relative to the current directory, or else to the project (as a tool call reads it)").addOption(json)
    .action((dir, file, o) => {
      const root = rootOf(dir);
      return run(root, "skeleton", { file_path: fileArg(root, file) }, !!o.json, f.formatSkeleton);
    });

  textCommand(p, "recursive-query").description("Decompose a complex question and merge the answers").argument("<path>").argument("<question>", 'the question, in words (one starting with "-": after "--")')
    .option("--budget <tokens>", "total token budget", int("--budget")).addOption(json)
    .action((dir, question, o) => run(rootOf(dir), "recursive_query", { question, ...(o.budget ? { budget: o.budget } : {}) }, !!o.json, f.formatAnswer));

  p.command("benchmark").description("Measure retrieval: tokens, reduction, latency, recall and MRR").argument("[path]", PATH_HELP)
    .option("--questions <file>", "JSON file of {question, gold_files}").option("--limit <n>", "number of questions (default: all)", int("--limit")).addOption(json)
    .action((dir, o) => run(rootOf(dir), "benchmark", { ...(o.questions ? { questions: readQuestions(o.questions) } : {}), ...(o.limit ? { limit: o.limit } : {}) }, !!o.json, f.formatBenchmark));

  textCommand(p, "query-docs").description("Search the project's reference documents (PDF, DOCX, Markdown)").argument("<path>").argument("<question>", 'the question, in words (one starting with "-": after "--")')
    .option("--limit <n>", "number of passages", int("--limit")).option("--budget <tokens>", "total token budget", int("--budget")).addOption(json)
    .action((dir, question, o) => run(rootOf(dir), "query_docs", { question, ...(o.limit ? { limit: o.limit } : {}), ...(o.budget ? { budget: o.budget } : {}) }, !!o.json, f.formatDocs));

  textCommand(p, "neighbors").description("Code used or changed together with a query's hits or a file (learned from sessions and git history), then its test by name and files changed lately").argument("<path>").argument("[query]")
    .option("--file <file>", "seed with this file instead of a query (what usually changes with it); relative to the current directory, or else to the project")
    .option("-k <n>", "number of neighbours, 1-50 (default 10)", int("-k")).addOption(json)
    .action((dir, query, o) => {
      if (!query === !o.file) throw new CodememError("INVALID_ARGUMENT", "codemem neighbors takes a query or --file <file> (one of them).");
      const root = rootOf(dir);
      const seeds = o.file ? { node_ids: [toProjectPath(root, fileArg(root, o.file))] } : { query };
      return run(root, "synaptic_neighbors", { ...seeds, ...(o.k ? { k: o.k } : {}) }, !!o.json, f.formatNeighbors);
    });
  p.command("trace").description("Callers or callees of a symbol, by depth (path:line each)").argument("<path>")
    .argument("<symbol>", "a name, Class.method, path:name or node id (an ambiguous name lists its candidates)")
    .addOption(new Option("--direction <dir>", "callers (default) or callees").choices(["callers", "callees"]))
    .option("--depth <n>", "hops, 1-5 (default 2)", int("--depth")).addOption(json)
    .action((dir, symbol, o) => run(rootOf(dir), "trace", { symbol, ...(o.direction ? { direction: o.direction } : {}), ...(o.depth ? { depth: o.depth } : {}) }, !!o.json, f.formatTrace));
  p.command("impact").description("What a change affects: callers by depth, tests, co-change partners").argument("<path>")
    .argument("[targets...]", "files (relative to the current directory, or else to the project) and symbols (as trace takes them)")
    .option("--diff [ref]", "the working tree's changes since a git ref (default HEAD); put it after the targets")
    .option("--depth <n>", "caller hops, 1-6 (default 3)", int("--depth"))
    .option("--budget <tokens>", "total token budget, 100-20000 (default 1000)", int("--budget")).addOption(json)
    .action((dir, targets: string[], o) => {
      const root = rootOf(dir);
      const files: string[] = [];
      const symbols: string[] = [];
      // A target naming a file (or shaped like one: dir/name.ext) is a file, anything else a symbol.
      for (const t of targets) (fs.existsSync(fileArg(root, t)) || /[\\/][^:]*\.\w+$/.test(t) ? files.push(fileArg(root, t)) : symbols.push(t));
      const diff = o.diff === undefined ? {} : { diff: o.diff === true ? "HEAD" : String(o.diff) };
      return run(root, "impact", { ...(files.length ? { files } : {}), ...(symbols.length ? { symbols } : {}), ...diff, ...(o.depth ? { depth: o.depth } : {}), ...(o.budget ? { budget: o.budget } : {}) }, !!o.json, f.formatImpact);
    });
  p.command("synapse-stats").description("Synapse store: edges, LTP edges, total weight, top hubs").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => run(rootOf(dir), "synapse_stats", {}, !!o.json, f.formatSynapseStats));
  p.command("synapse-decay").description("Decay the synapse store now (default one tick; --ticks 0 = elapsed wall-clock time only)").argument("[path]", PATH_HELP)
    .option("--ticks <n>", "manual ticks", (v) => Number(v)).addOption(json)
    .action((dir, o) => run(rootOf(dir), "synapse_decay", o.ticks !== undefined ? { ticks: o.ticks } : {}, !!o.json, (r) => `${r.ticks} tick(s): ${r.decayed} edges decayed, ${r.pruned} pruned, ${r.edges} left`));
  p.command("export-synapse-memory").description("Write the strongest associations as markdown memory").argument("[path]", PATH_HELP)
    .option("--limit <n>", "associations, 1-200 (default 30)", int("--limit")).addOption(json)
    .action((dir, o) => run(rootOf(dir), "export_synapse_memory", o.limit ? { limit: o.limit } : {}, !!o.json, (r) => `wrote ${r.written.join(", ")} (${r.tokens} tokens)`));

  p.command("scan-for-secrets").description("Report likely secrets (file and line); exit 1 when any are found").argument("[path]", PATH_HELP).addOption(json)
    .action(async (dir, o) => {
      const root = rootOf(dir);
      const { scanProject } = await import("../daemon/secrets/scan.js");
      const { resolveConfig } = await import("../shared/config.js");
      const r = scanProject(root, { excludePatterns: resolveConfig(root).build.excludePatterns });
      if (o.json) printJson(r);
      else {
        for (const x of r.findings) console.log(`${x.file}:${x.line}  ${x.kind}  ${x.preview}`);
        console.log(`${r.findings.length} likely secret(s) in ${r.files_scanned} files scanned (${r.skipped} skipped)`);
      }
      if (r.findings.length > 0) process.exitCode = 1;
    });

  p.command("audit-report").description("Verify the audit log's hash chain and write a summary").argument("[path]", PATH_HELP)
    .option("--format <format>", "report format (json)", "json").requiredOption("--output <file>", "where to write the report")
    .action(async (dir, o) => {
      if (o.format !== "json") throw new CodememError("INVALID_ARGUMENT", `--format ${o.format} is not supported; use --format json.`);
      const { writeAuditReport } = await import("./audit.js");
      const r = writeAuditReport(rootOf(dir), { format: "json", output: path.resolve(o.output) });
      // A chain anyone can compute proves nothing about who wrote it: say so when no key of ours vouches for it.
      const unproven = r.unanchored_entries === 0 ? "" : `; NOT ANCHORED: ${r.unanchored_entries} entries were not written under this machine's audit key (their users and tools are unproven)`;
      console.log(`${r.ok ? "chain verified" : "CHAIN BROKEN"}: ${r.entries} entries → ${path.resolve(o.output)}${r.first_bad ? ` (first bad: ${JSON.stringify(r.first_bad)})` : ""}${unproven}`);
      if (r.ok === false) process.exitCode = 1;
    });

  p.command("backend-check").description("Check that a storage backend works here, step by step").argument("<backend>", "local, postgres or lancedb")
    .option("--db-url <url>", "postgres URL without password (default: CODEMEM_DB_URL or the project's configuration)")
    .option("--project <path>", "project whose configuration to use (default: the current directory)")
    .addOption(json)
    .action(async (backend, o) => {
      const cfg = resolveConfig(path.resolve(o.project ?? process.cwd()), { backend, ...(o.dbUrl !== undefined ? { dbUrl: o.dbUrl } : {}) });
      const { checkBackend } = await import("../daemon/store/check.js");
      const r = await checkBackend(cfg);
      o.json ? printJson(r) : r.checks.forEach((c) => console.log(`${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? `: ${c.detail}` : ""}`));
      if (!r.ok) process.exitCode = 3;
    });

  p.command("trust").description("Trust this version of the project's codemem.toml: its database URL, password file and LLM base_url apply (an edit needs trust again)").argument("[path]", PATH_HELP)
    .option("--revoke", "forget the trust (and stop the project's daemon, which may be using it)").addOption(json)
    .action(async (dir, o) => {
      const root = rootOf(dir);
      const r = trustProject(root, { revoke: !!o.revoke });
      if (o.revoke) await stopDaemon(root);
      if (o.json) return printJson(r);
      for (const x of r) {
        console.log(`${o.revoke ? "no longer trusted" : "trusted"}: ${x.file} (sha256 ${x.sha256.slice(0, 16)})`);
        for (const [k, v] of Object.entries(x.settings)) console.log(`  ${k} = ${v}`);
      }
    });

  p.command("serve").description("Open the live canvas: the code graph, pulsing as tools are used by any agent").argument("[path]", PATH_HELP)
    .option("--port <n>", "port (default 7777, random if busy)", (v) => Number(v)).option("--host <host>", "address to bind (default 127.0.0.1)")
    .option("--allow-host <name>", "another name browsers reach the canvas by (repeatable; loopback and the bound address always work)", (v, all: string[] = []) => [...all, v])
    .action(async (dir, o) => {
      const root = rootOf(dir);
      const { startCanvas } = await import("../daemon/canvas/server.js");
      const canvas = await startCanvas(root, { ...(o.port !== undefined ? { port: o.port } : {}), ...(o.host ? { host: o.host } : {}), ...(o.allowHost ? { allowHosts: o.allowHost } : {}) });
      process.stdout.write(`codemem canvas for ${root}: ${canvas.url}\n(Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        const stop = () => void canvas.close().then(resolve);
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });

  const daemon = p.command("daemon").description("Manage the project's daemon");
  daemon.command("start").description("Start the project's daemon (clients start one on demand too)").argument("[path]", PATH_HELP).addOption(json).action(async (dir, o) => {
    const root = rootOf(dir);
    await callDaemon(root, "ping", {}, { source: "cli" });
    const s = await daemonStatus(root);
    o.json ? printJson(s) : console.log(`daemon running (pid ${s.pid}) on ${s.socket}`);
  });
  daemon.command("stop").description("Stop the project's daemon, or with --all every daemon of this user").argument("[path]", PATH_HELP)
    .option("--all", "stop every running codemem daemon (see `codemem daemon list`)").addOption(json).action(async (dir, o) => {
      if (o.all && dir !== undefined) throw new CodememError("INVALID_ARGUMENT", `give a path or --all, not both (got "${dir}").`);
      const stopped = o.all ? await Promise.all(listDaemons().map(async (d) => ({ root: d.root, ...(await stopDaemon(d.root)) }))) : [{ root: rootOf(dir), ...(await stopDaemon(rootOf(dir))) }];
      if (o.json) return printJson(o.all ? stopped : stopped[0]);
      if (o.all && stopped.length === 0) console.log("no daemon was running");
      for (const r of stopped) console.log(r.was_running ? `daemon ${r.pid} stopped${r.killed ? " (killed after timeout)" : ""} in ${r.ms} ms${o.all ? `: ${r.root}` : ""}` : "daemon was not running");
    });
  daemon.command("list").description("List this user's running daemons, one per project").addOption(json).action(async (o) => {
    const rows = await Promise.all(
      listDaemons().map(async (d) => {
        const ping = await pingDaemon(d.root, { timeoutMs: 2000 }).catch(() => null);
        return { ...d, answering: ping?.pid === d.pid, uptime_s: ping?.pid === d.pid ? ping.uptime_s : null };
      }),
    );
    if (o.json) return printJson(rows);
    if (rows.length === 0) return console.log("no daemon is running");
    for (const r of rows) console.log(`${String(r.pid).padEnd(8)} ${r.answering ? `up ${r.uptime_s}s`.padEnd(12) : "not answering"} ${r.root}`);
  });
  daemon.command("status").description("Whether the project's daemon runs: pid, uptime, socket, memory").argument("[path]", PATH_HELP).addOption(json).action(async (dir, o) => {
    const s = await daemonStatus(rootOf(dir));
    if (o.json) printJson(s);
    else console.log(s.running ? `running: pid ${s.pid}, up ${s.uptime_s}s, socket ${s.socket}${s.rss_bytes ? `, RSS ${Math.round(s.rss_bytes / 1048576)} MB` : ""}` : `not running (socket ${s.socket})`);
    if (!s.running) process.exitCode = 4;
  });
  daemon.command("logs").description("Print the end of the project's daemon log").argument("[path]", PATH_HELP).option("-n, --lines <n>", "last N lines", int("--lines"), 50).action(async (dir, o) => {
    const s = await daemonStatus(rootOf(dir));
    if (!fs.existsSync(s.log_file)) throw new CodememError("PATH_NOT_FOUND", `No daemon log at ${s.log_file} yet; start the daemon with \`codemem daemon start\`.`);
    process.stdout.write(fs.readFileSync(s.log_file, "utf8").split("\n").slice(-o.lines - 1).join("\n"));
  });

  p.command("install-service").description("Start the project's daemon on login (systemd user unit / launchd agent)").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => {
      const r = installService(rootOf(dir));
      if (o.json) printJson(r);
      else console.log(r.activated ? `installed and started ${r.name} (${r.file})` : `wrote ${r.file}, not started: ${r.reason}`);
      // The file is written, but no service runs: a script must not take that for success.
      if (!r.activated) process.exitCode = 1;
    });
  p.command("uninstall-service").description("Remove the login service").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => {
      const r = uninstallService(rootOf(dir));
      if (o.json) printJson(r);
      else console.log(r.file_changed ? `removed ${r.file}${r.reason ? ` (${r.reason})` : ""}` : `no service installed (${r.file})`);
    });

  const hostOption = (dflt: string) => new Option("--host <hosts>", "comma-separated: project (.mcp.json), vscode, cursor (.cursor/mcp.json), claude-user (~/.claude.json)").default(dflt);
  p.command("install-mcp").description("Register codemem-mcp with assistant hosts (project .mcp.json, VS Code, Cursor, Claude user config)").argument("[path]", PATH_HELP)
    .addOption(hostOption("project,vscode")).addOption(json)
    .action((dir, o) => {
      const r = installMcp(rootOf(dir), checkHosts(String(o.host).split(",").map((h) => h.trim())));
      if (o.json) return printJson(r);
      r.forEach((x) => console.log(`${x.action.padEnd(9)} ${x.file}`));
      if (r.some((x) => x.machine_paths)) {
        console.log("note: codemem-mcp is not on PATH, so the project files name this machine's node and codemem paths; a teammate's checkout needs its own. Put codemem-mcp on PATH (npm install -g, or npm link in the codemem checkout) and run install-mcp again.");
      }
      if (r.some((x) => x.host === "project")) console.log("note: Claude Code lists a project's .mcp.json servers as \"Pending approval\" until you approve them: run `claude` in the project and accept codemem (or use /mcp).");
    });
  p.command("uninstall-mcp").description("Remove codemem-mcp from assistant hosts' configuration").argument("[path]", PATH_HELP)
    .addOption(hostOption("project,vscode,cursor,claude-user")).addOption(json)
    .action((dir, o) => {
      const r = uninstallMcp(rootOf(dir), checkHosts(String(o.host).split(",").map((h) => h.trim())));
      o.json ? printJson(r) : r.forEach((x) => console.log(UNINSTALLED[x.action as keyof typeof UNINSTALLED](x.file)));
    });

  p.command("install-hooks").description("Install the assistant hooks (Claude Code .claude/settings.json)").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => { const r = installHooks(rootOf(dir), { home: HOME }); o.json ? printJson(r) : console.log(`${r.file} ${r.settings_file}`); });
  p.command("uninstall-hooks").description("Remove codemem's assistant hooks").argument("[path]", PATH_HELP).addOption(json)
    .action((dir, o) => { const r = uninstallHooks(rootOf(dir)); o.json ? printJson(r) : console.log(`${r.file} ${r.settings_file}`); });
  p.command("init-hook").description("Install a git post-commit hook that re-indexes changed files in the background").argument("[path]", PATH_HELP)
    .option("--remove", "remove the hook block again").addOption(json)
    .action((dir, o) => { const root = rootOf(dir); const r = o.remove ? uninstallGitHook(root) : installGitHook(root); o.json ? printJson(r) : console.log(`${r.action} ${r.hook_file}`); });
  p.command("last").description("Print the full output a hook compressed most recently").argument("[path]", PATH_HELP).option("-n <n>", "n-th most recent", int("-n"), 1)
    .action((dir, o) => {
      const r = readLast(rootOf(dir), o.n);
      if (!r) throw new CodememError("PATH_NOT_FOUND", "No compressed output has been saved for this project yet.");
      process.stdout.write(r.text);
    });

  return p;
}

export async function main(argv: string[]): Promise<number> {
  configureLog({ debug: resolveProcessSettings().debug, component: "cli" });
  try {
    await program().parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0; // a command may set its own (status: 4 = not running)
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    // Help and --version end with 0; a usage error is bad input like any other (2).
    if (typeof e.code === "string" && e.code.startsWith("commander.")) return e.exitCode === 0 ? 0 : 2;
    const ce = asCodememError(err);
    process.stderr.write(`codemem: ${ce.code}: ${ce.message}\n`);
    // A build stopped by Ctrl-C ends as an interrupted command does.
    return ce.code === "BUILD_CANCELLED" ? 130 : exitCodeFor(ce.code);
  }
}

main(process.argv).then((code) => process.exit(code));
