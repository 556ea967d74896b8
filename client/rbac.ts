import { createHash, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import { CodememError } from "../shared/errors.js";

/** Roles of the spec (§2.5), lowest first: a user with several roles gets the highest. */
export const ROLE_ORDER = ["viewer", "developer", "admin"] as const;
export type Role = (typeof ROLE_ORDER)[number];

/**
 * Permissions and calls per minute of each role (0 = unlimited). The spec's table, plus the graph
 * questions added after it (trace, impact): read-only, as skeleton is, so a developer's.
 */
export const ROLES: Record<Role, { permissions: readonly string[] | "*"; perMinute: number }> = {
  viewer: { permissions: ["query", "search", "wakeup"], perMinute: 30 },
  developer: { permissions: ["query", "search", "skeleton", "audit-report", "trace", "impact"], perMinute: 60 },
  admin: { permissions: "*", perMinute: 0 },
};

/** Permission name of a tool: `codemem_audit_report` → `audit-report`. */
export function permissionOf(tool: string): string {
  return tool.replace(/^codemem_/, "").replace(/_/g, "-");
}

export function roleAllows(role: Role, tool: string): boolean {
  const p = ROLES[role].permissions;
  return p === "*" || p.includes(permissionOf(tool));
}

/**
 * Calls per minute for a role: the role's own limit, or the server-wide override
 * (--rate-limit-per-minute) for every non-admin role. 0 = unlimited.
 */
export function limitFor(role: Role | undefined, override?: number): number {
  if (role === "admin") return 0;
  if (override !== undefined) return override;
  return role ? ROLES[role].perMinute : 0;
}

/** The directory file: users and groups mapped to roles. */
export interface Directory {
  users: Record<string, Role>;
  groups: Record<string, Role>;
}

function parseDirectory(file: string, text: string): Directory {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CodememError("CONFIG_INVALID", `directory file ${file} is not valid JSON (${(err as Error).message}); expected {"users": {...}, "groups": {...}}.`, { file });
  }
  const out: Directory = { users: {}, groups: {} };
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw new CodememError("CONFIG_INVALID", `directory file ${file} must hold an object {"users": {...}, "groups": {...}}.`, { file });
  }
  for (const kind of ["users", "groups"] as const) {
    const m = (doc as Record<string, unknown>)[kind];
    if (m === undefined) continue;
    if (typeof m !== "object" || m === null || Array.isArray(m)) {
      throw new CodememError("CONFIG_INVALID", `directory file ${file}: "${kind}" must map names to roles.`, { file });
    }
    for (const [name, role] of Object.entries(m)) {
      if (!(ROLE_ORDER as readonly unknown[]).includes(role)) {
        throw new CodememError("CONFIG_INVALID", `directory file ${file}: ${kind}.${name} has role ${JSON.stringify(role)}; use one of ${ROLE_ORDER.join(", ")}.`, { file });
      }
      out[kind][name] = role as Role;
    }
  }
  return out;
}

/** Reads the directory file again when it changes, so roles can be edited without a restart. */
export class DirectorySource {
  /** The file's identity and change time too: an edit keeping size and mtime (utimes) still moves ctime, a rename the inode. */
  private cached?: { stamp: string; dir: Directory };

  constructor(readonly file: string | undefined) {
    if (file) this.get(); // fail at startup, not on the first request
  }

  get(): Directory {
    if (!this.file) return { users: {}, groups: {} };
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      throw new CodememError("CONFIG_INVALID", `directory file ${this.file} cannot be read; pass an existing JSON file with --directory-file or CODEMEM_DIRECTORY_FILE.`, { file: this.file });
    }
    const stamp = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    if (this.cached?.stamp === stamp) return this.cached.dir;
    const dir = parseDirectory(this.file, fs.readFileSync(this.file, "utf8"));
    this.cached = { stamp, dir };
    return dir;
  }
}

/** Highest role of a user through their own entry and their groups; undefined when none. */
export function roleFor(dir: Directory, user: string | undefined, groups: readonly string[]): Role | undefined {
  let best = -1;
  const consider = (r: Role | undefined) => {
    if (r) best = Math.max(best, ROLE_ORDER.indexOf(r));
  };
  if (user && Object.hasOwn(dir.users, user)) consider(dir.users[user]);
  for (const g of groups) if (Object.hasOwn(dir.groups, g)) consider(dir.groups[g]);
  return best < 0 ? undefined : ROLE_ORDER[best];
}

/** A set of single IPs or CIDR ranges, v4 or v6: the proxies whose identity headers are believed, the clients served. */
export class AddressRanges {
  private readonly list = new net.BlockList();

  /** `what` names the setting in errors ("trusted proxy", "allowed client range"). */
  constructor(
    readonly entries: readonly string[],
    what = "trusted proxy",
  ) {
    for (const e of entries) {
      const [addr, bits] = e.split("/");
      const type = net.isIPv6(addr!) ? "ipv6" : net.isIPv4(addr!) ? "ipv4" : undefined;
      if (!type) throw new CodememError("CONFIG_INVALID", `${what} "${e}" is not an IP address or CIDR range (e.g. 10.0.0.5 or 10.0.0.0/8).`, { value: e });
      if (bits === undefined) this.list.addAddress(addr!, type);
      else {
        const n = Number(bits);
        if (!Number.isInteger(n) || n < 0 || n > (type === "ipv4" ? 32 : 128)) {
          throw new CodememError("CONFIG_INVALID", `${what} "${e}" has an invalid prefix length.`, { value: e });
        }
        this.list.addSubnet(addr!, n, type);
      }
    }
  }

  has(peer: string | undefined): boolean {
    if (!peer) return false;
    const v4 = peer.startsWith("::ffff:") && net.isIPv4(peer.slice(7)) ? peer.slice(7) : peer;
    return this.list.check(v4, net.isIPv6(v4) ? "ipv6" : "ipv4");
  }
}

export interface Identity {
  /** The user as asserted by a trusted proxy; undefined for anonymous requests. */
  user?: string;
  groups: string[];
  role?: Role;
  /** The TCP peer, for audit and for keying anonymous rate limits. */
  peer: string;
  /** An identity header a trusted proxy sent more than once: the request is refused, not merged. */
  ambiguous?: string;
}

/** The only headers identity is taken from, each exactly once, and only from a trusted proxy. */
export const USER_HEADER = "x-forwarded-user";
export const GROUPS_HEADER = "x-forwarded-groups";

/** The header a proxy adds to prove it is the proxy (`--proxy-secret-file`). */
export const PROXY_SECRET_HEADER = "x-codemem-proxy-secret";
const MIN_SECRET_CHARS = 16;

/**
 * The secret the authentication proxy adds to every request: a trusted address alone is any local
 * process when the proxy is on this host. Read from a file (first line) that other users cannot read.
 */
export class ProxySecret {
  private readonly digest: Buffer;

  constructor(readonly file: string) {
    let st: fs.Stats;
    let text: string;
    try {
      st = fs.statSync(file);
      text = fs.readFileSync(file, "utf8");
    } catch (err) {
      throw new CodememError("CONFIG_INVALID", `proxy secret file ${file} cannot be read (${(err as NodeJS.ErrnoException).code}); pass a readable file with --proxy-secret-file.`, { file });
    }
    if (st.mode & 0o004) {
      throw new CodememError("CONFIG_INVALID", `proxy secret file ${file} is readable by every user (mode ${(st.mode & 0o777).toString(8)}): any of them could pose as the proxy; run chmod o-r ${file}.`, { file });
    }
    const secret = text.split("\n")[0]!.trim();
    if (secret.length < MIN_SECRET_CHARS) {
      throw new CodememError("CONFIG_INVALID", `proxy secret in ${file} has ${secret.length} characters; use at least ${MIN_SECRET_CHARS} random ones (e.g. \`openssl rand -hex 32 > ${file}\`).`, { file });
    }
    this.digest = createHash("sha256").update(secret).digest();
  }

  /** Whether the request carries the secret exactly once; compared in constant time (digests of equal length). */
  matches(headers: Record<string, string[] | undefined>): boolean {
    const values = headers[PROXY_SECRET_HEADER] ?? [];
    if (values.length !== 1) return false;
    return timingSafeEqual(createHash("sha256").update(values[0]!.trim()).digest(), this.digest);
  }
}

/**
 * Identity bound at the transport: user and groups from the proxy's X-Forwarded-User and
 * X-Forwarded-Groups, believed only when the request came from the proxy (`fromProxy`: through the
 * owner-only Unix socket, or from a --trusted-proxy address, with the proxy secret when one is set); the role comes
 * from the directory, never from the request. No other header names an identity (a proxy that
 * sets only these passes a client's own X-Auth-Request-Groups through untouched), and a header
 * given twice is refused rather than merged (`readers` + `admins` read as "readers, admins").
 * `headers` are Node's `headersDistinct`: every value of a repeated header.
 */
export function identify(peer: string | undefined, headers: Record<string, string[] | undefined>, fromProxy: boolean, dir: Directory): Identity {
  const id: Identity = { groups: [], peer: peer ?? "unknown" };
  if (!fromProxy) return id;
  const one = (name: string): string | undefined => {
    const values = headers[name] ?? [];
    if (values.length > 1) id.ambiguous ??= name;
    const v = values[0]?.trim();
    return v ? v : undefined;
  };
  id.user = one(USER_HEADER);
  const groups = one(GROUPS_HEADER);
  if (id.ambiguous) return { groups: [], peer: id.peer, ambiguous: id.ambiguous };
  id.groups = groups ? groups.split(",").map((g) => g.trim()).filter(Boolean) : [];
  if (id.user || id.groups.length) id.role = roleFor(dir, id.user, id.groups);
  return id;
}

/** Sliding-window limiter: at most `limit` calls by one key in any 60 s. */
export class RateLimiter {
  private readonly calls = new Map<string, number[]>();
  private sweeps = 0;

  constructor(private readonly windowMs = 60_000) {}

  /** Counts one call; when over the limit, the call is not counted and the wait in seconds is returned. */
  take(key: string, limit: number, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    if (limit <= 0) return { ok: true };
    const since = now - this.windowMs;
    const times = (this.calls.get(key) ?? []).filter((t) => t > since);
    if (times.length >= limit) {
      this.calls.set(key, times);
      const oldestThatCounts = times[times.length - limit]!;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((oldestThatCounts + this.windowMs - now) / 1000)) };
    }
    times.push(now);
    this.calls.set(key, times);
    if (++this.sweeps % 1000 === 0) this.sweep(now);
    return { ok: true };
  }

  private sweep(now: number): void {
    for (const [k, times] of this.calls) if (!times.some((t) => t > now - this.windowMs)) this.calls.delete(k);
  }
}

/** One key's refusals in the current window. */
interface RefusalWindow {
  start: number;
  refused: number;
  suppressed: number;
  who: string;
  peer: string;
}

/** A window that suppressed refusals, for its one summary line. */
export interface SuppressedRefusals {
  who: string;
  peer: string;
  suppressed: number;
  start: number;
  end: number;
}

/**
 * Refusals recorded one by one, per key (user or peer) and fixed window; past the budget they are
 * answered 429 and only counted, and each window that suppressed some is handed back once for one
 * summary line. Without it one anonymous client grew the audit log by ~114 KB/s.
 */
export class RefusalBudget {
  private readonly windows = new Map<string, RefusalWindow>();

  constructor(
    readonly perWindow: number,
    readonly windowMs = 60_000,
  ) {}

  /** Counts one refusal: whether to record it (if not, the seconds until its window ends), and the key's previous window if it ended with refusals to summarise. */
  take(key: string, who: string, peer: string, now = Date.now()): { record: boolean; retryAfterSeconds: number; ended?: SuppressedRefusals } {
    let w = this.windows.get(key);
    let ended: SuppressedRefusals | undefined;
    if (!w || now - w.start >= this.windowMs) {
      if (w?.suppressed) ended = this.summary(w, now);
      w = { start: now, refused: 0, suppressed: 0, who, peer };
      this.windows.set(key, w);
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    if (w.refused < this.perWindow) {
      w.refused++;
      return { record: true, retryAfterSeconds, ended };
    }
    w.suppressed++;
    return { record: false, retryAfterSeconds, ended };
  }

  /** Removes ended windows (every window with `all`, at shutdown), returning those that suppressed refusals. */
  drain(now = Date.now(), all = false): SuppressedRefusals[] {
    const out: SuppressedRefusals[] = [];
    for (const [k, w] of this.windows) {
      if (!all && now - w.start < this.windowMs) continue;
      this.windows.delete(k);
      if (w.suppressed) out.push(this.summary(w, now));
    }
    return out;
  }

  private summary(w: RefusalWindow, now: number): SuppressedRefusals {
    return { who: w.who, peer: w.peer, suppressed: w.suppressed, start: w.start, end: Math.min(now, w.start + this.windowMs) };
  }
}
