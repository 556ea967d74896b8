/**
 * The LanceDB backend on its own: generations, the atomic switch, crashes mid-apply, readers that
 * outlive builds, and search answers on small hand-made deltas.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, describe, expect, it } from "vitest";
import { LanceStore } from "../../dist/daemon/store/lance.js";
import { checkLanceBackend } from "../../dist/daemon/store/check-lance.js";
import { expectCode, rowids } from "../helpers.js";

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "codemem-lance-")));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let seq = 0;
const newDir = () => path.join(tmp, `idx${++seq}`);

const DIM = 8;
function axis(k: number, dim = DIM): Float32Array {
  const v = new Float32Array(dim);
  v[k % dim] = 1;
  return v;
}

interface Spec {
  name: string;
  doc?: string;
  axis: number;
}

/** A delta replacing `files`: one module node per file (with file words) plus its functions, unit vectors along the given axes. */
function delta(files: Record<string, Spec[]>, extra: Record<string, unknown> = {}, dim = DIM) {
  const nodes: unknown[] = [];
  const communityOf = new Map<string, number>();
  for (const [file, specs] of Object.entries(files)) {
    const entries = [{ name: path.basename(file, ".py"), doc: "", axis: dim - 1, type: "module", id: file }, ...specs.map((s) => ({ doc: "", ...s, type: "function", id: `${file}::${s.name}` }))];
    entries.forEach((e, i) => {
      communityOf.set(e.id, i === 0 ? 0 : 1);
      nodes.push({
        node: {
          id: e.id, name: e.name, type: e.type, file_path: file, qualified_name: e.name, signature: `def ${e.name}()`, docstring: e.doc,
          description: "", line_start: i + 1, line_end: i + 1, language: "python", parent: i === 0 ? undefined : file, code: `def ${e.name}(): ${e.doc}`,
          bases: [], community: 0,
        },
        textHash: `h-${e.id}`,
        lexical: { name: e.name.replace(/_/g, " "), qualified: e.name.replace(/_/g, " "), signature: "", doc: e.doc, path: file.replace(/[/.]/g, " "), body: "" },
        vector: axis(e.axis, dim),
        ...(i === 0 ? { fileWords: specs.map((s) => `${s.name.replace(/_/g, " ")} ${s.doc ?? ""}`).join(" ") } : {}),
      });
    });
  }
  return {
    removedFiles: [],
    upsertFiles: Object.keys(files).map((p) => ({
      row: { path: p, hash: `hash-${p}`, size: 100, language: "python", tokens: 10, line_count: 5, mtime_ms: 1 },
      extract: { path: p, language: "python", moduleDoc: "", lineCount: 5, defs: [], calls: [], imports: [], tokens: 10 },
    })),
    replaceNodesOf: Object.keys(files),
    nodes,
    edgesAdded: [] as { source: string; target: string; type: string }[],
    edgesRemoved: [] as { source: string; target: string; type: string }[],
    communities: [{ id: 0, name: "modules", description: "", size: 1, files: Object.keys(files) }],
    communityOf,
    meta: { embedder: "test-8" },
    ...extra,
  };
}

const FIRST = {
  "shop/payments.py": [
    { name: "charge_card", doc: "charge a credit card", axis: 0 },
    { name: "refund_order", doc: "refund money to the customer", axis: 1 },
  ],
  "shop/models.py": [
    { name: "order_total", doc: "sum of line prices including tax", axis: 2 },
    { name: "apply_tax", doc: "add sales tax", axis: 3 },
  ],
};

async function built(dir: string, d = delta(FIRST)): Promise<InstanceType<typeof LanceStore>> {
  const s = await LanceStore.open(dir, { mode: "build", dim: DIM });
  await s.apply(d);
  return s;
}

async function idOf(s: InstanceType<typeof LanceStore>, rowid: number): Promise<string | undefined> {
  return (await s.catalog()).find((n: { rowid: number }) => n.rowid === rowid)?.id;
}

/** Everything a reader can observe, for before/after comparisons. */
async function snapshot(s: InstanceType<typeof LanceStore>) {
  return {
    meta: await s.meta(),
    files: await s.files(),
    catalog: await s.catalog(),
    edges: await s.edges(),
    communities: await s.communities(),
    lexical: rowids(await s.lexicalNodes(["card", "tax", "refund", "invoice"], 10)),
    files_lexical: rowids(await s.lexicalFiles(["tax", "invoice"], 10)),
    nearest: await s.nearest(axis(0), 3),
  };
}

function hashTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p), createHash("sha1").update(fs.readFileSync(p)).digest("hex"));
    }
  };
  walk(dir);
  return out;
}

const current = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "CURRENT"), "utf8")).generation as string;

describe("opening", () => {
  it("reports a missing index as INDEX_MISSING, for an absent directory and for one without a committed generation", async () => {
    const dir = newDir();
    await expectCode(LanceStore.open(dir, { mode: "read" }), "INDEX_MISSING");
    fs.mkdirSync(path.join(dir, "gens", "g1"), { recursive: true });
    await expectCode(LanceStore.open(dir, { mode: "read" }), "INDEX_MISSING");
    // A build may start without one, but needs a vector width to create it.
    await expectCode(LanceStore.open(dir, { mode: "build" }), "INDEX_MISSING");
  });

  it("reports a damaged pointer or generation as INDEX_CORRUPT; a forced build replaces it", async () => {
    const dir = newDir();
    (await built(dir)).close();
    const good = fs.readFileSync(path.join(dir, "CURRENT"), "utf8");
    fs.writeFileSync(path.join(dir, "CURRENT"), "{not json");
    await expectCode(LanceStore.open(dir, { mode: "read" }), "INDEX_CORRUPT");
    await expectCode(LanceStore.open(dir, { mode: "build", dim: DIM }), "INDEX_CORRUPT");
    fs.writeFileSync(path.join(dir, "CURRENT"), good);
    fs.rmSync(path.join(dir, "gens", current(dir), "nodes.lance"), { recursive: true });
    await expectCode(LanceStore.open(dir, { mode: "read" }), "INDEX_CORRUPT");

    const forced = await LanceStore.open(dir, { mode: "build", dim: DIM, force: true });
    expect(await forced.files()).toEqual([]);
    await forced.apply(delta(FIRST));
    await forced.close();
    const r = await LanceStore.open(dir, { mode: "read" });
    expect((await r.files()).map((f: { path: string }) => f.path)).toEqual(["shop/models.py", "shop/payments.py"]);
    await r.close();
  });

  it("refuses an index of an older schema for answers; any build replaces it", async () => {
    const dir = newDir();
    (await built(dir)).close();
    const conn = await lancedb.connect(path.join(dir, "gens", current(dir)));
    const meta = await conn.openTable("meta");
    await meta.update({ where: "key = 'schema_version'", values: { value: "lance-1" } });
    conn.close();
    await expectCode(LanceStore.open(dir, { mode: "read" }), "INDEX_CORRUPT");
    const rebuilt = await LanceStore.open(dir, { mode: "build", dim: DIM });
    expect(await rebuilt.files()).toEqual([]);
    await rebuilt.apply(delta(FIRST));
    await rebuilt.close();
    const r = await LanceStore.open(dir, { mode: "read" });
    expect((await r.files()).map((f: { path: string }) => f.path)).toEqual(["shop/models.py", "shop/payments.py"]);
    await r.close();
  });

  it("passes its own backend check", async () => {
    const r = await checkLanceBackend(path.join(tmp, "check"));
    expect(r.checks.filter((c: { ok: boolean }) => !c.ok)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.checks.map((c: { name: string }) => c.name)).toEqual(["LanceDB native module", "scratch table write", "full-text search", "vector search (cosine)", "cleanup"]);
    expect(fs.readdirSync(path.join(tmp, "check"))).toEqual([]);
  });
});

describe("search", () => {
  it("answers lexical and nearest queries with the expected rowids, best first", async () => {
    const dir = newDir();
    const s = await built(dir);
    expect(await s.meta()).toMatchObject({ embedder: "test-8", dim: "8" });
    expect(Object.keys(await s.meta()).some((k) => k.startsWith("lance."))).toBe(false);

    const card = rowids(await s.lexicalNodes(["charge", "card"], 5));
    expect(await idOf(s, card[0])).toBe("shop/payments.py::charge_card");
    const tax = rowids(await s.lexicalNodes(["tax"], 5));
    // The name outweighs the docstring: apply_tax first, order_total (tax only in its doc) after.
    expect(await Promise.all(tax.slice(0, 2).map((r: number) => idOf(s, r)))).toEqual(["shop/models.py::apply_tax", "shop/models.py::order_total"]);
    // Stemming: "refunds" finds refund_order.
    expect(await idOf(s, (rowids(await s.lexicalNodes(["refunds"], 5)))[0])).toBe("shop/payments.py::refund_order");
    const files = rowids(await s.lexicalFiles(["tax"], 5));
    expect(await idOf(s, files[0])).toBe("shop/models.py");
    expect(rowids(await s.lexicalNodes(["nothingmatches"], 5))).toEqual([]);
    expect(rowids(await s.lexicalNodes([], 5))).toEqual([]);

    for (const [k, id] of [[0, "shop/payments.py::charge_card"], [1, "shop/payments.py::refund_order"], [3, "shop/models.py::apply_tax"]] as const) {
      const near = await s.nearest(axis(k), 3);
      expect(await idOf(s, near[0].rowid)).toBe(id);
      expect(near[0].sim).toBeCloseTo(1, 5);
      expect(near[1].sim).toBeLessThan(0.01);
    }
    const mixed = Float32Array.from([0.8, 0.6, 0, 0, 0, 0, 0, 0]);
    const near = await s.nearest(mixed, 2);
    expect(await Promise.all(near.map((n: { rowid: number }) => idOf(s, n.rowid)))).toEqual(["shop/payments.py::charge_card", "shop/payments.py::refund_order"]);
    expect(near[0].sim).toBeCloseTo(0.8, 5);
    expect(near[1].sim).toBeCloseTo(0.6, 5);
    await s.close();
  });

  it("takes user text as words, never as query syntax", async () => {
    const s = await built(newDir());
    for (const w of ['"', "'", "a:b", "AND", "OR", "NOT", "(charge", "card)", "*", "~2", "title:card", "\\", "'; drop table nodes; --", "ünïcödé", "card^10", "x".repeat(300), "\u0000"]) {
      await expect(s.lexicalNodes([w], 5)).resolves.toBeInstanceOf(Array);
      await expect(s.lexicalFiles([w], 5)).resolves.toBeInstanceOf(Array);
    }
    expect((rowids(await s.lexicalNodes(["(charge", "card)"], 5))).length).toBeGreaterThan(0);
    await s.close();
  });

  it("finds words added by an incremental apply at once, and forgets replaced ones", async () => {
    const dir = newDir();
    const s = await built(dir);
    const before = new Map((await s.catalog()).map((n: { id: string; rowid: number }) => [n.id, n.rowid]));
    const edit = delta({ "shop/payments.py": [{ name: "charge_card", doc: "charge a credit card", axis: 0 }, { name: "issue_invoice", doc: "print an invoice", axis: 4 }] });
    edit.communityUpdates = new Map([["shop/models.py::apply_tax", 7]]);
    edit.edgesAdded = [{ source: "shop/payments.py::issue_invoice", target: "shop/models.py::order_total", type: "calls" }];
    await s.apply(edit);

    expect(await idOf(s, (rowids(await s.lexicalNodes(["invoice"], 5)))[0])).toBe("shop/payments.py::issue_invoice");
    expect(await idOf(s, (rowids(await s.lexicalFiles(["invoice"], 5)))[0])).toBe("shop/payments.py");
    expect(rowids(await s.lexicalNodes(["refund"], 5))).toEqual([]);
    expect(await idOf(s, (await s.nearest(axis(4), 1))[0].rowid)).toBe("shop/payments.py::issue_invoice");
    const after = await s.catalog();
    // Untouched files keep their rowids; re-indexed ones get new ones.
    expect(after.find((n: { id: string }) => n.id === "shop/models.py::apply_tax").rowid).toBe(before.get("shop/models.py::apply_tax"));
    expect(after.find((n: { id: string }) => n.id === "shop/payments.py::charge_card").rowid).not.toBe(before.get("shop/payments.py::charge_card"));
    expect(after.find((n: { id: string }) => n.id === "shop/models.py::apply_tax").community).toBe(7);
    expect(after.map((n: { id: string }) => n.id).sort()).toEqual(["shop/models.py", "shop/models.py::apply_tax", "shop/models.py::order_total", "shop/payments.py", "shop/payments.py::charge_card", "shop/payments.py::issue_invoice"]);
    expect(await s.edges()).toEqual(edit.edgesAdded);
    const hashes = await s.nodeHashes(["shop/payments.py"]);
    expect([...hashes.keys()].sort()).toEqual(["shop/payments.py", "shop/payments.py::charge_card", "shop/payments.py::issue_invoice"]);
    const vecs = await s.vectors([hashes.get("shop/payments.py::issue_invoice")!.rowid, 999_999]);
    expect([...vecs.values()].map((v: Float32Array) => [...v])).toEqual([[...axis(4)]]);
    expect(await s.code(hashes.get("shop/payments.py::issue_invoice")!.rowid)).toBe("def issue_invoice(): print an invoice");

    // Removing a file removes its nodes, words and file row.
    await s.apply({ ...delta({}), removedFiles: ["shop/models.py"], replaceNodesOf: ["shop/models.py"] });
    expect((await s.files()).map((f: { path: string }) => f.path)).toEqual(["shop/payments.py"]);
    expect(rowids(await s.lexicalNodes(["tax"], 5))).toEqual([]);
    expect(rowids(await s.lexicalFiles(["tax"], 5))).toEqual([]);
    await s.close();
  });

  it("keeps answers through optimize, and prunes old versions", async () => {
    const dir = newDir();
    const s = await built(dir);
    for (let i = 0; i < 3; i++) await s.apply(delta({ "shop/payments.py": FIRST["shop/payments.py"] }));
    const before = await snapshot(s);
    const size = await s.sizeBytes();
    const versions = () => fs.readdirSync(path.join(dir, "gens", current(dir), "nodes.lance", "_versions")).length;
    const had = versions();
    await s.optimize();
    // Same rows; near-tied BM25 scores may swap once deleted rows leave the statistics.
    const sorted = (x: typeof before) => ({ ...x, lexical: [...x.lexical].sort() });
    expect(sorted(await snapshot(s))).toEqual(sorted(before));
    expect(await s.sizeBytes()).toBeLessThan(size);
    // Versions written while compacting are newer than the cutoff and survive; all older ones go.
    expect(versions()).toBeLessThanOrEqual(2);
    expect(had).toBeGreaterThan(5);
    await s.close();
  });

  it("indexes the vectors above 10k nodes and still answers exactly", async () => {
    const dim = 16;
    const files: Record<string, Spec[]> = {};
    for (let f = 0; f < 1000; f++) files[`pkg/m${f}.py`] = Array.from({ length: 10 }, (_, i) => ({ name: `fn_${f}_${i}`, axis: (f + i) % (dim - 1) }));
    const d = delta(files, {}, dim);
    // One distinctive vector to find.
    const target = d.nodes[5] as { vector: Float32Array; node: { id: string } };
    target.vector = Float32Array.from({ length: dim }, (_, i) => (i === 3 || i === 9 ? Math.SQRT1_2 : 0));
    const dir = newDir();
    const s = await LanceStore.open(dir, { mode: "build", dim });
    await s.apply(d);
    const nodes = await (await lancedb.connect(path.join(dir, "gens", current(dir)))).openTable("nodes");
    expect((await nodes.listIndices()).map((i: { indexType: string }) => i.indexType).sort()).toEqual(["FTS", "IvfFlat"]);
    const near = await s.nearest(target.vector, 1);
    expect(await idOf(s, near[0].rowid)).toBe(target.node.id);
    expect(near[0].sim).toBeCloseTo(1, 5);
    expect(await idOf(s, (rowids(await s.lexicalNodes(["fn", "500", "7"], 1)))[0])).toBe("pkg/m500.py::fn_500_7");
    await s.close();
  }, 120_000);
});

describe("atomic apply", () => {
  it("leaves the previous index readable and unchanged when apply fails after some tables were written", async () => {
    const dir = newDir();
    (await built(dir)).close();
    const reader = await LanceStore.open(dir, { mode: "read" });
    const before = await snapshot(reader);
    const gen = current(dir);
    const files = hashTree(path.join(dir, "gens", gen));

    // The files, edges, communities and memberships tables are written before the nodes; a vector
    // of the wrong width fails the nodes' write.
    const bad = delta({ "shop/payments.py": [{ name: "charge_card", axis: 0 }], "shop/new.py": [{ name: "brand_new", axis: 5 }] });
    (bad.nodes[3] as { vector: Float32Array }).vector = new Float32Array(DIM + 1);
    const w = await LanceStore.open(dir, { mode: "build", dim: DIM });
    await expect(w.apply(bad)).rejects.toThrow(/width 9/);

    expect(current(dir)).toBe(gen);
    expect(hashTree(path.join(dir, "gens", gen))).toEqual(files);
    expect(await snapshot(reader)).toEqual(before);
    const fresh = await LanceStore.open(dir, { mode: "read" });
    expect(await snapshot(fresh)).toEqual(before);
    // The failed generation is gone, and the same store can apply a good delta afterwards.
    expect(fs.readdirSync(path.join(dir, "gens"))).toEqual([gen]);
    await w.apply(delta({ "shop/new.py": [{ name: "brand_new", axis: 5 }] }));
    expect(await idOf(w, (rowids(await w.lexicalNodes(["brand"], 1)))[0])).toBe("shop/new.py::brand_new");
    await Promise.all([w.close(), reader.close(), fresh.close()]);
  });

  it("survives a build process killed mid-apply: the old generation stays current and intact, the next apply cleans up", async () => {
    const dir = newDir();
    (await built(dir)).close();
    const gen = current(dir);
    const files = hashTree(path.join(dir, "gens", gen));
    const reader = await LanceStore.open(dir, { mode: "read" });
    const before = await snapshot(reader);

    // The child kills itself with SIGKILL as soon as the new generation's files table has a new
    // version: the first table written, long before the 20k nodes and their index are done.
    const lanceJs = pathToFileURL(path.resolve("dist/daemon/store/lance.js")).href;
    const script = `
      import fs from "node:fs";
      import { LanceStore } from ${JSON.stringify(lanceJs)};
      const dir = ${JSON.stringify(dir)};
      const gens = dir + "/gens";
      const had = new Set(fs.readdirSync(gens));
      const versions = fs.readdirSync(gens + "/${gen}/files.lance/_versions").length;
      const s = await LanceStore.open(dir, { mode: "build", dim: ${DIM} });
      const unit = (k) => { const v = new Float32Array(${DIM}); v[k % ${DIM}] = 1; return v; };
      const nodes = [];
      for (let i = 0; i < 20000; i++) nodes.push({
        node: { id: "big.py::f" + i, name: "f" + i, type: "function", file_path: "big.py", qualified_name: "f" + i, signature: "", docstring: "",
          description: "", line_start: i, line_end: i, language: "python", code: "pass", bases: [], community: 0 },
        textHash: "h" + i, lexical: { name: "f " + i, qualified: "", signature: "", doc: "words of node " + i, path: "big", body: "" }, vector: unit(i),
      });
      setInterval(() => {
        for (const g of fs.readdirSync(gens)) {
          if (had.has(g)) continue;
          try { if (fs.readdirSync(gens + "/" + g + "/files.lance/_versions").length > versions) process.kill(process.pid, "SIGKILL"); } catch {}
        }
      }, 1);
      await s.apply({ removedFiles: [], upsertFiles: [{ row: { path: "big.py", hash: "x", size: 1, language: "python", tokens: 1, line_count: 1, mtime_ms: 1 },
        extract: { path: "big.py", language: "python", moduleDoc: "", lineCount: 1, defs: [], calls: [], imports: [], tokens: 1 } }],
        replaceNodesOf: ["big.py"], nodes, edgesAdded: [], edgesRemoved: [], communities: [], communityOf: new Map(), meta: {} });
      console.log("committed");
      process.exit(0);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (out += b));
    const signal = await new Promise((resolve) => child.on("exit", (_code, sig) => resolve(sig)));
    expect(signal, out).toBe("SIGKILL");

    expect(current(dir)).toBe(gen);
    const orphans = fs.readdirSync(path.join(dir, "gens")).filter((g) => g !== gen);
    expect(orphans.length).toBe(1);
    expect(fs.existsSync(path.join(dir, "LOCK"))).toBe(true);
    expect(hashTree(path.join(dir, "gens", gen))).toEqual(files);
    expect(await snapshot(reader)).toEqual(before);
    const fresh = await LanceStore.open(dir, { mode: "read" });
    expect(await snapshot(fresh)).toEqual(before);

    // The dead build's lock is taken over; its orphan generation is removed after the next commit.
    const w = await LanceStore.open(dir, { mode: "build", dim: DIM });
    await w.apply(delta({ "shop/new.py": [{ name: "brand_new", axis: 5 }] }));
    expect(fs.readdirSync(path.join(dir, "gens")).sort()).toEqual([gen, current(dir)].sort());
    expect(fs.existsSync(path.join(dir, "LOCK"))).toBe(false);
    await Promise.all([w.close(), reader.close(), fresh.close()]);
  }, 60_000);

  it("gives readers opened before an apply the old index until they refresh, and leaves the old generation's files untouched", async () => {
    const dir = newDir();
    const w = await built(dir);
    const reader = await LanceStore.open(dir, { mode: "read" });
    const before = await snapshot(reader);
    const gen = current(dir);
    const files = hashTree(path.join(dir, "gens", gen));

    await w.apply(delta({ "shop/payments.py": [{ name: "issue_invoice", doc: "print an invoice", axis: 0 }] }));
    expect(current(dir)).not.toBe(gen);
    // The old generation was linked, not copied, and nothing in it changed.
    expect(hashTree(path.join(dir, "gens", gen))).toEqual(files);
    expect(await snapshot(reader)).toEqual(before);

    const later = await LanceStore.open(dir, { mode: "read" });
    const after = await snapshot(later);
    expect(after).not.toEqual(before);
    expect(after.lexical.length).toBeGreaterThan(0);
    expect(await idOf(later, (rowids(await later.lexicalNodes(["invoice"], 1)))[0])).toBe("shop/payments.py::issue_invoice");
    await reader.refresh(["shop/payments.py"]);
    expect(await snapshot(reader)).toEqual(after);
    await Promise.all([w.close(), reader.close(), later.close()]);
  });

  it("keeps a reader left behind by two applies answering, each answer from one generation, and moves it on refresh", async () => {
    const dir = newDir();
    const w = await built(dir);
    const reader = await LanceStore.open(dir, { mode: "read" });
    const old = await snapshot(reader);
    const first = current(dir);
    await w.apply(delta({ "shop/payments.py": [{ name: "issue_invoice", doc: "print an invoice", axis: 0 }] }));
    await w.apply(delta({ "shop/models.py": [{ name: "issue_receipt", doc: "print a receipt with tax", axis: 2 }] }));
    expect(fs.existsSync(path.join(dir, "gens", first))).toBe(false);
    const latest = await LanceStore.open(dir, { mode: "read" });
    const now = await snapshot(latest);
    // Its generation's files are gone: each read answers from what Lance still holds, or moves
    // the reader to the committed generation and answers from there; never a mix, never an error.
    const seen = await snapshot(reader);
    for (const k of Object.keys(now) as (keyof typeof now)[]) expect([old[k], now[k]]).toContainEqual(seen[k]);
    await reader.refresh([]);
    expect(await snapshot(reader)).toEqual(now);
    await Promise.all([w.close(), reader.close(), latest.close()]);
  });

  it("refuses a second writer's apply on top of a generation that moved on", async () => {
    const dir = newDir();
    (await built(dir)).close();
    const a = await LanceStore.open(dir, { mode: "build", dim: DIM });
    const b = await LanceStore.open(dir, { mode: "build", dim: DIM });
    await a.apply(delta({ "shop/a.py": [{ name: "from_a", axis: 4 }] }));
    await expectCode(b.apply(delta({ "shop/b.py": [{ name: "from_b", axis: 5 }] })), "BUILD_IN_PROGRESS");
    const r = await LanceStore.open(dir, { mode: "read" });
    expect((await r.files()).map((f: { path: string }) => f.path)).toContain("shop/a.py");
    expect((await r.files()).map((f: { path: string }) => f.path)).not.toContain("shop/b.py");
    await Promise.all([a.close(), b.close(), r.close()]);
  });

  it("replaces the index at commit when a forced build brings another vector width", async () => {
    const dir = newDir();
    (await built(dir)).close();
    const reader = await LanceStore.open(dir, { mode: "read" });
    const before = await snapshot(reader);
    const w = await LanceStore.open(dir, { mode: "build", dim: 16, force: true });
    expect(await w.files()).toEqual([]);
    expect((await w.meta()).dim).toBe("16");
    // Nothing is visible before the commit.
    const early = await LanceStore.open(dir, { mode: "read" });
    expect(await snapshot(early)).toEqual(before);
    await w.apply(delta(FIRST, {}, 16));
    const later = await LanceStore.open(dir, { mode: "read" });
    expect((await later.meta()).dim).toBe("16");
    expect(await idOf(later, (await later.nearest(axis(3, 16), 1))[0].rowid)).toBe("shop/models.py::apply_tax");
    // Without --force another width is refused by the write, not silently mixed in.
    const plain = await LanceStore.open(dir, { mode: "build", dim: 8 });
    expect((await plain.meta()).dim).toBe("16");
    await expect(plain.apply(delta(FIRST))).rejects.toThrow(/width 8/);
    await Promise.all([w.close(), reader.close(), early.close(), later.close(), plain.close()]);
  });
});
