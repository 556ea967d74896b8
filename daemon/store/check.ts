import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import type { ResolvedConfig } from "../../shared/config.js";

/** Exercises what the local backend needs, in a scratch database; each failure says what is wrong. */
export function checkLocalBackend(): { ok: boolean; checks: { name: string; ok: boolean; detail?: string }[] } {
  const checks: { name: string; ok: boolean; detail?: string }[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-check-"));
  let db: Database.Database | undefined;
  const step = (name: string, f: () => string | void) => {
    try {
      const detail = f();
      checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
    } catch (err) {
      checks.push({ name, ok: false, detail: (err as Error).message });
    }
  };
  step("better-sqlite3 native binding", () => {
    db = new Database(path.join(dir, "check.db"));
    return `SQLite ${(db.prepare("select sqlite_version() v").get() as { v: string }).v}`;
  });
  if (db) {
    const d = db;
    step("WAL journal", () => {
      if (d.pragma("journal_mode = WAL", { simple: true }) !== "wal") throw new Error("the file system does not support WAL; put the project on a local disk");
    });
    step("FTS5", () => void d.exec("CREATE VIRTUAL TABLE f USING fts5(a, tokenize='porter unicode61'); INSERT INTO f VALUES ('parsing'); SELECT * FROM f WHERE f MATCH 'parse'"));
    step("sqlite-vec extension", () => {
      sqliteVec.load(d);
      d.exec("CREATE VIRTUAL TABLE v USING vec0(e float[4] distance_metric=cosine)");
      d.prepare("INSERT INTO v(rowid, e) VALUES (1, ?)").run(Buffer.from(new Float32Array([1, 0, 0, 0]).buffer));
      return `sqlite-vec ${(d.prepare("select vec_version() v").get() as { v: string }).v}`;
    });
    d.close();
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { ok: checks.every((c) => c.ok), checks };
}

export type BackendCheck = { ok: boolean; checks: { name: string; ok: boolean; detail?: string }[] };

/** `codemem backend-check <backend>`: the configured backend, exercised step by step. */
export async function checkBackend(cfg: ResolvedConfig): Promise<BackendCheck> {
  switch (cfg.store.backend) {
    case "local":
      return checkLocalBackend();
    case "postgres": {
      const { checkPostgresBackend } = await import("./check-postgres.js");
      return checkPostgresBackend(cfg.store);
    }
    case "lancedb": {
      const { checkLanceBackend } = await import("./check-lance.js");
      return checkLanceBackend();
    }
  }
}
