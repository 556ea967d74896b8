import { createHash, createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { resolveProcessSettings } from "../shared/config.js";
import { CodememError, isDiskFullError } from "../shared/errors.js";
import { stateDirs, writeFileAtomic } from "../shared/paths.js";
import { ensureOwnDir, openOwnAppend } from "../shared/own-files.js";
import { sleepSync } from "../shared/sleep.js";
import { pidAlive } from "./socket-path.js";

/**
 * Audit log: one JSON line per tool call under `.codemem/audit/audit-YYYYMMDD[.N].jsonl`, each
 * line carrying the hash of the line before it (across files), so an edit, a removed line or a
 * removed file breaks the chain at a line that verification names.
 *
 * What the chain cannot prove on its own (a cut tail, an emptied or deleted log, a forged entry
 * appended with a recomputed hash, a re-chained history) is anchored outside the project: the
 * writer keeps, in the user's state directory (`$XDG_STATE_HOME/codemem/audit-anchors/`, mode
 * 0600), a secret key and the chain's head (entry count and last hash). Every entry carries
 * `mac` = HMAC-SHA256(key, hash); verification checks both. Entries the key does not vouch for
 * (a log written before it was anchored, or shipped in the repository) are reported unanchored.
 * One server writes a log at a time (a lock file beside it): two writers would fork the chain.
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
  /** Calls this entry stands for when more than one (a refused batch, refusals counted but not recorded one by one). */
  count?: number;
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
  count?: number;
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

/**
 * Writes the anchor's next state beside it; `commit` renames it into place. Staged before the entry
 * is appended, so an anchor directory that cannot be written stops the append instead of leaving
 * an entry the anchor does not count (a chain reported broken for good).
 */
function stageAnchor(a: Anchor): { commit(): void; discard(): void } {
  const f = anchorFile(a.root);
  if (!f) return { commit: () => undefined, discard: () => undefined };
  fs.mkdirSync(path.dirname(f), { recursive: true, mode: 0o700 });
  const tmp = `${f}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(a), { mode: 0o600 });
  return { commit: () => fs.renameSync(tmp, f), discard: () => fs.rmSync(tmp, { force: true }) };
}

/** Whether the anchor can be written: its directory made or there and writable, the file (if any) replaceable. */
function anchorWritable(root: string): boolean {
  const f = anchorFile(root);
  if (!f) return true;
  fs.mkdirSync(path.dirname(f), { recursive: true, mode: 0o700 });
  fs.accessSync(path.dirname(f), fs.constants.W_OK);
  if (fs.existsSync(f)) fs.accessSync(f, fs.constants.W_OK); // an immutable file cannot be replaced
  return true;
}

const macOf = (key: string, hash: string) => createHmac("sha256", Buffer.from(key, "hex")).update(hash).digest("hex");

export const GENESIS = "0".repeat(64);
/** Rotate within a day past this size. */
export const AUDIT_MAX_BYTES = 10 * 1024 * 1024;
/** Longest text kept in an entry's fields (who, tool, code, peer): what a caller sends cannot make an entry large. */
export const MAX_FIELD_CHARS = 200;
const bounded = (s: string) => (s.length > MAX_FIELD_CHARS ? `${s.slice(0, MAX_FIELD_CHARS)}…(${s.length} chars)` : s);
/** Tries at the writer lock before giving up (each after a few ms: another starter is taking over a dead holder's lock). */
const LOCK_ATTEMPTS = 50;
/** A takeover lock older than this was left by a process that died while taking over. */
const TAKEOVER_STALE_MS = 10_000;

/** Makes `to` a second name of `from`, only if `to` does not exist: the file appears with its content whole. */
function linkNew(from: string, to: string): boolean {
  try {
    fs.linkSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  }
}

/** What a lock file holds (a pid); undefined when the file is gone. */
function lockHolder(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** A process other than this one with that pid exists. */
function otherProcessAlive(holder: string): boolean {
  const pid = Number(holder);
  return pid !== process.pid && pidAlive(pid);
}
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

  /**
   * `<audit dir>/writer.lock` holds the writing process's pid. It is linked into place from a
   * temp file already holding the pid, so no starter ever reads an empty lock as a dead holder's
   * (two servers started together both took it). A dead holder's lock is replaced under a short
   * takeover lock, so two starters cannot both replace it.
   */
  private takeLock(): void {
    ensureOwnDir(this.dir);
    const file = path.join(this.dir, "writer.lock");
    const mine = `${file}.${process.pid}-${randomBytes(4).toString("hex")}`;
    fs.writeFileSync(mine, String(process.pid), { flag: "wx" });
    try {
      for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
        if (linkNew(mine, file)) {
          this.lock = file;
          return;
        }
        const holder = lockHolder(file);
        if (holder === undefined) continue; // released meanwhile
        if (otherProcessAlive(holder)) {
          throw new CodememError("CONFIG_INVALID", `another codemem server (pid ${holder}) writes this project's audit log (${file}); one server per project, or stop that one first.`, { file });
        }
        if (this.replaceDeadLock(file, mine, holder)) {
          this.lock = file;
          return;
        }
        sleepSync(2 + attempt);
      }
      throw new CodememError("CONFIG_INVALID", `the audit log's lock ${file} could not be taken after ${LOCK_ATTEMPTS} tries (other servers starting for this project?); start one server per project.`, { file });
    } finally {
      fs.rmSync(mine, { force: true });
    }
  }

  /** Replaces a dead holder's lock with ours, if it still is that holder's once we alone may replace it. */
  private replaceDeadLock(file: string, mine: string, dead: string): boolean {
    const takeover = `${file}.takeover`;
    if (!linkNew(mine, takeover)) {
      try {
        if (Date.now() - fs.statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) fs.rmSync(takeover, { force: true });
      } catch {
        // gone meanwhile
      }
      return false;
    }
    try {
      if (lockHolder(file) !== dead) return false; // someone else's now, or released: look again
      fs.renameSync(mine, file);
      return true;
    } finally {
      fs.rmSync(takeover, { force: true });
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
    ensureOwnDir(this.dir);
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
      who: bounded(input.who),
      role: input.role,
      tool: bounded(input.tool),
      args_sha256: sha256(canonicalJson(input.args ?? {})),
      outcome: input.outcome,
      ...(input.code ? { code: bounded(input.code) } : {}),
      ...(input.peer ? { peer: bounded(input.peer) } : {}),
      ...(input.count !== undefined ? { count: input.count } : {}),
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
    } else if (anchor.head !== prev) {
      anchor = this.caughtUp(anchor);
    }
    const full: AuditEntry = { ...entry, hash, mac: macOf(anchor.key, hash) };
    const line = JSON.stringify(full) + "\n";
    const staged = stageAnchor({ ...anchor, entries: anchor.entries + 1, head: hash });
    try {
      const fd = openOwnAppend(this.target(newest, now, Buffer.byteLength(line))); // a shipped link is refused
      try {
        fs.writeSync(fd, line);
      } finally {
        fs.closeSync(fd);
      }
    } catch (err) {
      staged.discard();
      throw err;
    }
    staged.commit();
    this.opts.onWrite?.(full);
    return full;
  }

  /**
   * The anchor moved up to the log's end when it lags behind entries it did not count (its write
   * failed, or the process died, after they were appended): only when the log verifies, i.e. every
   * entry past the anchored head chains from it and carries our MAC. A cut or forged log keeps
   * the anchor as it was, so verification still reports it.
   */
  private caughtUp(anchor: Anchor): Anchor {
    const v = verifyAudit(this.root);
    return v.ok && v.entries > anchor.entries ? { ...anchor, entries: v.entries, head: v.head } : anchor;
  }

  /** Whether entries can be written now: the log's directory and newest file, and the anchor outside the project. */
  writable(): boolean {
    try {
      ensureOwnDir(this.dir);
      fs.accessSync(this.dir, fs.constants.W_OK);
      const newest = auditFiles(this.root).at(-1);
      if (newest) fs.accessSync(newest, fs.constants.W_OK);
      return anchorWritable(this.root);
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
  /** Whether a key and head outside the project (this user's, on this machine) vouch for every entry. */
  anchored: boolean;
  /**
   * Entries no key of this machine vouches for: written before the log was anchored, or not
   * written here at all (a log shipped in the repository). Their users and tools are unproven.
   */
  unanchored_entries: number;
  /** Who the unanchored entries claim to be, when there are any. */
  unanchored_by_user?: Record<string, number>;
  /** Hash of the last entry (the chain's head). */
  head: string;
  by_tool: Record<string, number>;
  by_user: Record<string, number>;
  by_outcome: Record<string, number>;
}

/** Verifies the whole chain of a project's audit log and summarises it. */
export function verifyAudit(root: string): AuditVerification {
  const files = auditFiles(root);
  const anchor = readAnchor(root);
  const keyedFrom = anchor?.keyed_from ?? Infinity;
  const out: AuditVerification = { ok: true, entries: 0, files, by_tool: {}, by_user: {}, by_outcome: {}, anchored: false, unanchored_entries: 0, head: GENESIS };
  const unanchoredUsers: Record<string, number> = {};
  let prev = GENESIS;
  /** Hash of the entry the anchor counts last: the log may run past it only by entries carrying our MAC. */
  let atAnchor = anchor?.entries === 0 ? GENESIS : undefined;
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
      if (out.entries < keyedFrom) {
        out.unanchored_entries++;
        bump(unanchoredUsers, String(e.who));
      }
      prev = e.hash;
      out.entries++;
      if (anchor && out.entries === anchor.entries) atAnchor = e.hash;
      bump(out.by_tool, String(e.tool));
      bump(out.by_user, String(e.who));
      bump(out.by_outcome, String(e.outcome));
    }
  }
  // A cut tail, an emptied file, a deleted newest rotation or directory: the head moved back.
  // Entries past the anchored head with valid MACs (an anchor write that failed) are not a cut.
  const headHeld = anchor && (out.entries === anchor.entries ? prev === anchor.head : out.entries > anchor.entries && atAnchor === anchor.head);
  if (anchor && !headHeld) {
    if (out.ok) out.first_bad = { file: files.at(-1) ?? stateDirs(root).auditDir, line: out.entries, reason: "head_mismatch" };
    out.ok = false;
  }
  out.head = prev;
  out.anchored = anchor !== undefined && out.unanchored_entries === 0;
  if (out.unanchored_entries > 0) out.unanchored_by_user = unanchoredUsers;
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
