import { createHash, createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { resolveProcessSettings } from "../shared/config.js";
import { CodememError, isDiskFullError } from "../shared/errors.js";
import { stateDirs, writeFileAtomic } from "../shared/paths.js";

/**
 * Audit log: one JSON line per tool call under `.codemem/audit/audit-YYYYMMDD[.N].jsonl`, each
 * line carrying the hash of the line before it (across files), so an edit, a removed line or a
 * removed file breaks the chain at a line that verification names.
 *
 * What the chain cannot prove on its own (a cut tail, an emptied or deleted log, a forged entry
 * appended with a recomputed hash, a re-chained history) is anchored outside the project: the
 * writer keeps, in the user's state directory (`$XDG_STATE_HOME/codemem/audit-anchors/`, mode
 * 0600), a secret key and the chain's head (entry count and last hash). Every entry carries
 * `mac` = HMAC-SHA256(key, hash); verification checks both. One server writes a log at a time
 * (a lock file beside it): two writers would fork the chain.
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
  /** HMAC-SHA256 of `hash` under the anchor's key (entries written since the log was anchored). */
  mac?: string;
}

/** The head of a project's chain and the key of its MACs, kept outside the project. */
interface Anchor {
  root: string;
  key: string;
  /** Entries in the log (all files) after the last append. */
  entries: number;
  head: string;
  /** Entries before this index were written before the log was anchored: they carry no MAC. */
  keyed_from: number;
}

function anchorFile(root: string): string | undefined {
  const base = resolveProcessSettings().stateDir;
  return base ? path.join(base, "audit-anchors", `${createHash("sha256").update(root).digest("hex").slice(0, 24)}.json`) : undefined;
}

function readAnchor(root: string): Anchor | undefined {
  const f = anchorFile(root);
  if (!f) return undefined;
  try {
    const a = JSON.parse(fs.readFileSync(f, "utf8")) as Anchor;
    return a.root === root ? a : undefined;
  } catch {
    return undefined;
  }
}

function writeAnchor(a: Anchor): void {
  const f = anchorFile(a.root);
  if (!f) return;
  fs.mkdirSync(path.dirname(f), { recursive: true, mode: 0o700 });
  const tmp = `${f}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(a), { mode: 0o600 });
  fs.renameSync(tmp, f);
}

const macOf = (key: string, hash: string) => createHmac("sha256", Buffer.from(key, "hex")).update(hash).digest("hex");

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
  const { hash: _omit, mac: _mac, ...rest } = entry;
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

function countLines(file: string): number {
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").length;
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
  /** The only writer of this log (a server): take the lock beside it, refuse when another process holds it. */
  exclusive?: boolean;
}

/** Appends chained entries to a project's audit log. */
export class AuditLog {
  private readonly dir: string;
  private readonly maxBytes: number;

  private lock?: string;

  constructor(readonly root: string, private readonly opts: AuditLogOptions = {}) {
    this.dir = stateDirs(root).auditDir;
    this.maxBytes = opts.maxBytes ?? AUDIT_MAX_BYTES;
    if (opts.exclusive) this.takeLock();
  }

  /** `<audit dir>/writer.lock` holds the writing process's pid; a dead holder's lock is taken over. */
  private takeLock(): void {
    fs.mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, "writer.lock");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(file, String(process.pid), { flag: "wx" });
        this.lock = file;
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        const pid = Number(fs.readFileSync(file, "utf8").trim());
        let alive = false;
        try {
          alive = Number.isInteger(pid) && pid > 0 && pid !== process.pid && (process.kill(pid, 0), true);
        } catch {
          alive = false;
        }
        if (alive) {
          throw new CodememError("CONFIG_INVALID", `another codemem server (pid ${pid}) writes this project's audit log (${file}); one server per project, or stop that one first.`, { file });
        }
        fs.rmSync(file, { force: true });
      }
    }
  }

  /** Releases the writer lock. */
  close(): void {
    if (this.lock) fs.rmSync(this.lock, { force: true });
    this.lock = undefined;
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
    const hash = hashOf(entry);
    // The anchor is created with the first entry this code writes; a log written before stays
    // unkeyed up to there (its entries are counted once, from the files).
    // Read on every append, like the chain's head: several logs of one process continue one anchor.
    let anchor = readAnchor(this.root);
    if (!anchor) {
      const existing = files.reduce((n, f) => n + countLines(f), 0);
      anchor = { root: this.root, key: randomBytes(32).toString("hex"), entries: existing, head: prev, keyed_from: existing };
    }
    const full: AuditEntry = { ...entry, hash, mac: macOf(anchor.key, hash) };
    const line = JSON.stringify(full) + "\n";
    fs.appendFileSync(this.target(newest, now, Buffer.byteLength(line)), line);
    writeAnchor({ ...anchor, entries: anchor.entries + 1, head: hash });
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
  first_bad?: { file: string; line: number; reason: "unparseable" | "hash_mismatch" | "chain_broken" | "mac_mismatch" | "head_mismatch" };
  /** Whether a key and head outside the project vouch for the log (false for a log written before anchoring). */
  anchored: boolean;
  by_tool: Record<string, number>;
  by_user: Record<string, number>;
  by_outcome: Record<string, number>;
}

/** Verifies the whole chain of a project's audit log and summarises it. */
export function verifyAudit(root: string): AuditVerification {
  const files = auditFiles(root);
  const anchor = readAnchor(root);
  const out: AuditVerification = { ok: true, entries: 0, files, by_tool: {}, by_user: {}, by_outcome: {}, anchored: anchor !== undefined };
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
      else if (anchor && out.entries >= anchor.keyed_from && e.mac !== macOf(anchor.key, e.hash)) bad("mac_mismatch");
      prev = e.hash;
      out.entries++;
      bump(out.by_tool, String(e.tool));
      bump(out.by_user, String(e.who));
      bump(out.by_outcome, String(e.outcome));
    }
  }
  // A cut tail, an emptied file, a deleted newest rotation or directory: the head moved back.
  if (anchor && (out.entries !== anchor.entries || prev !== anchor.head)) {
    if (out.ok) out.first_bad = { file: files.at(-1) ?? stateDirs(root).auditDir, line: out.entries, reason: "head_mismatch" };
    out.ok = false;
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
  try {
    writeFileAtomic(out, JSON.stringify(report, null, 2) + "\n");
  } catch (err) {
    // Where the user asked to write is theirs to fix (a read-only or virtual file system like /proc, a full disk): not an internal fault.
    const code = (err as NodeJS.ErrnoException).code;
    if (isDiskFullError(err)) throw new CodememError("DISK_FULL", `--output ${opts.output}: no space left on its disk (${code}); free space or pass a path on another disk.`, { value: opts.output });
    throw new CodememError("INVALID_ARGUMENT", `--output ${opts.output} cannot be written (${code ?? (err as Error).message}); pass a path in a directory you can write to.`, { value: opts.output });
  }
  return report;
}
