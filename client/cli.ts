#!/usr/bin/env node
import path from "node:path";
import { Command, Option } from "commander";
import { resolveProcessSettings } from "../shared/config.js";
import { asCodememError, CodememError, exitCodeFor } from "../shared/errors.js";
import { configureLog } from "../shared/log.js";
import { resolveProjectRoot } from "../shared/paths.js";
import * as f from "./format.js";
import { callDaemon } from "./rpc.js";

/** The one place CLI output and failures are rendered; exit codes follow the error family. */
async function run(project: string, op: string, input: Record<string, unknown>, json: boolean, human: (r: any) => string): Promise<void> {
  const root = resolveProjectRoot(path.resolve(project));
  const result = await callDaemon(root, op, { project_path: root, ...input }, { source: "cli" });
  process.stdout.write((json ? JSON.stringify(result, null, 2) : human(result)) + "\n");
}

function int(name: string) {
  return (v: string) => {
    const x = Number(v);
    if (!Number.isInteger(x) || x < 1) throw new CodememError("INVALID_ARGUMENT", `${name} must be a positive integer; got "${v}".`);
    return x;
  };
}

function onlyLocalBackend(backend: string | undefined, dbUrl: string | undefined): void {
  if ((backend && backend !== "local") || dbUrl) {
    throw new CodememError(
      "INVALID_ARGUMENT",
      `backend "${backend ?? "relational"}" is not available in this version; only the embedded "local" backend (SQLite) is. Omit --backend/--db-url.`,
    );
  }
}

export function program(): Command {
  const p = new Command("codemem")
    .description("Local code memory for AI coding assistants: index a project, ask it questions.")
    .version("0.1.0")
    .showHelpAfterError();
  const json = new Option("--json", "print machine-readable JSON");

  p.command("build")
    .description("Build or update the index (incremental by content hash)")
    .argument("<path>", "project root")
    .option("--force", "rebuild everything")
    .option("--optimize", "recluster communities, merge FTS segments, ANALYZE and VACUUM after building")
    .option("--batch-size <n>", "nodes per embedding batch", int("--batch-size"))
    .option("--backend <value>", "storage backend (local)")
    .option("--db-url <url>", "database URL of the relational backend")
    .option("--exclude-secrets", "leave likely secrets out of the index")
    .addOption(json)
    .action(async (dir, o) => {
      onlyLocalBackend(o.backend, o.dbUrl);
      if (o.excludeSecrets) throw new CodememError("INVALID_ARGUMENT", "--exclude-secrets is not available in this version (the secret scanner has not landed); nothing was built.");
      await run(dir, "build", { force: !!o.force, optimize: !!o.optimize, ...(o.batchSize ? { batch_size: o.batchSize } : {}) }, !!o.json, f.formatBuild);
    });

  p.command("stats").description("Index statistics and the synapse store location").argument("<path>").addOption(json)
    .action((dir, o) => run(dir, "stats", {}, !!o.json, f.formatStats));

  p.command("query").description("Answer a question with a small cited context").argument("<path>").argument("<question>")
    .option("--budget <tokens>", "total token budget", int("--budget")).addOption(json)
    .action((dir, question, o) => run(dir, "query", { question, ...(o.budget ? { budget: o.budget } : {}) }, !!o.json, f.formatAnswer));

  p.command("search").description("Hybrid search for symbols and files").argument("<path>").argument("<query>")
    .option("--limit <n>", "number of results", int("--limit")).addOption(json)
    .action((dir, query, o) => run(dir, "search", { query, ...(o.limit ? { limit: o.limit } : {}) }, !!o.json, f.formatSearch));

  p.command("wakeup").description("Session-start context for the project").argument("<path>").addOption(json)
    .action((dir, o) => run(dir, "wakeup", {}, !!o.json, f.formatAnswer));

  p.command("skeleton").description("Outline of one file from the graph").argument("<path>").argument("<file>").addOption(json)
    .action((dir, file, o) => run(dir, "skeleton", { file_path: path.isAbsolute(file) ? file : path.resolve(file) }, !!o.json, f.formatSkeleton));

  p.command("recursive-query").description("Decompose a complex question and merge the answers").argument("<path>").argument("<question>")
    .option("--budget <tokens>", "total token budget", int("--budget")).addOption(json)
    .action((dir, question, o) => run(dir, "recursive_query", { question, ...(o.budget ? { budget: o.budget } : {}) }, !!o.json, f.formatAnswer));

  p.command("benchmark").description("Measure retrieval: tokens, reduction, latency, recall and MRR").argument("<path>")
    .option("--questions <file>", "JSON file of {question, gold_files}").option("--limit <n>", "number of questions", int("--limit")).addOption(json)
    .action((dir, o) => run(dir, "benchmark", { ...(o.questions ? { questions_file: path.resolve(o.questions) } : {}), ...(o.limit ? { limit: o.limit } : {}) }, !!o.json, f.formatBenchmark));

  return p;
}

export async function main(argv: string[]): Promise<number> {
  configureLog({ debug: resolveProcessSettings().debug, component: "cli" });
  try {
    await program().exitOverride().parseAsync(argv);
    return 0;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (typeof e.code === "string" && e.code.startsWith("commander.")) return e.exitCode ?? 2;
    const ce = asCodememError(err);
    process.stderr.write(`codemem: ${ce.code}: ${ce.message}\n`);
    return exitCodeFor(ce.code);
  }
}

main(process.argv).then((code) => process.exit(code));
