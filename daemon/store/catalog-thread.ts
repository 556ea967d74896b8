/**
 * A local index's catalog (every node's ranking metadata) read on a thread of its own. A daemon
 * starts the read as it starts, so it runs beside the loading of its modules (~0.6 s of the one
 * thread's time), and its reader takes the catalog as JSON text built by SQLite: parsing that takes
 * ~0.1 s on the reader's thread against ~0.4 s for reading the rows there (Go src, 60K nodes).
 * Rows cloned between threads would cost more than reading them (~0.27 s to deserialize).
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { CatalogNode } from "./types.js";

/** The catalog as one snapshot saw it: `built_at` names the build (every build writes a new one). */
export interface CatalogSnapshot {
  builtAt: string | null;
  /** A JSON array of one array per column of CATALOG_FIELDS, rows in the table's scan order. */
  columns: string;
}

/** The catalog's columns, in CatalogNode's order; LocalStore reads the same on its own thread. */
export const CATALOG_FIELDS = ["rowid", "id", "name", "type", "file_path", "qualified_name", "signature", "docstring", "description", "line_start", "line_end", "language", "parent", "community"] as const;

/** An unclaimed read is dropped after this long (the project moved to another backend, the open failed). */
const KEEP_MS = 60_000;
const started = new Map<string, Promise<CatalogSnapshot>>();

/** Starts reading the catalog of the index at `file` on another thread; `takeCatalog(file)` claims it. */
export function prefetchCatalog(file: string): Promise<CatalogSnapshot> {
  const running = started.get(file);
  if (running) return running;
  const read = new Promise<CatalogSnapshot>((resolve, reject) => {
    const w = new Worker(new URL("./catalog-thread.js", import.meta.url), { workerData: { readCatalog: file } });
    w.once("message", (m: CatalogSnapshot | { error: string }) => ("error" in m ? reject(new Error(m.error)) : resolve(m)));
    w.once("error", reject);
    w.once("exit", (code) => reject(new Error(`the catalog thread exited (${code}) before reading`)));
  });
  read.catch(() => {}); // the reader reads the rows itself then
  started.set(file, read);
  setTimeout(() => {
    if (started.get(file) === read) started.delete(file);
  }, KEEP_MS).unref();
  return read;
}

/** The read `prefetchCatalog(file)` started, once (the caller checks it is of the build it opened). */
export function takeCatalog(file: string): Promise<CatalogSnapshot> | undefined {
  const read = started.get(file);
  started.delete(file);
  return read;
}

/** The nodes of a snapshot, or undefined when its rows did not come in rowid order (then read them in order). */
export function catalogNodes(snapshot: CatalogSnapshot): CatalogNode[] | undefined {
  const c = JSON.parse(snapshot.columns) as unknown[][];
  const [rowid, id, name, type, file_path, qualified_name, signature, docstring, description, line_start, line_end, language, parent, community] = c as [
    number[], string[], string[], string[], string[], string[], string[], string[], string[], number[], number[], string[], (string | null)[], number[],
  ];
  const out = new Array<CatalogNode>(rowid.length);
  for (let i = 0; i < rowid.length; i++) {
    if (i > 0 && rowid[i] <= rowid[i - 1]) return undefined;
    out[i] = { rowid: rowid[i], id: id[i], name: name[i], type: type[i], file_path: file_path[i], qualified_name: qualified_name[i], signature: signature[i], docstring: docstring[i], description: description[i], line_start: line_start[i], line_end: line_end[i], language: language[i], parent: parent[i], community: community[i] };
  }
  return out;
}

/**
 * One read transaction: the build's stamp and the columns as JSON arrays, made by SQLite in one
 * scan of the table (no string per value on this thread). A rowid table scans in rowid order; an
 * ORDER BY here made SQLite copy the rows through a subquery first (0.45 → 0.53 s).
 */
function readSnapshot(file: string): CatalogSnapshot {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    const columns = `SELECT '[' || ${CATALOG_FIELDS.map((f) => `json_group_array(${f})`).join(" || ',' || ")} || ']' FROM nodes`;
    return db.transaction(() => {
      const builtAt = (db.prepare("SELECT value FROM meta WHERE key = 'built_at'").pluck().get() as string | undefined) ?? null;
      return { builtAt, columns: db.prepare(columns).pluck().get() as string };
    })();
  } finally {
    db.close();
  }
}

const job = isMainThread ? undefined : (workerData as { readCatalog?: string } | undefined)?.readCatalog;
if (job) {
  try {
    parentPort!.postMessage(readSnapshot(job));
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message });
  }
}
