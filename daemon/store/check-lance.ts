import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type * as LanceDb from "@lancedb/lancedb";
import { loadLance, type Lance } from "./lance-tables.js";

type Check = { name: string; ok: boolean; detail?: string };

/**
 * Exercises what the LanceDB backend needs in a scratch table under `dir` (the system temp
 * directory by default; pass the index's parent to test that file system); each failure says what is wrong.
 */
export async function checkLanceBackend(dir?: string): Promise<{ ok: boolean; checks: Check[] }> {
  const checks: Check[] = [];
  const step = async (name: string, f: () => Promise<string | void> | string | void): Promise<boolean> => {
    try {
      const detail = await f();
      checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
      return true;
    } catch (err) {
      checks.push({ name, ok: false, detail: (err as Error).message.split("\n")[0] });
      return false;
    }
  };
  let lance: Lance | undefined;
  await step("LanceDB native module", () => {
    lance = loadLance();
    return `@lancedb/lancedb ${lance.version} on ${process.platform}-${process.arch}`;
  });
  if (!lance) return { ok: false, checks };
  const l = lance;

  const parent = dir ?? os.tmpdir();
  let scratch: string | undefined;
  let conn: LanceDb.Connection | undefined;
  let table: LanceDb.Table | undefined;
  const written = await step("scratch table write", async () => {
    fs.mkdirSync(parent, { recursive: true });
    scratch = fs.mkdtempSync(path.join(parent, ".codemem-lance-check-"));
    conn = await l.db.connect(scratch);
    table = await conn.createTable("check", [
      { rowid: 1, text: "parsing the configuration file", vector: [1, 0, 0, 0] },
      { rowid: 2, text: "rendering html templates", vector: [0, 1, 0, 0] },
      { rowid: 3, text: "opening a network socket", vector: [0, 0, 1, 0] },
    ]);
    return scratch;
  });
  if (written && table) {
    const t = table;
    await step("full-text search", async () => {
      await t.createIndex("text", { config: l.db.Index.fts({ stem: true, withPosition: false }) });
      const hits = (await t.query().fullTextSearch(new l.db.MatchQuery("parse", "text")).select(["rowid"]).limit(3).toArray()) as { rowid: number }[];
      if (Number(hits[0]?.rowid) !== 1) throw new Error(`a search for "parse" answered ${JSON.stringify(hits.map((h) => Number(h.rowid)))}, expected [1]`);
    });
    await step("vector search (cosine)", async () => {
      const hits = (await t.vectorSearch([0.1, 0.9, 0, 0]).distanceType("cosine").select(["rowid"]).limit(1).toArray()) as { rowid: number; _distance: number }[];
      if (Number(hits[0]?.rowid) !== 2) throw new Error(`the nearest row was ${Number(hits[0]?.rowid)}, expected 2`);
      return `similarity ${(1 - hits[0]._distance).toFixed(3)}`;
    });
  }
  await step("cleanup", () => {
    table?.close();
    conn?.close();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });
  return { ok: checks.every((c) => c.ok), checks };
}
