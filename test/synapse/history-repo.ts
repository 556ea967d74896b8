import { execFileSync } from "node:child_process";
import path from "node:path";
import { makeProject } from "../helpers.js";

/** A Python module whose body changes with `v`, so every commit changes each file it names. */
const py = (name: string, v: number) => `"""Module ${name}."""\n\n\ndef ${name}_step(x):\n    return x + ${v}\n`;

/**
 * A real git repository for co-change tests: `commit(files)` changes each file and commits them
 * together, an hour after the previous commit (fixed dates: the history reads the same every run).
 */
export function historyRepo() {
  const project = makeProject({});
  let clock = Date.parse("2026-01-01T00:00:00Z");
  let version = 0;
  const git = (...args: string[]): void => {
    const at = new Date((clock += 3_600_000)).toISOString();
    execFileSync("git", ["-C", project.root, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", ...args], { env: { ...process.env, GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at } });
  };
  git("init", "-q", "-b", "main");
  const commit = (files: string[]): void => {
    version++;
    for (const f of files) project.write(f, py(path.basename(f, ".py"), version));
    git("add", "-A");
    git("commit", "-q", "-m", `change ${files.join(", ")}`);
  };
  return { project, commit };
}
