/**
 * The working tree's changes against a git ref, as impact reads them: each changed project file
 * (relative to the project, which may be a sub-directory of its repository) with the line ranges
 * the change touches on the working tree's side. Untracked files count as changed whole.
 */
import { execFile } from "node:child_process";
import { CodememError } from "../../shared/errors.js";

/** Inclusive line ranges per project-relative path; an empty list means the whole file. */
export type ChangedLines = Map<string, [number, number][]>;

function git(cwd: string, args: string[]): Promise<{ ok: true; out: string } | { ok: false; err: string }> {
  return new Promise((resolve) => {
    execFile("git", args, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024, env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" } }, (err, stdout, stderr) =>
      resolve(err ? { ok: false, err: (stderr || err.message).trim() } : { ok: true, out: stdout }),
    );
  });
}

/** Checks `ref` names a commit of the repository holding `root`; errors name the value and the fix. */
async function checkRef(root: string, ref: string): Promise<void> {
  // A leading "-" would reach git as an option.
  if (ref.startsWith("-") || /[\0\s]/.test(ref)) throw new CodememError("GIT_REF_INVALID", `--diff "${ref}" is not a git ref; pass a branch, tag or commit (e.g. HEAD, main, HEAD~3).`, { value: ref });
  const inside = await git(root, ["rev-parse", "--is-inside-work-tree"]);
  if (!inside.ok || inside.out.trim() !== "true") {
    throw new CodememError("NOT_A_GIT_REPO", `${root} is not inside a git work tree (${inside.ok ? "a bare repository" : inside.err.split("\n")[0]}); --diff needs git: name symbols or files instead.`, { value: root });
  }
  const commit = await git(root, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  if (!commit.ok) throw new CodememError("GIT_REF_INVALID", `--diff "${ref}" names no commit in the repository of ${root}; pass a branch, tag or commit (see \`git log\`), e.g. HEAD.`, { value: ref });
}

/** Files changed in the working tree (staged or not, and untracked) since `ref`, with their changed lines. */
export async function changedSince(root: string, ref: string): Promise<ChangedLines> {
  await checkRef(root, ref);
  const diff = await git(root, ["-c", "core.quotepath=off", "diff", "--relative", "--no-ext-diff", "--no-color", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", "--unified=0", ref, "--"]);
  if (!diff.ok) throw new CodememError("GIT_REF_INVALID", `git diff against "${ref}" failed (${diff.err.split("\n")[0]}); pass a commit of this repository.`, { value: ref });
  const out = parseUnifiedDiff(diff.out);
  const untracked = await git(root, ["ls-files", "--others", "--exclude-standard", "-z"]);
  if (untracked.ok) for (const f of untracked.out.split("\0")) if (f) out.set(f, []);
  return out;
}

/** Reads `git diff --unified=0`: each file's new-side hunk ranges (a deleted file: its old path, whole). */
export function parseUnifiedDiff(text: string): ChangedLines {
  const out: ChangedLines = new Map();
  let oldPath: string | undefined;
  let current: [number, number][] | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("--- ")) oldPath = line === "--- /dev/null" ? undefined : line.slice(6);
    else if (line.startsWith("+++ ")) {
      const deleted = line === "+++ /dev/null";
      const file = deleted ? oldPath : line.slice(6);
      current = undefined;
      if (!file) continue;
      out.set(file, []);
      // A deleted file changed whole; its hunks say nothing of lines that remain.
      if (!deleted) current = out.get(file);
    } else if (line.startsWith("@@") && current) {
      const m = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (!m) continue;
      const start = Number(m[1]);
      const count = m[2] === undefined ? 1 : Number(m[2]);
      // A pure deletion (count 0) sits after line `start`: the lines around it changed.
      current.push(count === 0 ? [Math.max(1, start), Math.max(1, start + 1)] : [start, start + count - 1]);
    }
  }
  return out;
}
