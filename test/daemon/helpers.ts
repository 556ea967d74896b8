import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { onTestFailed } from "vitest";
import { closeConnections, daemonStatus, stopDaemon } from "../../dist/client/rpc.js";
import { daemonFiles, pidAlive, readLockPid } from "../../dist/client/socket-path.js";

export const DAEMON_MAIN = path.resolve("dist/daemon/main.js");

export const FILES: Record<string, string> = {
  "app/store.py": `"""Inventory storage."""


class Inventory:
    """Keeps stock counts per product."""

    def add_stock(self, sku, count):
        """Add count units of sku."""
        self.items[sku] = self.items.get(sku, 0) + count

    def remove_stock(self, sku, count):
        return reserve_units(self, sku, count)


def reserve_units(inv, sku, count):
    """Reserve units for an order."""
    return inv.items.get(sku, 0) >= count
`,
  "app/report.py": `from app.store import Inventory


def stock_report(inv: Inventory):
    """Render a stock report as text."""
    return "\\n".join(f"{k}: {v}" for k, v in inv.items.items())
`,
  "web/format.ts": `export function formatPrice(cents: number): string {
  return (cents / 100).toFixed(2);
}

export class PriceTag {
  constructor(readonly cents: number) {}
  render(): string {
    return formatPrice(this.cents);
  }
}
`,
};

const roots = new Set<string>();
const children = new Set<ChildProcess>();

/** A real temporary project; every daemon started for it is stopped by `cleanupAll`. */
export function makeProject(opts: { base?: string; files?: Record<string, string> } = {}): string {
  const base = opts.base ?? os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  const root = fs.realpathSync(fs.mkdtempSync(path.join(base, "cm-daemon-")));
  for (const [rel, body] of Object.entries(opts.files ?? FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), body);
  }
  roots.add(root);
  showLogOnFailure(root);
  return root;
}

/**
 * A test that fails prints the end of its project's daemon log (debug lines left out): a failure
 * seen once on a loaded machine (a build process exiting 1) is then explained by the run that saw it.
 */
function showLogOnFailure(root: string): void {
  try {
    onTestFailed(() => {
      const log = path.join(root, ".codemem/daemon.log");
      if (!fs.existsSync(log)) return;
      const lines = fs.readFileSync(log, "utf8").split("\n").filter((l) => l && !l.includes('"level":"debug"'));
      process.stderr.write(`--- ${log} (last ${Math.min(40, lines.length)} of ${lines.length} lines) ---\n${lines.slice(-40).join("\n")}\n`);
    });
  } catch {
    // Made outside a running test (a suite's setup): nothing to attach to.
  }
}

/** Spawns the daemon in the foreground (a child of the test), stderr captured. */
export function spawnDaemonChild(root: string, args: string[] = []): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [DAEMON_MAIN, "--project", root, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  let err = "";
  child.stderr!.on("data", (d) => (err += String(d)));
  const exit = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  void exit.then(() => children.delete(child));
  return { child, stderr: () => err, exit };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the daemon's watcher has finished its initial scan. */
/** The watcher is ready and its catch-up build after the start is done: an edit from now on is a watch batch of its own. */
export async function watcherReady(root: string): Promise<void> {
  await waitFor("watcher ready and caught up", async () => {
    const s = await daemonStatus(root);
    const w = s.watcher as { ready?: boolean; caught_up?: boolean; building?: boolean } | null;
    return w?.ready === true && w.caught_up === true && !w.building;
  });
}

/** Pids of every process running the daemon for `root` (from /proc). */
export function daemonPids(root: string): number[] {
  const out: number[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
      const i = argv.indexOf("--project");
      if (argv.some((a) => a.endsWith("daemon/main.js")) && i >= 0 && argv[i + 1] === root && pidAlive(Number(d))) out.push(Number(d));
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** Stops every daemon the tests started and removes their projects; never leaves processes. */
export async function cleanupAll(): Promise<void> {
  await closeConnections();
  for (const root of roots) {
    try {
      await stopDaemon(root, { timeoutMs: 8000 });
    } catch {
      // fall through to the hard kill
    }
    const lockPid = readLockPid(daemonFiles(root).lock);
    for (const pid of new Set([...daemonPids(root), ...(lockPid ? [lockPid] : [])])) {
      if (pid === process.pid) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
    const sock = daemonFiles(root).socket;
    if (!sock.startsWith(root)) fs.rmSync(sock, { force: true });
  }
  roots.clear();
  for (const c of children) c.kill("SIGKILL");
  children.clear();
}
