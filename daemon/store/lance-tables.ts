import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type * as Arrow from "apache-arrow";
import type * as LanceDb from "@lancedb/lancedb";
import { CodememError } from "../../shared/errors.js";

/** The LanceDB client and the Arrow build it was compiled against, loaded on first use. */
export interface Lance {
  db: typeof LanceDb;
  arrow: typeof Arrow;
  version: string;
}

const require = createRequire(import.meta.url);
let loaded: Lance | undefined;

/**
 * Loads the native module. Both packages are CommonJS and are required, not imported: an ESM
 * import of apache-arrow yields a second copy of its classes, which LanceDB rejects as foreign.
 */
export function loadLance(): Lance {
  if (loaded) return loaded;
  try {
    // Lance logs a warning on every table it creates; builds would print one per table.
    process.env.LANCEDB_LOG ??= "error";
    const db = require("@lancedb/lancedb") as typeof LanceDb;
    const arrow = require("apache-arrow") as typeof Arrow;
    // The package's exports map hides package.json; read it beside the resolved entry (dist/index.js).
    const pkg = path.join(path.dirname(require.resolve("@lancedb/lancedb")), "..", "package.json");
    const version = (JSON.parse(fs.readFileSync(pkg, "utf8")) as { version: string }).version;
    loaded = { db, arrow, version };
    return loaded;
  } catch (err) {
    const platform = `${process.platform}-${process.arch}`;
    throw new CodememError(
      "BACKEND_UNSUPPORTED",
      `LanceDB's native module does not load on ${platform} (${(err as Error).message.split("\n")[0]}). ` +
        `Reinstall with \`npm install @lancedb/lancedb ${nativePackage()}\`, or use \`--backend local\`.`,
      { platform, package: nativePackage() },
    );
  }
}

/** The platform package that carries LanceDB's binary here, e.g. @lancedb/lancedb-linux-x64-gnu. */
export function nativePackage(): string {
  const libc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime ? "gnu" : "musl";
  const suffix = process.platform === "linux" ? `-${libc}` : process.platform === "win32" ? "-msvc" : "";
  return `@lancedb/lancedb-${process.platform}-${process.arch}${suffix}`;
}

type Column = "utf8" | "utf8?" | "int32" | "int64" | "float64" | "vector";

/** Columns of every table; `vector` is fixed-size float32 of the index's width. */
export const TABLES = {
  nodes: {
    rowid: "int64", id: "utf8", name: "utf8", type: "utf8", file_path: "utf8", qualified_name: "utf8", signature: "utf8",
    docstring: "utf8", description: "utf8", line_start: "int32", line_end: "int32", language: "utf8", parent: "utf8?",
    code: "utf8", text_hash: "utf8", text: "utf8", vector: "vector",
  },
  /** Whole-file words; rowid is the file's module node. */
  file_words: { rowid: "int64", path: "utf8", text: "utf8" },
  files: { path: "utf8", hash: "utf8", size: "float64", language: "utf8", tokens: "float64", line_count: "float64", mtime_ms: "float64", extract: "utf8", indexed_at: "utf8" },
  /** key: a hash of (source, target, type), to delete edges by one column. */
  /** dispatch: a call's run-time candidate's confidence (GraphEdge.dispatch), 0 on every other edge. */
  edges: { key: "utf8", source: "utf8", target: "utf8", type: "utf8", dispatch: "float64" },
  communities: { id: "int32", name: "utf8", description: "utf8", size: "int32", files: "utf8" },
  /** Community of each node id, apart from the nodes so a re-clustering rewrites two small columns, not the vectors. */
  memberships: { id: "utf8", community: "int32" },
  meta: { key: "utf8", value: "utf8" },
} satisfies Record<string, Record<string, Column>>;

export type TableName = keyof typeof TABLES;
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];
export type Row = Record<string, unknown>;

/** The Arrow schema of one table at vector width `dim`. */
export function schemaOf(lance: Lance, table: TableName, dim: number): Arrow.Schema {
  const a = lance.arrow;
  return new a.Schema(Object.entries(TABLES[table]).map(([name, kind]) => new a.Field(name, arrowType(lance, kind, dim), kind === "utf8?")));
}

function arrowType(lance: Lance, kind: Column, dim: number): Arrow.DataType {
  const a = lance.arrow;
  switch (kind) {
    case "utf8":
    case "utf8?":
      return new a.Utf8();
    case "int32":
      return new a.Int32();
    case "int64":
      return new a.Int64();
    case "float64":
      return new a.Float64();
    case "vector":
      return new a.FixedSizeList(dim, new a.Field("item", new a.Float32(), true));
  }
}

/** Rows as an Arrow table in record batches of `batchRows`; a vector of another width throws. */
export function toArrow(lance: Lance, table: TableName, dim: number, rows: Row[], batchRows: number): Arrow.Table {
  const a = lance.arrow;
  const schema = schemaOf(lance, table, dim);
  const batches: Arrow.RecordBatch[] = [];
  for (let start = 0; start < rows.length; start += batchRows) {
    const chunk = rows.slice(start, start + batchRows);
    const children = schema.fields.map((f) => columnData(lance, table, f, TABLES[table][f.name as keyof (typeof TABLES)[TableName]] as Column, chunk, dim));
    batches.push(new a.RecordBatch(schema, a.makeData({ type: new a.Struct(schema.fields), length: chunk.length, nullCount: 0, children })));
  }
  return new a.Table(schema, batches);
}

function columnData(lance: Lance, table: TableName, field: Arrow.Field, kind: Column, rows: Row[], dim: number): Arrow.Data {
  const a = lance.arrow;
  const n = rows.length;
  const name = field.name;
  switch (kind) {
    case "utf8":
    case "utf8?":
      return a.vectorFromArray(rows.map((r) => (r[name] == null ? (kind === "utf8?" ? null : "") : String(r[name]))), new a.Utf8()).data[0];
    case "int32":
      return a.makeData({ type: new a.Int32(), length: n, data: Int32Array.from(rows, (r) => Number(r[name])) });
    case "int64":
      return a.makeData({ type: new a.Int64(), length: n, data: BigInt64Array.from(rows, (r) => BigInt(r[name] as number)) });
    case "float64":
      return a.makeData({ type: new a.Float64(), length: n, data: Float64Array.from(rows, (r) => Number(r[name])) });
    case "vector": {
      const flat = new Float32Array(n * dim);
      rows.forEach((r, i) => {
        const v = r[name] as Float32Array;
        if (v.length !== dim) throw new Error(`${table}: the vector of row ${String(r.id ?? i)} has width ${v.length}, the index stores ${dim}`);
        flat.set(v, i * dim);
      });
      return a.makeData({ type: field.type as Arrow.FixedSizeList, length: n, nullCount: 0, child: a.makeData({ type: new a.Float32(), length: n * dim, data: flat }) });
    }
  }
}

/** Plain objects from an Arrow result, column by column: int64 as number, vectors as copied Float32Array. */
export function fromArrow(t: Arrow.Table): Row[] {
  const rows: Row[] = Array.from({ length: t.numRows }, () => ({}));
  for (const field of t.schema.fields) {
    const col = t.getChild(field.name);
    if (!col) continue;
    const name = field.name;
    if (field.type instanceof loadLance().arrow.FixedSizeList) {
      for (let i = 0; i < t.numRows; i++) rows[i][name] = Float32Array.from((col.get(i) as Arrow.Vector<Arrow.Float32>).toArray());
      continue;
    }
    let i = 0;
    for (const v of col) rows[i++][name] = typeof v === "bigint" ? Number(v) : v;
  }
  return rows;
}

/** A SQL string literal: user text cannot end it early. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** `column IN (...)` predicates over `values`, in chunks that keep each statement small. */
export function inChunks(column: string, values: (string | number)[], size = 500): string[] {
  const out: string[] = [];
  for (let i = 0; i < values.length; i += size) {
    const list = values.slice(i, i + size).map((v) => (typeof v === "number" ? String(Math.trunc(v)) : sqlString(v)));
    out.push(`${column} IN (${list.join(", ")})`);
  }
  return out;
}
