import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** file:// URL of a compiled module under dist/, for `import` inside child processes. */
export function distUrl(rel: string): string {
  return pathToFileURL(resolve(__dirname, "../../dist", rel)).href;
}

/** Runs an ESM snippet in a fresh node process; resolves with stdout, rejects on a non-zero exit. */
export function runNode(code: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", rej);
    child.on("exit", (code) => (code === 0 ? res(out) : rej(new Error(`child exited ${code}: ${err}`))));
  });
}
