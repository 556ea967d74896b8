import { createHash } from "node:crypto";
import fs from "node:fs";
import { parse as parseToml } from "smol-toml";
import { CodememError } from "./errors.js";
import { stateDirs } from "./paths.js";

/**
 * One resolver for configuration. Precedence, lowest first:
 * defaults < codemem.toml < environment (CODEMEM_*) < explicit flags.
 * Nothing else in the code base reads process.env.
 */
export interface ResolvedConfig {
  root: string;
  build: {
    excludePatterns: string[];
    maxFileBytes: number;
    batchSize: number;
    /** "auto": the external generator when installed, else built-in. */
    graphSource: "auto" | "builtin" | "external";
    /**
     * Redact likely secrets from everything indexed (`build --exclude-secrets`, `exclude_secrets` in
     * codemem.toml). Unset: the policy the index was last built with stands, so a later plain or
     * watch-triggered build does not put the secrets back.
     */
    excludeSecrets: boolean | undefined;
    /** Absolute path of the external `codegraph` generator when it is on PATH. */
    generator?: string;
    workers: number;
  };
  embedder: {
    kind: "builtin" | "neural";
    model: string;
    modelDir?: string;
    cacheDir?: string;
    allowDownload: boolean;
  };
  query: {
    /** Total token budget of a query answer (o200k tokens). */
    budget: number;
    wakeupBudget: number;
    synapseRecall: boolean;
  };
  llm: {
    baseUrl?: string;
    apiKey?: string;
    models: { fast: string; reliable: string; specialist: string };
    timeoutMs: number;
  };
  store: StoreSettings;
  debug: boolean;
  eventLog: boolean;
}

/** Canonical backend names (see docs/backends.md); the accepted spellings map onto them. */
export const BACKENDS = ["local", "postgres", "lancedb"] as const;
export type BackendName = (typeof BACKENDS)[number];
const BACKEND_ALIASES: Record<string, BackendName> = {
  local: "local", sqlite: "local",
  postgres: "postgres", postgresql: "postgres", pg: "postgres", pgvector: "postgres",
  lancedb: "lancedb", lance: "lancedb", offline: "lancedb",
};

/** Where the index lives. */
export interface StoreSettings {
  backend: BackendName;
  /** postgres: connection URL without a password. */
  dbUrl?: string;
  /** postgres: from CODEMEM_DB_PASSWORD, CODEMEM_DB_PASSWORD_FILE or [store] password_file; never logged. */
  password?: string;
  /** postgres: the schema holding this project's tables, so projects share a database without interfering. */
  schema: string;
  /** postgres: connections in the pool. */
  poolSize: number;
}

/** Maps a user's spelling of a backend onto its canonical name, or fails naming the accepted values. */
export function canonicalBackend(value: string, where: string): BackendName {
  const b = BACKEND_ALIASES[value.trim().toLowerCase()];
  if (!b) {
    throw new CodememError("CONFIG_INVALID", `${where}: unknown backend "${value}"; use local (SQLite, the default), postgres (PostgreSQL + pgvector) or lancedb (embedded files, offline).`, { value });
  }
  return b;
}

/** The backend a project's last successful build used; later commands without flags follow it. */
export interface StoreChoice {
  backend: BackendName;
  db_url?: string;
  schema?: string;
}

export function readStoreChoice(root: string): StoreChoice | undefined {
  const file = stateDirs(root).storeChoice;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined; // none yet, or unreadable: fall back to configuration
  }
  const r = raw as Partial<StoreChoice>;
  const backend = typeof r.backend === "string" ? BACKEND_ALIASES[r.backend] : undefined;
  if (!backend) return undefined;
  return { backend, ...(typeof r.db_url === "string" ? { db_url: r.db_url } : {}), ...(typeof r.schema === "string" ? { schema: r.schema } : {}) };
}

/** Rejects URLs that carry a password (it would show in process lists, shell history and logs). */
function checkDbUrl(url: string, where: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CodememError("CONFIG_INVALID", `${where}: "${url}" is not a URL; use postgres://user@host:5432/database.`, { value: url });
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new CodememError("CONFIG_INVALID", `${where}: "${u.protocol}" URLs are not supported; use postgres://user@host:5432/database.`);
  }
  if (u.password) {
    u.password = "";
    throw new CodememError(
      "CONFIG_INVALID",
      `${where} contains a password; remove it (${u.toString()}) and set CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE instead, so it never appears in process lists or logs.`,
    );
  }
  return url;
}

/** Printable form of a database URL: no password, no query string. */
export function redactDbUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = "";
    u.search = "";
    return u.toString();
  } catch {
    return "(invalid URL)";
  }
}

export type ConfigFlags = {
  backend?: string;
  dbUrl?: string;
  batchSize?: number;
  budget?: number;
  embedder?: "builtin" | "neural";
  excludeSecrets?: boolean;
};

export const DEFAULTS: Omit<ResolvedConfig, "root" | "store"> & { store: { backend: BackendName; poolSize: number }; daemon: { idleMinutes: number } } = {
  build: { excludePatterns: [], maxFileBytes: 1024 * 1024, batchSize: 1000, graphSource: "auto", workers: 2, excludeSecrets: undefined },
  embedder: { kind: "builtin", model: "Xenova/all-MiniLM-L6-v2", allowDownload: false },
  query: { budget: 800, wakeupBudget: 400, synapseRecall: true },
  store: { backend: "local", poolSize: 4 },
  /** Minutes a daemon started on demand by a client lives without a client (0 = for ever). */
  daemon: { idleMinutes: 30 },
  llm: { models: { fast: "gpt-4o-mini", reliable: "gpt-4o", specialist: "o3-mini" }, timeoutMs: 8000 },
  debug: false,
  eventLog: true,
};

type Env = Record<string, string | undefined>;

function fail(file: string, what: string): never {
  throw new CodememError("CONFIG_INVALID", `${file}: ${what}`, { file });
}

function readToml(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) return {};
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    fail(file, `cannot be read (${(err as Error).message}); fix its permissions.`);
  }
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (err) {
    fail(file, `is not valid TOML: ${(err as Error).message.split("\n")[0]}; fix the syntax or remove the file.`);
  }
}

function section(doc: Record<string, unknown>, name: string, file: string): Record<string, unknown> {
  const v = doc[name];
  if (v === undefined) return {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(file, `[${name}] must be a table.`);
  return v as Record<string, unknown>;
}

function str(t: Record<string, unknown>, key: string, file: string, sec: string): string | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") fail(file, `[${sec}] ${key} must be a string, got ${JSON.stringify(v)}.`);
  return v;
}

function int(t: Record<string, unknown>, key: string, file: string, sec: string, min: number): number | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) fail(file, `[${sec}] ${key} must be an integer ≥ ${min}, got ${JSON.stringify(v)}.`);
  return v;
}

function bool(t: Record<string, unknown>, key: string, file: string, sec: string): boolean | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  if (typeof v !== "boolean") fail(file, `[${sec}] ${key} must be true or false, got ${JSON.stringify(v)}.`);
  return v;
}

function oneOf<T extends string>(v: string | undefined, allowed: readonly T[], where: string): T | undefined {
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) {
    throw new CodememError("CONFIG_INVALID", `${where} must be one of ${allowed.join(", ")}; got "${v}".`);
  }
  return v as T;
}

function envBool(v: string | undefined): boolean | undefined {
  if (v === undefined || v === "") return undefined;
  return !["0", "false", "no", "off"].includes(v.toLowerCase());
}

/** Settings of the HTTP server mode (codemem-mcp --port) that may come from the environment. */
export interface ServerEnvSettings {
  /** CODEMEM_RBAC_ENABLED="true". */
  rbacEnabled?: boolean;
  /** CODEMEM_RATE_LIMIT_PER_MINUTE, an integer ≥ 0 (0 = unlimited). */
  rateLimitPerMinute?: number;
  /** CODEMEM_TRUSTED_PROXIES: comma-separated IPs or CIDR ranges whose identity headers are trusted. */
  trustedProxies?: string[];
  /** CODEMEM_ALLOW_FROM: comma-separated IPs or CIDR ranges the HTTP server serves (default: loopback and private networks). */
  allowFrom?: string[];
  /** CODEMEM_DIRECTORY_FILE: JSON file mapping users and groups to roles. */
  directoryFile?: string;
}

/** A comma-separated list; undefined when unset or empty. */
function envList(v: string | undefined): string[] | undefined {
  const items = v?.split(",").map((s) => s.trim()).filter(Boolean);
  return items?.length ? items : undefined;
}

function envInt(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new CodememError("CONFIG_INVALID", `${name} must be an integer ≥ 0; got "${v}".`);
  return n;
}

/** A number ≥ 0 (fractions allowed). */
function envNumber(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new CodememError("CONFIG_INVALID", `${name} must be a number ≥ 0 (minutes; 0 = never); got "${v}".`);
  return n;
}

/** Environment-only settings that do not depend on a project (log level, event log switch, server mode). */
export function resolveProcessSettings(env: Env = process.env): {
  debug: boolean;
  eventLog: boolean;
  project?: string;
  runtimeDir?: string;
  /** CODEMEM_IDLE_MINUTES: how long a daemon started on demand waits without clients before it exits (0 = never). */
  idleMinutes: number;
  /** CODEMEM_BACKEND / CODEMEM_DB_URL as given (checked by resolveConfig): the server's --backend / --db-url equivalents. */
  backend?: string;
  dbUrl?: string;
  server: ServerEnvSettings;
} {
  return {
    // A getter: a malformed server variable fails the server mode only, not every CLI command.
    get server(): ServerEnvSettings {
      return {
        rbacEnabled: envBool(env.CODEMEM_RBAC_ENABLED),
        rateLimitPerMinute: envInt(env.CODEMEM_RATE_LIMIT_PER_MINUTE, "CODEMEM_RATE_LIMIT_PER_MINUTE"),
        trustedProxies: envList(env.CODEMEM_TRUSTED_PROXIES),
        allowFrom: envList(env.CODEMEM_ALLOW_FROM),
        directoryFile: env.CODEMEM_DIRECTORY_FILE || undefined,
      };
    },
    debug: envBool(env.CODEMEM_DEBUG) ?? DEFAULTS.debug,
    eventLog: envBool(env.CODEMEM_EVENT_LOG) ?? DEFAULTS.eventLog,
    project: env.CODEMEM_PROJECT || undefined,
    idleMinutes: envNumber(env.CODEMEM_IDLE_MINUTES, "CODEMEM_IDLE_MINUTES") ?? DEFAULTS.daemon.idleMinutes,
    backend: env.CODEMEM_BACKEND || undefined,
    dbUrl: env.CODEMEM_DB_URL || undefined,
    /** Per-user runtime directory for daemon sockets whose in-project path is too long. */
    runtimeDir: env.XDG_RUNTIME_DIR || undefined,
  };
}

export function resolveConfig(root: string, flags: ConfigFlags = {}, env: Env = process.env): ResolvedConfig {
  const file = stateDirs(root).configFile;
  const doc = readToml(file);
  const b = section(doc, "build", file);
  const e = section(doc, "embedder", file);
  const q = section(doc, "query", file);
  const l = section(doc, "llm", file);

  let excludePatterns = DEFAULTS.build.excludePatterns;
  if (b.exclude_patterns !== undefined) {
    if (!Array.isArray(b.exclude_patterns) || b.exclude_patterns.some((p) => typeof p !== "string")) {
      fail(file, `[build] exclude_patterns must be an array of strings, e.g. ["docs", "*.min.js"].`);
    }
    excludePatterns = b.exclude_patterns as string[];
  }
  const tiers = section(l, "models", file);
  const proc = resolveProcessSettings(env);

  const batchSize = flags.batchSize ?? int(b, "batch_size", file, "build", 1) ?? DEFAULTS.build.batchSize;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new CodememError("INVALID_ARGUMENT", `--batch-size must be a positive integer; got ${batchSize}.`);
  }
  const budget = flags.budget ?? int(q, "budget", file, "query", 100) ?? DEFAULTS.query.budget;

  return {
    root,
    build: {
      excludePatterns,
      maxFileBytes: int(b, "max_file_bytes", file, "build", 1024) ?? DEFAULTS.build.maxFileBytes,
      batchSize,
      graphSource:
        oneOf(str(b, "graph_source", file, "build"), ["auto", "builtin", "external"] as const, `${file}: [build] graph_source`) ??
        DEFAULTS.build.graphSource,
      excludeSecrets: flags.excludeSecrets ?? bool(b, "exclude_secrets", file, "build"),
      generator: findOnPath("codegraph", env.PATH),
      workers: int(b, "workers", file, "build", 1) ?? DEFAULTS.build.workers,
    },
    embedder: {
      kind:
        flags.embedder ??
        oneOf(env.CODEMEM_EMBEDDER || undefined, ["builtin", "neural"] as const, "CODEMEM_EMBEDDER") ??
        oneOf(str(e, "kind", file, "embedder"), ["builtin", "neural"] as const, `${file}: [embedder] kind`) ??
        DEFAULTS.embedder.kind,
      model: str(e, "model", file, "embedder") ?? DEFAULTS.embedder.model,
      modelDir: str(e, "model_dir", file, "embedder"),
      cacheDir: str(e, "cache_dir", file, "embedder"),
      allowDownload: bool(e, "allow_download", file, "embedder") ?? DEFAULTS.embedder.allowDownload,
    },
    query: {
      budget,
      wakeupBudget: int(q, "wakeup_budget", file, "query", 50) ?? DEFAULTS.query.wakeupBudget,
      synapseRecall: bool(q, "synapse_recall", file, "query") ?? DEFAULTS.query.synapseRecall,
    },
    llm: {
      baseUrl: env.CODEMEM_LLM_BASE_URL || str(l, "base_url", file, "llm"),
      apiKey: env.PROVIDER_API_KEY || undefined,
      models: {
        fast: str(tiers, "fast", file, "llm.models") ?? DEFAULTS.llm.models.fast,
        reliable: str(tiers, "reliable", file, "llm.models") ?? DEFAULTS.llm.models.reliable,
        specialist: str(tiers, "specialist", file, "llm.models") ?? DEFAULTS.llm.models.specialist,
      },
      timeoutMs: int(l, "timeout_ms", file, "llm", 100) ?? DEFAULTS.llm.timeoutMs,
    },
    store: resolveStore(root, flags, env, section(doc, "store", file), file),
    debug: proc.debug,
    eventLog: proc.eventLog,
  };
}

/**
 * Backend precedence: flags < environment < the project's last build (`.codemem/store.json`) <
 * codemem.toml [store] < local, highest first. The URL follows the same chain.
 */
function resolveStore(root: string, flags: ConfigFlags, env: Env, t: Record<string, unknown>, file: string): StoreSettings {
  const recorded = readStoreChoice(root);
  const tomlBackend = str(t, "backend", file, "store");
  const backend =
    flags.backend !== undefined ? canonicalBackend(flags.backend, "--backend")
    : env.CODEMEM_BACKEND ? canonicalBackend(env.CODEMEM_BACKEND, "CODEMEM_BACKEND")
    : recorded ? recorded.backend
    : tomlBackend !== undefined ? canonicalBackend(tomlBackend, `${file}: [store] backend`)
    : DEFAULTS.store.backend;
  const fromRecord = recorded?.backend === backend ? recorded : undefined;
  const tomlUrl = str(t, "db_url", file, "store");
  const dbUrl =
    flags.dbUrl !== undefined ? checkDbUrl(flags.dbUrl, "--db-url")
    : env.CODEMEM_DB_URL ? checkDbUrl(env.CODEMEM_DB_URL, "CODEMEM_DB_URL")
    : fromRecord?.db_url ?? (tomlUrl !== undefined ? checkDbUrl(tomlUrl, `${file}: [store] db_url`) : undefined);
  const project = str(t, "project", file, "store");
  if (project !== undefined && !/^[A-Za-z0-9_]{1,40}$/.test(project)) {
    fail(file, `[store] project must be 1–40 letters, digits or underscores (it names the database schema); got "${project}".`);
  }
  const base = (root.split("/").pop() ?? "project").toLowerCase().replace(/[^a-z0-9_]+/g, "_").slice(0, 24);
  const schema = project ? `codemem_${project.toLowerCase()}` : fromRecord?.schema ?? `codemem_${base}_${createHash("sha1").update(root).digest("hex").slice(0, 8)}`;
  return {
    backend,
    ...(dbUrl ? { dbUrl } : {}),
    ...(backend === "postgres" ? { password: dbPassword(env, str(t, "password_file", file, "store")) } : {}),
    schema,
    poolSize: int(t, "pool_size", file, "store", 1) ?? DEFAULTS.store.poolSize,
  };
}

/** The database password: CODEMEM_DB_PASSWORD, else the first line of CODEMEM_DB_PASSWORD_FILE or [store] password_file. */
function dbPassword(env: Env, tomlFile: string | undefined): string | undefined {
  if (env.CODEMEM_DB_PASSWORD) return env.CODEMEM_DB_PASSWORD;
  const file = env.CODEMEM_DB_PASSWORD_FILE || tomlFile;
  if (!file) return undefined;
  try {
    return fs.readFileSync(file, "utf8").split("\n")[0].trim();
  } catch (err) {
    throw new CodememError("CONFIG_INVALID", `The database password file ${file} cannot be read (${(err as NodeJS.ErrnoException).code}); check the path and its permissions.`, { file });
  }
}

function findOnPath(cmd: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? "").split(":")) {
    if (!dir) continue;
    const p = `${dir}/${cmd}`;
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}
