import { execa } from "execa";
import { CodememError } from "../../shared/errors.js";
import type { ResolvedConfig } from "../../shared/config.js";

/** Which graph source a build uses: the external generator wins when it is installed (spec §1.7). */
export function graphSourceOf(cfg: ResolvedConfig): "builtin" | "external" {
  if (cfg.build.graphSource === "builtin") return "builtin";
  if (cfg.build.graphSource === "external") return "external";
  return cfg.build.generator ? "external" : "builtin";
}

/** Runs `codegraph update <root>`, which (re)writes codegraph-out/graph.json. */
export async function runExternalGenerator(cfg: ResolvedConfig): Promise<void> {
  const cmd = cfg.build.generator;
  if (!cmd) {
    throw new CodememError("GENERATOR_FAILED", `[build] graph_source = "external" but \`codegraph\` is not on PATH; install it or set graph_source = "builtin".`);
  }
  try {
    await execa(cmd, ["update", cfg.root], { cwd: cfg.root, timeout: 30 * 60_000, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (err) {
    const e = err as { exitCode?: number; stderr?: string; shortMessage?: string };
    const tail = (e.stderr ?? "").trim().split("\n").slice(-5).join(" | ");
    throw new CodememError("GENERATOR_FAILED", `\`${cmd} update ${cfg.root}\` failed (exit ${e.exitCode ?? "?"}): ${tail || e.shortMessage}; fix the generator or set [build] graph_source = "builtin".`);
  }
}
