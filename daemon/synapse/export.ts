/**
 * Exports the learned associations as markdown an assistant can read at the start of a session:
 * `<root>/.codemem/synapse-memory.md` always, and Claude Code's auto-memory directory for the
 * project when (and only when) it already exists.
 *
 * Claude Code keeps per-project state in `~/.claude/projects/<slug>/`, where the slug is the
 * project's absolute path with every character outside [A-Za-z0-9] replaced by '-'
 * (`/home/me/my.app` → `-home-me-my-app`), and its auto memory in `<that>/memory/` (MEMORY.md is
 * the index it loads). Assumptions, documented in docs/synapses.md: the slug is taken from `root`
 * as given (codemem passes the canonical real path; Claude Code keys on the git root, which is the
 * same directory when codemem indexes a repository root), and we never create the directory nor
 * edit MEMORY.md — the user or the assistant decides whether to link `codemem-synapses.md` from it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { stateDirs, writeFileAtomic } from "../../shared/paths.js";
import type { SynapseStore } from "./store.js";

export interface NodeDescription {
  name: string;
  file_path: string;
  line_start?: number | null;
}

const PROJECT_FILE = "synapse-memory.md";
const AUTO_MEMORY_FILE = "codemem-synapses.md";

/** Claude Code's directory name for a project path. */
export function claudeProjectSlug(root: string): string {
  return root.replace(/[^a-zA-Z0-9]/g, "-");
}

function code(s: string): string {
  // A backtick inside a code span would end it early.
  return "`" + s.replace(/`/g, "'").replace(/\s+/g, " ") + "`";
}

function label(id: string, describe: (id: string) => NodeDescription | undefined): string {
  const d = describe(id);
  if (!d) return code(id);
  const where = d.line_start ? `${d.file_path}:${d.line_start}` : d.file_path;
  return `${code(d.name)} (${where})`;
}

/** Markdown of the strongest associations and the hubs, with names and files, date and parameters. */
export function renderSynapseMarkdown(
  store: SynapseStore,
  describe: (id: string) => NodeDescription | undefined,
  opts: { limit?: number; now?: number } = {},
): string {
  const limit = opts.limit ?? 20;
  const stats = store.stats(Math.min(10, limit));
  const edges = store.strongest(limit);
  const p = store.params;
  const out: string[] = [];
  out.push("# codemem: learned code associations");
  out.push("");
  out.push(
    `Generated ${new Date(opts.now ?? Date.now()).toISOString()} from \`.codemem/synapses.db\`: ` +
      `${stats.edges} associations (${stats.ltp_edges} long-term) among ${stats.nodes} symbols.`,
  );
  out.push(
    "Symbols that coding sessions on this project used together, strongest first. " +
      "When you touch one side of a pair, the other side is likely relevant too.",
  );
  out.push("");
  out.push("## Strongest associations");
  out.push("");
  if (edges.length === 0) out.push("_None yet: associations form as tools, file changes and hooks touch code together._");
  for (const e of edges) {
    out.push(
      `- ${label(e.a, describe)} ↔ ${label(e.b, describe)} — weight ${e.weight.toFixed(2)}, ` +
        `${e.count}× together${e.ltp ? ", long-term" : ""}`,
    );
  }
  out.push("");
  out.push("## Hubs");
  out.push("");
  if (stats.top_hubs.length === 0) out.push("_None yet._");
  for (const h of stats.top_hubs) {
    out.push(`- ${label(h.id, describe)} — ${h.degree} associations, strength ${h.strength.toFixed(2)}`);
  }
  out.push("");
  out.push("## Parameters");
  out.push("");
  out.push(
    `Learning rate ${p.learningRate} (w += lr·(1−w), cap 1); long-term after ${p.ltpThreshold} co-activations; ` +
      `decay ×${p.decay} per ${Math.round(p.tickMs / 60000)} min (×${p.ltpDecay} long-term); ` +
      `pruned below ${p.pruneBelow}; at most ${p.maxNodesPerEvent} symbols per event. ` +
      `Last decay: ${stats.last_decay_at ?? "never"}.`,
  );
  out.push("");
  return out.join("\n");
}

/** Writes the project memory file and, if Claude Code's memory dir for `root` exists, a copy there. */
export function exportSynapseMemory(root: string, markdown: string, opts: { home?: string } = {}): { written: string[] } {
  const written: string[] = [];
  const projectFile = path.join(stateDirs(root).stateDir, PROJECT_FILE);
  writeFileAtomic(projectFile, markdown);
  written.push(projectFile);

  const home = opts.home ?? os.homedir();
  const memoryDir = path.join(home, ".claude", "projects", claudeProjectSlug(root), "memory");
  let isDir = false;
  try {
    isDir = fs.statSync(memoryDir).isDirectory();
  } catch {
    // No auto memory for this project: nothing to do.
  }
  if (isDir) {
    const target = path.join(memoryDir, AUTO_MEMORY_FILE);
    writeFileAtomic(target, markdown);
    written.push(target);
  }
  return { written };
}
