// npm run bench:cancel [-- --baseline <dist dir of another build>] [--corpus DIR] [--delays 1500,4000,8000]
//
// How long `codemem build --force` takes to end after Ctrl-C (SIGINT to the CLI), at several points of
// a whole-tree build, and whether the index is unchanged afterwards. Corpus: Python's standard library
// without its test suites (copied from the machine's python3, ~630 files, 16K nodes), a tree whose
// forced build takes tens of seconds on two cores. With --baseline, the same cancels through another
// build of codemem (e.g. `git worktree add /tmp/cm-base <commit> && cd /tmp/cm-base && ln -s
// $PWD/node_modules && npx tsc`), alternated with this one's, in the same run.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const delays = arg("delays", "1500,4000,8000,12000").split(",").map(Number);
const sides = [["this head", path.join(here, "dist")]];
if (arg("baseline")) sides.push(["baseline", path.resolve(arg("baseline"))]);

function stdlibCorpus() {
  const dir = path.join(os.tmpdir(), "codemem-bench-cancel-stdlib");
  if (fs.existsSync(path.join(dir, ".done"))) return dir;
  const lib = execFileSync("python3", ["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"], { encoding: "utf8" }).trim();
  fs.rmSync(dir, { recursive: true, force: true });
  const skip = /(^|\/)(test|tests|idle_test|site-packages|dist-packages|__pycache__)(\/|$)/;
  const copy = (rel) => {
    for (const e of fs.readdirSync(path.join(lib, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (skip.test(r)) continue;
      if (e.isDirectory()) copy(r);
      else if (e.isFile() && e.name.endsWith(".py")) {
        fs.mkdirSync(path.join(dir, rel), { recursive: true });
        fs.copyFileSync(path.join(lib, r), path.join(dir, r));
      }
    }
  };
  copy("");
  fs.writeFileSync(path.join(dir, ".done"), "");
  return dir;
}

const corpus = arg("corpus") ? path.resolve(arg("corpus")) : stdlibCorpus();
const cli = (dist) => path.join(dist, "client", "cli.js");
const lastBuild = (dist) => JSON.parse(spawnSync(process.execPath, [cli(dist), "stats", corpus, "--json"], { encoding: "utf8" }).stdout).last_build;

function cancelAt(dist, delayMs) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [cli(dist), "build", corpus, "--force"], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    c.stderr.on("data", (d) => (err += d));
    let sent;
    const timer = setTimeout(() => {
      sent = performance.now();
      c.kill("SIGINT");
    }, delayMs);
    c.on("exit", (code) => {
      clearTimeout(timer);
      const code2 = /BUILD_CANCELLED/.test(err) ? "BUILD_CANCELLED" : code === 0 ? "finished" : `exit ${code}`;
      resolve({ ms: sent === undefined ? null : performance.now() - sent, outcome: code2 });
    });
  });
}

console.log(`corpus: ${corpus}`);
for (const [, dist] of sides) {
  spawnSync(process.execPath, [cli(dist), "daemon", "stop", corpus]);
  const b = spawnSync(process.execPath, [cli(dist), "build", corpus], { encoding: "utf8" });
  if (b.status !== 0) throw new Error(`build failed: ${b.stderr}`);
}
const rows = [];
for (const delay of delays) {
  for (const [name, dist] of sides) {
    // Each side's own daemon (a client replaces one running other code), warm before the cancel.
    spawnSync(process.execPath, [cli(dist), "stats", corpus, "--json"]);
    const before = lastBuild(dist);
    const r = await cancelAt(dist, delay);
    const unchanged = r.outcome !== "BUILD_CANCELLED" || lastBuild(dist) === before;
    rows.push({ side: name, sigint_after_ms: delay, exit_after_sigint_ms: r.ms === null ? null : Math.round(r.ms), outcome: r.outcome, index_unchanged: unchanged });
  }
}
console.table(rows);
for (const [name] of sides) {
  const ms = rows.filter((r) => r.side === name && r.outcome === "BUILD_CANCELLED").map((r) => r.exit_after_sigint_ms);
  if (ms.length) console.log(`${name}: Ctrl-C to exit, max ${Math.max(...ms)} ms, median ${ms.sort((a, b) => a - b)[ms.length >> 1]} ms over ${ms.length} cancels`);
}
for (const [, dist] of sides) spawnSync(process.execPath, [cli(dist), "daemon", "stop", corpus]);
