// The code at an earlier commit, built to compare against: shared by the benchmarks that measure
// this build next to a baseline (bench-scale, bench-retrieval).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The dist directory of the code at REF: `git archive` into .bench-cache/baseline-<sha> (no
 * checkout, so the work tree is untouched), this repository's node_modules linked in, compiled
 * with tsc once (a later call finds it built).
 */
export function prepareBaseline(ref) {
  const sha = execFileSync("git", ["-C", repo, "rev-parse", "--short", ref], { encoding: "utf8" }).trim();
  const dir = path.join(repo, ".bench-cache", `baseline-${sha}`);
  if (!fs.existsSync(path.join(dir, "dist/daemon/main.js"))) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    execFileSync("bash", ["-c", `git -C "${repo}" archive ${sha} | tar -x -C "${dir}"`]);
    fs.symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"));
    // tsc reports on stderr: a bench's stdout carries its --json.
    execFileSync(process.execPath, [path.join(repo, "node_modules/typescript/bin/tsc"), "-p", path.join(dir, "tsconfig.json")], { stdio: ["ignore", 2, 2] });
  }
  return path.join(dir, "dist");
}
