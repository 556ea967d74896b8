// Ground truth for Go: go_truth.go compiled by Debian's golang-go (apt-get install golang-go), standard
// library only, run in GOPATH mode so the source importer finds Debian's golang-*-dev packages
// (/usr/share/gocode); no module is downloaded (GOPROXY=off).
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";

const here = path.dirname(new URL(import.meta.url).pathname);
const env = { ...process.env, GO111MODULE: "off", GOPATH: "/usr/share/gocode", GOPROXY: "off", GOFLAGS: "-mod=mod" };

/** Computes the truth for a Go module's tree. */
export function goTruth(tree) {
  // Named by the source's hash: runs of different truth code (two checkouts sharing the cache) never swap binaries.
  const hash = createHash("sha256").update(fs.readFileSync(path.join(here, "go_truth.go"))).digest("hex").slice(0, 12);
  const bin = path.join(here, `../../.bench-cache/callgraph/go-truth-${hash}`);
  try {
    fs.mkdirSync(path.dirname(bin), { recursive: true });
    execFileSync("go", ["build", "-o", bin, path.join(here, "go_truth.go")], { env, stdio: ["ignore", "ignore", "pipe"] });
  } catch (e) {
    throw new Error(`cannot build go_truth.go (${String(e.stderr ?? e.message).trim().split("\n")[0]}): apt-get install -y golang-go`);
  }
  return JSON.parse(execFileSync(bin, [tree], { env, encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "inherit"] }));
}
