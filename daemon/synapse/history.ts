/**
 * The repository's history as co-change evidence (docs/synapses.md, "History"): the commits of the
 * project's git repository, oldest first, each with the project files it changed under their names
 * of today (renames followed). Reading is one `git log`; a project outside git, an empty
 * repository or a missing git reads as no history.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { historyDecayOf, type SynapseStore } from "./store.js";

export interface HistoryCommit {
  sha: string;
  /** Commit time, ms since the epoch. */
  at: number;
  /** Project-relative paths the commit changed (added, modified, renamed, deleted), under today's names. */
  files: string[];
  /**
   * No parent: the repository's first commit, or a shallow clone's oldest. Its "changes" are the
   * whole tree as it was then, not files changed together.
   */
  root: boolean;
}

export interface HistoryOptions {
  /** Most recent commits read (merges are not read: their changes are their parents'). */
  max: number;
  /** Read only commits after this one (exclusive), when it is an ancestor of HEAD. */
  after?: string;
}

function git(cwd: string, args: string[], maxBuffer = 256 * 1024 * 1024): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, encoding: "utf8", maxBuffer, env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" } }, (err, stdout) =>
      resolve(err ? undefined : stdout),
    );
  });
}

/** HEAD's commit id, or undefined outside a repository (or in one without commits). */
export async function gitHead(root: string): Promise<string | undefined> {
  // Every build asks: outside a repository no git is started (a spawn from a daemon holding 2 GB
  // took 35 ms of its main thread at 300K nodes).
  if (!process.env.GIT_DIR && !inRepository(root)) return undefined;
  return (await git(root, ["rev-parse", "--verify", "--quiet", "HEAD"]))?.trim() || undefined;
}

/** A `.git` (directory, or file of a worktree) in `dir` or above. */
function inRepository(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, ".git"))) return true;
    if (path.dirname(d) === d) return false;
  }
}

/**
 * Commits reachable from HEAD, oldest first, at most `max` of the newest (none outside git or
 * before the first commit: `git log` fails there). Paths are relative to
 * `root` (a project may be a sub-directory of its repository: only its part of each commit is
 * read); a file renamed since is named as it is called now, so old commits speak of today's files.
 */
export async function readGitHistory(root: string, opts: HistoryOptions): Promise<HistoryCommit[]> {
  if (opts.max <= 0) return [];
  let range = "HEAD";
  if (opts.after) {
    const ancestor = (await git(root, ["merge-base", "--is-ancestor", opts.after, "HEAD"])) !== undefined;
    if (ancestor) range = `${opts.after}..HEAD`;
  }
  // -z: paths verbatim (no quoting of non-ASCII names).
  const out = await git(root, [
    "-c", "core.quotepath=off", "log", range, "--no-merges", "-M", "-z", "--name-status", "--relative",
    `--format=${LOG_FORMAT}`, `-n${Math.floor(opts.max)}`, "--", ".",
  ]);
  if (!out) return [];
  return parseLog(out).reverse();
}

/** `git log --format` that parseLog reads (with -z): \x01 opens each commit's record; %P: its parents. */
export const LOG_FORMAT = "%x01%H %ct %P";

/**
 * Parses `git log -z --name-status --format=${LOG_FORMAT}` (newest first) and names every path by
 * today's name: walking back in time, a rename old → new makes later (older) mentions of `old`
 * mean whatever `new` is called now. `today` ends holding every earlier name → today's name.
 */
export function parseLog(out: string, today = new Map<string, string>()): HistoryCommit[] {
  const nameOf = (p: string) => today.get(p) ?? p;
  const commits: HistoryCommit[] = [];
  for (const record of out.split("\x01")) {
    if (!record) continue;
    const head = record.indexOf("\0");
    const [sha, secs, ...parents] = (head < 0 ? record : record.slice(0, head)).trim().split(" ");
    if (!sha || !secs) continue;
    const tokens = head < 0 ? [] : record.slice(head + 1).replace(/^\n/, "").split("\0");
    const files = new Set<string>();
    for (let i = 0; i < tokens.length; i++) {
      const status = tokens[i];
      if (!status) continue;
      if (status[0] === "R" || status[0] === "C") {
        const from = tokens[++i];
        const to = tokens[++i];
        if (!from || !to) break;
        const now = nameOf(to);
        files.add(now);
        if (status[0] === "R") today.set(from, now);
      } else {
        const p = tokens[++i];
        if (!p) break;
        files.add(nameOf(p));
        // Before its addition the path named some other, older file.
        if (status[0] === "A") today.delete(p);
      }
    }
    commits.push({ sha, at: Number(secs) * 1000, files: [...files], root: parents.length === 0 });
  }
  return commits;
}

export interface ReplayOptions {
  /** Newest commits read on the first replay (later replays read what came after it). */
  commits: number;
  /** Commits that changed more project files than this are bulk (renames, vendoring, sweeps): not learned. */
  maxFiles: number;
  /** Files the index holds; other paths (deleted since, not code) are left out of every commit. */
  isIndexed: (file: string) => boolean;
  /** Forget what was read and read the newest `commits` again (`codemem build --history N`). */
  reread?: boolean;
  /** HEAD's commit id (gitHead), read by the caller. */
  head: string;
  /**
   * Half-lives of co-change evidence in commits of the file (`[synapses] history_half_life`) and of
   * the project (`history_project_half_life`); the store's defaults without.
   */
  halfLife?: { file: number; project: number };
}

/**
 * Teaches the store the commits it has not read: after the first replay, those since the head it
 * read last. Commits are learned in chunks of one transaction each, yielding between them.
 */
export async function replayHistory(store: SynapseStore, root: string, opts: ReplayOptions): Promise<{ commits: number; learned: number; pairs: number }> {
  const total = { commits: 0, learned: 0, pairs: 0 };
  const head = opts.head;
  if (opts.commits <= 0) return total;
  // History learned under another half-life is read again: its scores mean nothing under this one.
  const ageing = opts.halfLife && { file: historyDecayOf(opts.halfLife.file), project: historyDecayOf(opts.halfLife.project) };
  const reread = opts.reread || !store.historyFits(ageing);
  if (reread) store.forgetHistory();
  else if (store.historyHead() === head) return total;
  const commits = await readGitHistory(root, { max: opts.commits, after: reread ? undefined : store.historyHead() });
  for (let i = 0; i < commits.length; i += HISTORY_CHUNK) {
    // A root commit is read (and counted) but teaches nothing: it added every file at once.
    const chunk = commits.slice(i, i + HISTORY_CHUNK).map((c) => ({ sha: c.sha, at: c.at, files: c.files.length, ids: c.root ? [] : c.files.filter(opts.isIndexed) }));
    const r = store.learnHistory(chunk, { maxFiles: opts.maxFiles, ageing, head: i + HISTORY_CHUNK >= commits.length ? head : undefined });
    total.commits += r.commits;
    total.learned += r.learned;
    total.pairs += r.pairs;
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (commits.length === 0) store.learnHistory([], { maxFiles: opts.maxFiles, ageing, head });
  return total;
}

const HISTORY_CHUNK = 200;
