import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CodememError } from "../shared/errors.js";
import { stateDirs, writeFileAtomic } from "../shared/paths.js";

/**
 * Audit log: one JSON line per tool call under `.codemem/audit/audit-YYYYMMDD[.N].jsonl`, each
 * line carrying the hash of the line before it (across files), so an edit, a removed line or a
 * removed file breaks the chain at a line that verification names.
 */
export type AuditOutcome = "ok" | "error" | "forbidden" | "rate_limited";

export interface AuditInput {
  who: string;
  role: string | null;
  tool: string;
  args: unknown;
  outcome: AuditOutcome;
  /** Stable error code of a refused or failed call. */
  code?: string;
  peer?: string;
}

export interface AuditEntry {
  v: 1;
  time: string;
  who: string;
  role: string | null;
  tool: string;
  /** sha256 of the canonical JSON of the arguments: the arguments themselves are never stored. */
  args_sha256: string;
  outcome: AuditOutcome;
  code?: string;
  peer?: string;
  prev: string;
  hash: string;
}

export const GENESIS = "0".repeat(64);
/** Rotate within a day past this size. */
export const AUDIT_MAX_BYTES = 10 * 1024 * 1024;
const FILE_RE = /^audit-(\d{8})(?:\.(\d+))?\.jsonl$/;

/** JSON with object keys sorted at every depth: the same value always hashes the same. */
/** Arguments nested deeper than this cannot be recorded, so they are not served (the recursion overflowed at ~10,000). */
export const MAX_ARGS_DEPTH = 64;

export function canonicalJson(v: unknown, depth = 0): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (depth >= MAX_ARGS_DEPTH) throw new CodememError("INVALID_ARGUMENT", `arguments nested deeper than ${MAX_ARGS_DEPTH} levels cannot be audited; flatten them.`);
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x, depth + 1)).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k], depth + 1)}`)
    .join(",")}}`;
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function hashOf(entry: Omit<AuditEntry, "hash"> & { hash?: string }): string {
  const { hash: _omit, ...rest } = entry;
  return sha256(canonicalJson(rest));
}

/** Audit files of a project in chain order (day, then rotation number). */
export function auditFiles(root: string): string[] {
  const dir = stateDirs(root).auditDir;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => ({ n, m: FILE_RE.exec(n) }))
    .filter((x): x is { n: string; m: RegExpExecArray } => x.m !== null)
    .sort((a, b) => a.m[1]!.localeCompare(b.m[1]!) || Number(a.m[2] ?? 0) - Number(b.m[2] ?? 0))
    .map((x) => path.join(dir, x.n));
}

/** Last non-empty line of a file, reading only its tail. */
function lastLine(file: string): string | undefined {
  const fd = fs.openSync(file, "r");
  try {
    const size = fs.fstatSync(fd).size;
    let chunk = 64 * 1024;
    for (;;) {
      const start = Math.max(0, size - chunk);
      const buf = Buffer.alloc(size - start);
      fs.readSync(fd, buf, 0, buf.length, start);
      const lines = buf.toString("utf8").split("\n").filter((l) => l.trim() !== "");
      if (lines.length > 1 || start === 0) return lines.at(-1);
      chunk *= 4;
    }
  } finally {
    fs.closeSync(fd);
  }
}

function dayOf(d: Date): string {
  return d.toISOString().slice(0, 10).replace(/-/g, "");
}

export interface AuditLogOptions {
  /** Rotation size in bytes (default 10 MB). */
  maxBytes?: number;
  /** Called once per entry written (the server counts codemem_audit_events_total with it). */
  onWrite?: (entry: AuditEntry) => void;
  /** Clock, for tests of day rotation. */
  now?: () => Date;
}

/** Appends chained entries to a project's audit log. */
export class AuditLog {
  private readonly dir: string;
  private readonly maxBytes: number;

  constructor(readonly root: string, private readonly opts: AuditLogOptions = {}) {
    this.dir = stateDirs(root).auditDir;
    this.maxBytes = opts.maxBytes ?? AUDIT_MAX_BYTES;
  }

  /**
   * One synchronous append per entry. The chain head is read from the newest file's tail on every
   * append, so several logs in this process (or a restart) continue the same chain.
   */
  append(input: AuditInput): AuditEntry {
    const now = (this.opts.now ?? (() => new Date()))();
    fs.mkdirSync(this.dir, { recursive: true });
    const files = auditFiles(this.root);
    const newest = files.at(-1);
    let prev = GENESIS;
    if (newest) {
      const line = lastLine(newest);
      if (line) {
        try {
          prev = (JSON.parse(line) as AuditEntry).hash ?? sha256(line);
        } catch {
          prev = sha256(line); // a damaged tail still anchors the chain; verification reports it
        }
      }
    }
    const entry: Omit<AuditEntry, "hash"> = {
      v: 1,
      time: now.toISOString(),
      who: input.who,
      role: input.role,
      tool: input.tool,
      args_sha256: sha256(canonicalJson(input.args ?? {})),
      outcome: input.outcome,
      ...(input.code ? { code: input.code } : {}),
      ...(input.peer ? { peer: input.peer } : {}),
      prev,
    };
    const full: AuditEntry = { ...entry, hash: hashOf(entry) };
    const line = JSON.stringify(full) + "\n";
    fs.appendFileSync(this.target(newest, now, Buffer.byteLength(line)), line);
    this.opts.onWrite?.(full);
    return full;
  }

  /** Whether entries can be written now (the directory exists or can be made, and is writable). */
  writable(): boolean {
    try {
      fs.mkdirSync(this.dir, { recursive: true });
      fs.accessSync(this.dir, fs.constants.W_OK);
      const newest = auditFiles(this.root).at(-1);
      if (newest) fs.accessSync(newest, fs.constants.W_OK);
      return true;
    } catch {
      return false;
    }
  }

  /** The file to append to: today's newest, or the next rotation when it would pass maxBytes. */
  private target(newest: string | undefined, now: Date, lineBytes: number): string {
    const day = dayOf(now);
    const m = newest ? FILE_RE.exec(path.basename(newest)) : null;
    if (!newest || !m || m[1]! < day) return path.join(this.dir, `audit-${day}.jsonl`);
    const size = fs.statSync(newest).size;
    if (size > 0 && size + lineBytes > this.maxBytes) return path.join(this.dir, `audit-${m[1]}.${Number(m[2] ?? 0) + 1}.jsonl`);
    return newest;
  }
}

export interface AuditVerification {
  ok: boolean;
  entries: number;
  files: string[];
  /** The first line that breaks the chain (1-based line within its file). */
  first_bad?: { file: string; line: number; reason: "unparseable" | "hash_mismatch" | "chain_broken" };
  by_tool: Record<string, number>;
  by_user: Record<string, number>;
  by_outcome: Record<string, number>;
}

/** Verifies the whole chain of a project's audit log and summarises it. */
export function verifyAudit(root: string): AuditVerification {
  const files = auditFiles(root);
  const out: AuditVerification = { ok: true, entries: 0, files, by_tool: {}, by_user: {}, by_outcome: {} };
  let prev = GENESIS;
  const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
  for (const file of files) {
    const lines = fs.readFileSync(file, "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i]!;
      if (text === "" && i === lines.length - 1) break;
      let e: AuditEntry | undefined;
      try {
        e = JSON.parse(text) as AuditEntry;
      } catch {
        e = undefined;
      }
      const bad = (reason: NonNullable<AuditVerification["first_bad"]>["reason"]) => {
        if (out.ok) out.first_bad = { file, line: i + 1, reason };
        out.ok = false;
      };
      if (!e || typeof e !== "object" || typeof e.hash !== "string") {
        bad("unparseable");
        prev = sha256(text);
        continue;
      }
      if (hashOf(e) !== e.hash) bad("hash_mismatch");
      else if (e.prev !== prev) bad("chain_broken");
      prev = e.hash;
      out.entries++;
      bump(out.by_tool, String(e.tool));
      bump(out.by_user, String(e.who));
      bump(out.by_outcome, String(e.outcome));
    }
  }
  return out;
}

/** Verifies the chain and writes the report (`codemem audit-report --format json --output F`). */
export function writeAuditReport(root: string, opts: { format: "json"; output: string }): AuditVerification & { generated_at: string; root: string } {
  if (opts.format !== "json") {
    throw new CodememError("INVALID_ARGUMENT", `audit report format "${String(opts.format)}" is not supported; use --format json.`, { value: opts.format });
  }
  const out = path.resolve(opts.output);
  if (fs.existsSync(out) && fs.statSync(out).isDirectory()) {
    throw new CodememError("INVALID_ARGUMENT", `--output ${opts.output} is a directory; pass the report's file path (e.g. ${path.join(out, "audit-report.json")}).`, { value: opts.output });
  }
  if (!fs.existsSync(path.dirname(out))) {
    throw new CodememError("PATH_NOT_FOUND", `--output ${opts.output}: the directory ${path.dirname(out)} does not exist; create it or pass another path.`, { value: opts.output });
  }
  const report = { generated_at: new Date().toISOString(), root, ...verifyAudit(root) };
  writeFileAtomic(out, JSON.stringify(report, null, 2) + "\n");
  return report;
}
