// codemem's graph of a tree, built by a given dist (this head's or the base commit's) through its CLI.
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";

/** Builds a copy of `tree` with the CLI of `dist` and returns its graph.json (read, then the daemon stopped). */
export function codememGraph(dist, tree, work) {
  fs.rmSync(work, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(work), { recursive: true });
  fs.cpSync(tree, work, { recursive: true });
  const cli = path.join(dist, "client/cli.js");
  const t0 = performance.now();
  try {
    execFileSync(process.execPath, [cli, "build", work], { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 1 << 26 });
  } finally {
    execFileSync(process.execPath, [cli, "daemon", "stop", work], { stdio: "ignore" });
  }
  const seconds = (performance.now() - t0) / 1000;
  return { graph: JSON.parse(fs.readFileSync(path.join(work, "codegraph-out/graph.json"), "utf8")), seconds };
}

/** The commit to compare with: `ref` if given, else the merge-base with main, or HEAD's first parent when HEAD is on main. */
export function baseCommit(root, ref) {
  const git = (...a) => execFileSync("git", ["-C", root, ...a], { encoding: "utf8" }).trim();
  if (ref) return git("rev-parse", `${ref}^{commit}`);
  const head = git("rev-parse", "HEAD");
  let mb;
  try {
    mb = git("merge-base", "HEAD", "main");
  } catch {
    mb = head;
  }
  return mb === head ? git("rev-parse", "HEAD^") : mb;
}

/** The dist of a commit, compiled once into `.bench-cache/callgraph/dist-<commit>` (git archive + tsc, offline). */
export function distOf(root, commit) {
  const dir = path.join(root, ".bench-cache/callgraph", `dist-${commit.slice(0, 12)}`);
  const dist = path.join(dir, "dist");
  if (fs.existsSync(path.join(dist, "client/cli.js"))) return dist;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tar = execFileSync("git", ["-C", root, "archive", "--format=tar", commit], { maxBuffer: 1 << 30 });
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"));
  process.stderr.write(`compiling ${commit.slice(0, 12)} into ${dist}\n`);
  execFileSync(path.join(root, "node_modules/.bin/tsc"), ["-p", path.join(dir, "tsconfig.json")], { stdio: "inherit" });
  return dist;
}
