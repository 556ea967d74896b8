import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
import { waitFor } from "../daemon/helpers.js";
import { makeProject, PY_PROJECT } from "../helpers.js";

const CLI = path.resolve("dist/client/cli.js");
const p = makeProject(PY_PROJECT);
afterAll(async () => {
  await stopDaemon(p.root);
  p.cleanup();
});
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: p.root, encoding: "utf8", timeout: 60_000 });
const INDEX = path.join(p.root, "codegraph-out/codemem_db/index.db");
const SYNAPSES = path.join(p.root, ".codemem/synapses.db");

/** Overwrites the first 64 bytes of every page of the named tables and indexes (not page 1, the schema). */
function damage(file: string, names: string[]): number {
  const db = new Database(file, { readonly: true });
  const pages = db
    .prepare(`SELECT pageno FROM dbstat WHERE name IN (${names.map(() => "?").join(",")}) AND pageno > 1`)
    .all(...names)
    .map((r) => (r as { pageno: number }).pageno);
  db.close();
  const header = Buffer.alloc(2);
  const fd = fs.openSync(file, "r+");
  fs.readSync(fd, header, 0, 2, 16);
  const size = header.readUInt16BE(0) === 1 ? 65536 : header.readUInt16BE(0);
  for (const pg of pages) fs.writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, (pg - 1) * size);
  fs.closeSync(fd);
  return pages.length;
}

describe("damaged databases", () => {
  it("a clean daemon stop leaves no WAL beside the index", async () => {
    expect(cli("build", ".").status).toBe(0);
    expect(cli("query", ".", "How are card payments retried?").status).toBe(0);
    expect(cli("skeleton", ".", "shop/payments.py").status).toBe(0); // an outline opened writes the synapse store
    await stopDaemon(p.root);
    for (const wal of [`${INDEX}-wal`, `${SYNAPSES}-wal`]) expect(fs.existsSync(wal) ? fs.statSync(wal).size : 0, wal).toBe(0);
  });

  it("a save indexed by the watcher (whose close leaves the log to the settled work) still leaves no WAL after a clean stop", async () => {
    expect(cli("query", ".", "How are card payments retried?").status).toBe(0);
    const file = path.join(p.root, "shop/payments.py");
    fs.appendFileSync(file, "\n\ndef settle_wal_probe():\n    return 1\n");
    await waitFor("the saved function searchable", () => JSON.parse(cli("search", ".", "settle_wal_probe", "--json").stdout).results.some((r: { name: string }) => r.name === "settle_wal_probe"), 30_000, 200);
    await stopDaemon(p.root);
    expect(fs.existsSync(`${INDEX}-wal`) ? fs.statSync(`${INDEX}-wal`).size : 0).toBe(0);
  });

  it("a bad page in the synapse store does not fail answers: the store is kept aside and learning starts over", async () => {
    expect(damage(SYNAPSES, ["synapses", "synapses_a_weight", "synapses_b_weight", "synapse_nodes"])).toBeGreaterThan(0);
    for (const args of [["query", ".", "How are card payments retried?"], ["search", ".", "charge card"], ["skeleton", ".", "shop/payments.py"]]) {
      const r = cli(...args);
      expect(r.stderr).not.toMatch(/INTERNAL/);
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(0);
    }
    const aside = fs.readdirSync(path.dirname(SYNAPSES)).filter((f) => f.startsWith("synapses.db.corrupt-"));
    expect(aside).toHaveLength(1);
    await stopDaemon(p.root);
  });

  it("a bad page in the index: answers say INDEX_CORRUPT and how to fix it, and build --force rebuilds, keeping the damaged file", async () => {
    expect(damage(INDEX, ["nodes", "node_text"])).toBeGreaterThan(0);
    const stats = cli("query", ".", "How are card payments retried?");
    expect(stats.status).toBe(3);
    expect(stats.stderr).toMatch(/INDEX_CORRUPT/);
    expect(stats.stderr).toMatch(/codemem build --force/);
    await stopDaemon(p.root);
    const b = cli("build", ".", "--force");
    expect(b.status, b.stderr).toBe(0);
    expect(fs.readdirSync(path.dirname(INDEX)).filter((f) => f.startsWith("index.db.corrupt-"))).toHaveLength(1);
    const after = cli("query", ".", "How are card payments retried?", "--json");
    expect(after.status, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).citations[0].file_path).toBe("shop/payments.py");
  });
});

/**
 * Overwrites every copy in the file of one node's stored text (its deflated blob; without `name`, the
 * file's module node) with 0xa5 bytes: a fault inside a cell's payload, which leaves the page's
 * structure, and so SQLite's checks, intact.
 */
function damageNodeText(file: string, filePath: string, name?: string): void {
  const db = new Database(file, { readonly: true });
  const where = name === undefined ? "n.type = 'module'" : "n.name = ?";
  const { text } = db.prepare(`SELECT t.text AS text FROM nodes n JOIN node_text t ON t.rowid = n.rowid WHERE n.file_path = ? AND ${where}`).get(filePath, ...(name === undefined ? [] : [name])) as { text: Buffer };
  db.close();
  const bytes = fs.readFileSync(file);
  let copies = 0;
  for (let at = bytes.indexOf(text); at >= 0; at = bytes.indexOf(text, at + 1), copies++) bytes.fill(0xa5, at, at + text.length);
  expect(copies, `${name ?? filePath}'s text in ${file}`).toBeGreaterThan(0);
  fs.writeFileSync(file, bytes);
}

describe("a damaged index under plain builds and answers", () => {
  const q = makeProject(PY_PROJECT);
  afterAll(async () => {
    await stopDaemon(q.root);
    q.cleanup();
  });
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: q.root, encoding: "utf8", timeout: 60_000 });
  const index = path.join(q.root, "codegraph-out/codemem_db/index.db");
  const aside = () => fs.readdirSync(path.dirname(index)).filter((f) => f.startsWith("index.db.corrupt-"));

  it("a plain build on an index with a bad page fails INDEX_CORRUPT naming build --force, which then rebuilds it", async () => {
    expect(run("build", ".").status).toBe(0);
    await stopDaemon(q.root);
    expect(damage(index, ["node_text"])).toBeGreaterThan(0);
    const plain = run("build", ".");
    expect(plain.status, plain.stdout).toBe(3);
    expect(plain.stderr).toMatch(/INDEX_CORRUPT/);
    expect(plain.stderr).toMatch(/codemem build --force/);
    expect(aside()).toHaveLength(0); // a plain build leaves the file to the forced one
    const forced = run("build", ".", "--force");
    expect(forced.status, forced.stderr).toBe(0);
    expect(aside()).toHaveLength(1);
    expect(run("build", ".").status).toBe(0);
  });

  it("an answer that reads a damaged node text says INDEX_CORRUPT and how to fix it", async () => {
    expect(run("build", ".").status).toBe(0);
    const before = run("query", ".", "How are card payments charged to the card?", "--json");
    expect(before.status, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/def charge_card/);
    await stopDaemon(q.root);
    damageNodeText(index, "shop/payments.py", "charge_card");
    const after = run("query", ".", "How are card payments charged to the card?");
    expect(after.stdout).not.toMatch(/def charge_card/);
    expect(after.stderr).toMatch(/INDEX_CORRUPT/);
    expect(after.stderr).toMatch(/codemem build --force/);
    expect(after.status).toBe(3);
  });

  it("a plain build re-indexing a file whose stored text is damaged says INDEX_CORRUPT; build --force repairs it", async () => {
    expect(run("build", ".", "--force").status).toBe(0);
    await stopDaemon(q.root);
    damageNodeText(index, "shop/payments.py");
    q.write("shop/payments.py", PY_PROJECT["shop/payments.py"] + "\n\ndef void_payment(order):\n    return refund(order)\n");
    const plain = run("build", ".");
    expect(plain.stderr).toMatch(/INDEX_CORRUPT/);
    expect(plain.stderr).toMatch(/codemem build --force/);
    expect(plain.status).toBe(3);
    const forced = run("build", ".", "--force");
    expect(forced.status, forced.stderr).toBe(0);
    const answer = run("query", ".", "How are card payments charged to the card?");
    expect(answer.status, answer.stderr).toBe(0);
    expect(answer.stdout).toMatch(/def charge_card/);
  });
});
