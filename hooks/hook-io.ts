import fs from "node:fs";
import path from "node:path";

/** Reads all of stdin (the host's JSON payload); resolves "" after capMs so a silent host cannot hang us. */
export function readStdin(capMs: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(done, capMs);
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.on("end", done);
    process.stdin.on("error", done);
  });
}

/** Nearest directory at or above start holding `.codemem`, `codegraph-out` or `.git`; null if none. */
export function findProjectRoot(start: string): string | null {
  let dir: string;
  try {
    dir = fs.realpathSync(path.resolve(start));
  } catch {
    return null;
  }
  for (;;) {
    for (const marker of [".codemem", "codegraph-out", ".git"]) {
      if (fs.existsSync(path.join(dir, marker))) return dir;
    }
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

/** Writes the host's JSON answer (if any) and exits 0 once it is flushed. */
export function answerAndExit(out: unknown): never {
  if (out === undefined) process.exit(0);
  try {
    process.stdout.write(JSON.stringify(out), () => process.exit(0));
  } catch {
    process.exit(0); // the host went away: nothing to tell it
  }
  // Keeps the signature honest for callers; the write callback (or the hard cap) ends the process.
  return undefined as never;
}

/** Hard cap on a hook's life: whatever is still running, exit 0 without output at capMs. */
export function armHardCap(capMs: number): void {
  setTimeout(() => process.exit(0), capMs).unref();
}
