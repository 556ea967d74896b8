import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { PY_PROJECT } from "../helpers.js";

// A real full disk: the project lives on a 32 MB tmpfs (mounting needs root, as on CI).
const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-full-"));
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=32m", "tmpfs", mountPoint]).status === 0;
const root = path.join(mountPoint, "p");
const CLI = path.resolve("dist/client/cli.js");
const INDEX = path.join(root, "codegraph-out/codemem_db/index.db");
const FILLER = path.join(mountPoint, "filler");

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: "utf8", timeout: 60_000 });
const nodes = (): number => JSON.parse(cli("stats", ".", "--json").stdout).node_count as number;

/** Fills the file system until `leaveKb` kilobytes are free. */
function fill(leaveKb: number): void {
  const st = fs.statfsSync(mountPoint);
  const size = st.bavail * st.bsize - leaveKb * 1024;
  fs.writeFileSync(FILLER, Buffer.alloc(Math.max(0, size)));
}

/** A Python module of `n` documented functions (about 180 bytes each). */
function module(n: number): string {
  return Array.from({ length: n }, (_, i) => `def handler_${i}(request):\n    """Handles request kind ${i} and records the outcome ${i * 7}."""\n    return request.reply(${i})\n\n`).join("");
}

afterAll(async () => {
  if (!mounted) return;
  await stopDaemon(root).catch(() => {});
  // Lazily: a daemon still exiting may hold a file open there.
  spawnSync("umount", ["-l", mountPoint]);
  fs.rmSync(mountPoint, { recursive: true, force: true });
});

describe.skipIf(!mounted)("a full disk", () => {
  it("a first build that fills the disk leaves no index and no WAL behind, and says DISK_FULL", async () => {
    for (const [rel, body] of Object.entries({ ...PY_PROJECT, "shop/handlers.py": module(2000) })) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), body);
    }
    fill(300);
    const b = cli("build", ".");
    expect(b.stderr).toMatch(/DISK_FULL: No space left on the disk holding .*index\.db/);
    expect(b.status).toBe(4);
    // Nothing holds the disk: no schema-only index, no WAL (the old code left both, and stats said 0 nodes).
    const left = fs.existsSync(path.dirname(INDEX)) ? fs.readdirSync(path.dirname(INDEX)) : [];
    expect(left.filter((f) => f.startsWith("index.db"))).toEqual([]);
    const stats = cli("stats", ".");
    expect(stats.stderr).toMatch(/INDEX_MISSING/);
    expect(stats.status).toBe(3);
    await stopDaemon(root);
    fs.rmSync(FILLER);
    const again = cli("build", ".");
    expect(again.status, again.stderr).toBe(0);
    expect(nodes()).toBeGreaterThan(2000);
  });

  it("a build that fills the disk keeps the previous index, truncates its WAL and answers from it", async () => {
    const before = nodes();
    await stopDaemon(root);
    fs.writeFileSync(path.join(root, "shop/more_handlers.py"), module(1500).replace(/handler_/g, "more_handler_"));
    fill(200);
    const b = cli("build", ".");
    expect(b.stderr).toMatch(/DISK_FULL/);
    expect(b.stderr).toMatch(/the index is unchanged/);
    expect(b.status).toBe(4);
    await stopDaemon(root);
    expect(fs.existsSync(`${INDEX}-wal`) ? fs.statSync(`${INDEX}-wal`).size : 0).toBe(0);
    expect(nodes()).toBe(before);
    const q = cli("search", ".", "refund an order", "--json");
    expect(q.status, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout).results[0].file_path).toBe("shop/payments.py");
    await stopDaemon(root);
    fs.rmSync(FILLER);
    const again = cli("build", ".");
    expect(again.status, again.stderr).toBe(0);
    expect(nodes()).toBeGreaterThan(before + 1400);
  });
});
