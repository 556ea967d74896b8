// Ground truth for Python: py_truth.py run by Debian's python3 with python3-jedi (apt-get install python3-jedi).
import path from "node:path";
import { execFileSync } from "node:child_process";

const PYTHON = "/usr/bin/python3";

/** Computes the truth for a Python tree. */
export function pyTruth(tree) {
  const script = path.join(path.dirname(new URL(import.meta.url).pathname), "py_truth.py");
  try {
    execFileSync(PYTHON, ["-c", "import jedi"], { stdio: "ignore" });
  } catch {
    throw new Error(`${PYTHON} cannot import jedi: apt-get install -y python3-jedi`);
  }
  return JSON.parse(execFileSync(PYTHON, [script, tree], { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "inherit"] }));
}
