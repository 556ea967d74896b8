import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { CodememError } from "./errors.js";
import { globRegExp, linearRegExp } from "./linear-regex.js";
import { stateDirs, userDir, writeFileAtomic } from "./paths.js";
import { ensureOwnDir } from "./own-files.js";
import { isTrusted, revokeTrust, trustContent } from "./trust.js";

/**
 * One resolver for configuration. Precedence, lowest first:
 * defaults < codemem.toml < environment (CODEMEM_*) < explicit flags.
 * Nothing else in the code base reads process.env.
 *
 * A project's files are not the user's: settings that point credentials at a host (SENSITIVE) are
 * taken from codemem.toml or .codemem/store.json only once the user trusted that exact content
 * (`codemem trust`, shared/trust.ts), and a credential never travels in cleartext to another machine.
 * Both become a `refused` reason on the setting, raised where the credential would be sent.
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
  index: {
    /** `[index] test_patterns`: names, globs or `/regex/` marking test code beyond the built-in conventions. */
    testPatterns: string[];
  };
  embedder: {
    kind: "builtin" | "neural" | "trained";
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
    /** `[query] ranker`: "hand" (the rules of retriever.ts) or "learned" (the model of daemon/retrieve/ranker-model.json). */
    ranker: "hand" | "learned";
    /** `[query] ranker_model`: another model file for the learned ranker (absolute, or relative to the project). */
    rankerModel?: string;
  };
  synapses: {
    /** Newest commits of the git history the first build learns co-change from (0 = none). */
    historyCommits: number;
    /** Commits that changed more project files than this are bulk (renames, vendoring, sweeps): not learned. */
    historyMaxFiles: number;
    /** A file's own commits after which its co-change with a partner weighs half. */
    historyHalfLife: number;
    /** The project's commits after which all co-change evidence weighs half. */
    historyProjectHalfLife: number;
  };
  llm: {
    baseUrl?: string;
    apiKey?: string;
    models: { fast: string; reliable: string; specialist: string };
    timeoutMs: number;
    /** Why the provider may not be used (untrusted base_url, key over cleartext); baseUrl is then unset. */
    refused?: Refusal;
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

/** Why a credential is not sent: the error its user gets, with the setting and the fix. */
export interface Refusal {
  code: "CONFIG_UNTRUSTED" | "INSECURE_TRANSPORT";
  message: string;
}

/** Settings of a project file that point credentials at a host: honoured only from a trusted file. */
export const SENSITIVE = { store: ["db_url", "password_file"], llm: ["base_url"] } as const;

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
  /** postgres: why no connection may be made (untrusted URL or password file, password over cleartext). */
  refused?: Refusal;
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

/** The recorded choice; `trusted` says whether its content is one this user wrote (or trusted). */
export function readStoreChoice(root: string, env: Env = process.env): (StoreChoice & { trusted: boolean }) | undefined {
  const file = stateDirs(root).storeChoice;
  let text: string;
  let raw: unknown;
  try {
    text = fs.readFileSync(file, "utf8");
    raw = JSON.parse(text);
  } catch {
    return undefined; // none yet, or unreadable: fall back to configuration
  }
  const r = raw as Partial<StoreChoice>;
  const backend = typeof r.backend === "string" ? BACKEND_ALIASES[r.backend] : undefined;
  if (!backend) return undefined;
  const dbUrl = typeof r.db_url === "string" ? r.db_url : undefined;
  return { backend, ...(dbUrl ? { db_url: dbUrl } : {}), ...(typeof r.schema === "string" ? { schema: r.schema } : {}), trusted: dbUrl === undefined || isTrusted(file, text, env) };
}

/**
 * Records the backend of the last successful build, without secrets, for commands that name none.
 * Its URL came from the user's flags, environment or trusted codemem.toml, so the file is trusted
 * as written: a store.json that came with the repository is not.
 */
export function recordStoreChoice(root: string, s: StoreSettings, env: Env = process.env): void {
  const choice: StoreChoice = { backend: s.backend, ...(s.dbUrl ? { db_url: s.dbUrl } : {}), ...(s.backend === "postgres" ? { schema: s.schema } : {}) };
  const file = stateDirs(root).storeChoice;
  ensureOwnDir(path.dirname(file)); // not the project itself, if it was deleted meanwhile
  const text = JSON.stringify(choice, null, 2) + "\n";
  if (s.dbUrl) trustContent(file, text, env);
  writeFileAtomic(file, text);
}

/** Rejects URLs that carry a password (it would show in process lists, shell history and logs). */
function checkDbUrl(url: string, where: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CodememError("CONFIG_INVALID", `${where}: "${redactUrlText(url)}" is not a URL; use postgres://user@host:5432/database.`, { value: redactUrlText(url) });
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") {
    throw new CodememError("CONFIG_INVALID", `${where}: "${u.protocol}" URLs are not supported; use postgres://user@host:5432/database.`);
  }
  // pg reads every query parameter as a connection setting, `password` included.
  if (u.password || u.searchParams.has("password")) {
    throw new CodememError(
      "CONFIG_INVALID",
      `${where} contains a password; remove it (${redactDbUrl(url)}) and set CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE instead, so it never appears in process lists or logs.`,
    );
  }
  // pg applies every parameter in turn, so a repeated one takes its last value while a reader of
  // the first (URLSearchParams.get) would check another host or sslmode than the one connected to.
  const repeated = [...new Set([...u.searchParams.keys()].filter((k) => u.searchParams.getAll(k).length > 1))];
  if (repeated.length > 0) {
    throw new CodememError(
      "CONFIG_INVALID",
      `${where} sets ${repeated.map((k) => `"${k}"`).join(" and ")} more than once (${redactUrlText(url)}); keep one ${repeated[0]}= parameter with the value you mean.`,
      { parameters: repeated },
    );
  }
  return url;
}

/** A query parameter as pg reads it: the last occurrence wins, an empty value counts as unset. */
function driverParam(u: URL, name: string): string | undefined {
  return u.searchParams.getAll(name).at(-1) || undefined;
}

/** Any text that may hold a URL, with the password of `user:password@` and `password=` parameters masked. */
export function redactUrlText(text: string): string {
  return text.replace(/(\/\/[^/@\s:]*:)[^@\s]*@/g, "$1***@").replace(/((?:^|[?&;\s])password=)[^&;\s]*/gi, "$1***");
}

/** The host a postgres:// URL connects to, as pg reads it (a non-empty `host` parameter, its last, wins over the authority). */
export function dbHost(url: string): string {
  const u = new URL(url);
  return driverParam(u, "host") ?? (decodeURIComponent(u.hostname.replace(/^\[(.+)\]$/, "$1")) || "localhost");
}

/** This machine: a loopback name or address, or (PostgreSQL) a Unix socket directory. */
export function isLocalHost(host: string): boolean {
  const h = host.replace(/^\[(.+)\]$/, "$1").toLowerCase();
  return h.startsWith("/") || h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** sslmode values with which pg always uses TLS (prefer and allow may fall back to cleartext in libpq). */
const TLS_SSLMODES = ["require", "verify-ca", "verify-full"];

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

function untrusted(root: string, file: string, settings: string[], fix: string): Refusal {
  const how = file === stateDirs(root).storeChoice ? "no build of yours wrote it (it came with the project)" : `you have not trusted this version of the file. Review it, then run \`codemem trust ${root}\``;
  return {
    code: "CONFIG_UNTRUSTED",
    message: `${file} sets ${settings.join(" and ")}, which decide${settings.length > 1 ? "" : "s"} where your credentials are sent, and ${how}; or ${fix}.`,
  };
}

export type ConfigFlags = {
  backend?: string;
  dbUrl?: string;
  batchSize?: number;
  budget?: number;
  embedder?: "builtin" | "neural" | "trained";
  excludeSecrets?: boolean;
};

export const DEFAULTS: Omit<ResolvedConfig, "root" | "store"> & { store: { backend: BackendName; poolSize: number }; daemon: { idleMinutes: number } } = {
  build: { excludePatterns: [], maxFileBytes: 1024 * 1024, batchSize: 1000, graphSource: "auto", workers: 2, excludeSecrets: undefined },
  index: { testPatterns: [] },
  embedder: { kind: "builtin", model: "Xenova/all-MiniLM-L6-v2", allowDownload: false },
  query: { budget: 800, wakeupBudget: 400, synapseRecall: true, ranker: "hand" },
  synapses: { historyCommits: 2000, historyMaxFiles: 30, historyHalfLife: 20, historyProjectHalfLife: 700 },
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

function readToml(file: string): { doc: Record<string, unknown>; text?: string } {
  if (!fs.existsSync(file)) return { doc: {} };
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    fail(file, `cannot be read (${(err as Error).message}); fix its permissions.`);
  }
  try {
    return { doc: parseToml(text) as Record<string, unknown>, text };
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

function strings(t: Record<string, unknown>, key: string, file: string, sec: string, example: string): string[] | undefined {
  const v = t[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((p) => typeof p !== "string")) fail(file, `[${sec}] ${key} must be an array of strings, e.g. ${example}; got ${JSON.stringify(v)}.`);
  return v as string[];
}

/**
 * Patterns compile as they will run, in linear time (shared/linear-regex.ts): a repository's
 * codemem.toml must not hold a build. `/…/` is a regular expression where `regexes` allows it.
 */
function checkPatterns(file: string, sec: string, key: string, patterns: string[], regexes: boolean): void {
  for (const p of patterns) {
    const body = regexes ? regexBody(p) : undefined;
    try {
      if (body !== undefined) linearRegExp(body);
      else globRegExp(p.trim());
    } catch (err) {
      const fix = body !== undefined ? "fix it (no backreferences or lookaround), or write a name or glob without the enclosing slashes" : "fix it (escape a literal [ or { with \\)";
      fail(file, `[${sec}] ${key}: ${JSON.stringify(p)} is not a ${body !== undefined ? "regular expression" : "glob"} codemem can run in linear time (${(err as Error).message}); ${fix}.`);
    }
  }
}

/** A pattern written `/…/` is a regular expression (its body); anything else a name or glob. */
export function regexBody(pattern: string): string | undefined {
  const p = pattern.trim();
  return p.length > 2 && p.startsWith("/") && p.endsWith("/") ? p.slice(1, -1) : undefined;
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
  /** CODEMEM_ALLOW_ANY_PROJECT: a stdio server started for a project also answers for any other directory a call names (`--allow-any-project`). */
  allowAnyProject: boolean;
  runtimeDir?: string;
  /** `$XDG_STATE_HOME/codemem` (default `~/.local/state/codemem`): per-user state outside projects; undefined without HOME. */
  stateDir?: string;
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
    // Claude Code gives the MCP servers it starts for a project CLAUDE_PROJECT_DIR: a committed .mcp.json names no path.
    project: env.CODEMEM_PROJECT || env.CLAUDE_PROJECT_DIR || undefined,
    allowAnyProject: envBool(env.CODEMEM_ALLOW_ANY_PROJECT) ?? false,
    idleMinutes: envNumber(env.CODEMEM_IDLE_MINUTES, "CODEMEM_IDLE_MINUTES") ?? DEFAULTS.daemon.idleMinutes,
    backend: env.CODEMEM_BACKEND || undefined,
    dbUrl: env.CODEMEM_DB_URL || undefined,
    /** Per-user runtime directory for daemon sockets whose in-project path is too long. */
    runtimeDir: env.XDG_RUNTIME_DIR || undefined,
    stateDir: userDir("state", env),
  };
}

export function resolveConfig(root: string, flags: ConfigFlags = {}, env: Env = process.env): ResolvedConfig {
  const file = stateDirs(root).configFile;
  const { doc, text } = readToml(file);
  const trusted = text === undefined || isTrusted(file, text, env);
  const b = section(doc, "build", file);
  const e = section(doc, "embedder", file);
  const q = section(doc, "query", file);
  const l = section(doc, "llm", file);
  const sy = section(doc, "synapses", file);

  const excludePatterns = strings(b, "exclude_patterns", file, "build", `["docs", "*.min.js"]`) ?? DEFAULTS.build.excludePatterns;
  const testPatterns = strings(section(doc, "index", file), "test_patterns", file, "index", `["integration", "*_check.py"]`) ?? DEFAULTS.index.testPatterns;
  checkPatterns(file, "build", "exclude_patterns", excludePatterns, false);
  checkPatterns(file, "index", "test_patterns", testPatterns, true);
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
    index: { testPatterns },
    embedder: {
      kind:
        flags.embedder ??
        oneOf(env.CODEMEM_EMBEDDER || undefined, ["builtin", "neural", "trained"] as const, "CODEMEM_EMBEDDER") ??
        oneOf(str(e, "kind", file, "embedder"), ["builtin", "neural", "trained"] as const, `${file}: [embedder] kind`) ??
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
      ranker: oneOf(str(q, "ranker", file, "query"), ["hand", "learned"] as const, `${file}: [query] ranker`) ?? DEFAULTS.query.ranker,
      rankerModel: ((m) => (m === undefined ? undefined : path.resolve(root, m)))(str(q, "ranker_model", file, "query")),
    },
    synapses: {
      historyCommits: int(sy, "history_commits", file, "synapses", 0) ?? DEFAULTS.synapses.historyCommits,
      historyMaxFiles: int(sy, "history_max_files", file, "synapses", 2) ?? DEFAULTS.synapses.historyMaxFiles,
      historyHalfLife: int(sy, "history_half_life", file, "synapses", 1) ?? DEFAULTS.synapses.historyHalfLife,
      historyProjectHalfLife: int(sy, "history_project_half_life", file, "synapses", 1) ?? DEFAULTS.synapses.historyProjectHalfLife,
    },
    llm: {
      ...resolveProvider(env, str(l, "base_url", file, "llm"), trusted, file),
      models: {
        fast: str(tiers, "fast", file, "llm.models") ?? DEFAULTS.llm.models.fast,
        reliable: str(tiers, "reliable", file, "llm.models") ?? DEFAULTS.llm.models.reliable,
        specialist: str(tiers, "specialist", file, "llm.models") ?? DEFAULTS.llm.models.specialist,
      },
      timeoutMs: int(l, "timeout_ms", file, "llm", 100) ?? DEFAULTS.llm.timeoutMs,
    },
    store: resolveStore(root, flags, env, section(doc, "store", file), file, trusted),
    debug: proc.debug,
    eventLog: proc.eventLog,
  };
}

/**
 * The chat-completions provider: CODEMEM_LLM_BASE_URL, else [llm] base_url of a trusted codemem.toml.
 * The key (PROVIDER_API_KEY) goes to another machine over https only.
 */
function resolveProvider(env: Env, tomlUrl: string | undefined, trusted: boolean, file: string): Pick<ResolvedConfig["llm"], "baseUrl" | "apiKey" | "refused"> {
  const apiKey = env.PROVIDER_API_KEY || undefined;
  const fromEnv = env.CODEMEM_LLM_BASE_URL || undefined;
  if (!fromEnv && tomlUrl !== undefined && !trusted) {
    return { apiKey, refused: untrusted(path.dirname(file), file, ["[llm] base_url"], "set CODEMEM_LLM_BASE_URL yourself") };
  }
  const baseUrl = fromEnv ?? tomlUrl;
  if (baseUrl === undefined || apiKey === undefined) return { baseUrl, apiKey };
  const where = fromEnv ? "CODEMEM_LLM_BASE_URL" : `${file}: [llm] base_url`;
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new CodememError("CONFIG_INVALID", `${where}: "${redactUrlText(baseUrl)}" is not a URL; use https://host/v1.`);
  }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && isLocalHost(u.hostname))) {
    return {
      apiKey,
      refused: {
        code: "INSECURE_TRANSPORT",
        message: `${where} is ${u.protocol}//${u.host}: PROVIDER_API_KEY would travel in cleartext to another machine. Use an https:// URL (plain http only to localhost).`,
      },
    };
  }
  return { baseUrl, apiKey };
}

/**
 * Backend precedence: flags < environment < the project's last build (`.codemem/store.json`) <
 * codemem.toml [store] < local, highest first. The URL follows the same chain.
 */
function resolveStore(root: string, flags: ConfigFlags, env: Env, t: Record<string, unknown>, file: string, trusted: boolean): StoreSettings {
  const recorded = readStoreChoice(root, env);
  const tomlBackend = str(t, "backend", file, "store");
  const backend =
    flags.backend !== undefined ? canonicalBackend(flags.backend, "--backend")
    : env.CODEMEM_BACKEND ? canonicalBackend(env.CODEMEM_BACKEND, "CODEMEM_BACKEND")
    : recorded ? recorded.backend
    : tomlBackend !== undefined ? canonicalBackend(tomlBackend, `${file}: [store] backend`)
    : DEFAULTS.store.backend;
  const fromRecord = recorded?.backend === backend ? recorded : undefined;
  const tomlUrl = str(t, "db_url", file, "store");
  const userUrl = flags.dbUrl !== undefined ? checkDbUrl(flags.dbUrl, "--db-url") : env.CODEMEM_DB_URL ? checkDbUrl(env.CODEMEM_DB_URL, "CODEMEM_DB_URL") : undefined;
  const recordedUrl = userUrl === undefined && fromRecord?.db_url !== undefined ? checkDbUrl(fromRecord.db_url, `${stateDirs(root).storeChoice}: db_url`) : undefined;
  const projectUrl = userUrl === undefined && recordedUrl === undefined && tomlUrl !== undefined ? checkDbUrl(tomlUrl, `${file}: [store] db_url`) : undefined;
  const tomlPasswordFile = str(t, "password_file", file, "store");
  const projectPasswordFile = env.CODEMEM_DB_PASSWORD || env.CODEMEM_DB_PASSWORD_FILE ? undefined : tomlPasswordFile;
  // An untrusted file's settings are never used: not even read (password_file), nor connected to.
  const distrusted = [
    ...(projectUrl !== undefined && !trusted ? ["[store] db_url"] : []),
    ...(projectPasswordFile !== undefined && !trusted ? ["[store] password_file"] : []),
  ];
  let refused: Refusal | undefined;
  if (backend === "postgres" && recordedUrl !== undefined && !fromRecord!.trusted) {
    refused = untrusted(root, stateDirs(root).storeChoice, ["db_url"], "pass --db-url or set CODEMEM_DB_URL yourself");
  } else if (backend === "postgres" && distrusted.length > 0) {
    refused = untrusted(root, file, distrusted, "set CODEMEM_DB_URL and CODEMEM_DB_PASSWORD_FILE yourself");
  }
  const dbUrl = refused ? undefined : (userUrl ?? recordedUrl ?? projectUrl);
  const project = str(t, "project", file, "store");
  if (project !== undefined && !/^[A-Za-z0-9_]{1,40}$/.test(project)) {
    fail(file, `[store] project must be 1–40 letters, digits or underscores (it names the database schema); got "${project}".`);
  }
  const base = (root.split("/").pop() ?? "project").toLowerCase().replace(/[^a-z0-9_]+/g, "_").slice(0, 24);
  const schema = project ? `codemem_${project.toLowerCase()}` : fromRecord?.schema ?? `codemem_${base}_${createHash("sha1").update(root).digest("hex").slice(0, 8)}`;
  const password = backend === "postgres" && !refused ? dbPassword(env, projectPasswordFile) : undefined;
  if (dbUrl && password !== undefined && !refused) refused = cleartextRefusal(dbUrl);
  return {
    backend,
    ...(dbUrl && !refused ? { dbUrl } : {}),
    ...(password !== undefined && !refused ? { password } : {}),
    schema,
    poolSize: int(t, "pool_size", file, "store", 1) ?? DEFAULTS.store.poolSize,
    ...(refused ? { refused } : {}),
  };
}

/** A password may go to another machine only over TLS (pg then always encrypts: sslmode=require or stronger). */
function cleartextRefusal(dbUrl: string): Refusal | undefined {
  const host = dbHost(dbUrl);
  const sslmode = driverParam(new URL(dbUrl), "sslmode");
  if (isLocalHost(host) || (sslmode !== undefined && TLS_SSLMODES.includes(sslmode))) return undefined;
  return {
    code: "INSECURE_TRANSPORT",
    message: `The database password would travel in cleartext to ${host}, which is not this machine (${redactDbUrl(dbUrl)}). Add ?sslmode=verify-full (or require) to the URL so the connection is encrypted.`,
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

/** One file `codemem trust` covered, with the settings trusting it lets through. */
export interface TrustedFile {
  file: string;
  sha256: string;
  /** The SENSITIVE settings it sets (URLs without password), e.g. {"[store] db_url": "postgres://…"}. */
  settings: Record<string, string>;
}

/**
 * `codemem trust`: records the current content of the project's codemem.toml as the user's own, so
 * its sensitive settings apply; any later edit needs trust again. A `.codemem/store.json` is never
 * trusted this way: it is codemem's own record, trusted only as a build of this user's wrote it (a
 * shipped one is someone else's writing, whatever the harmless codemem.toml beside it says).
 * `revoke` forgets both.
 */
export function trustProject(root: string, opts: { revoke?: boolean } = {}, env: Env = process.env): TrustedFile[] {
  const dirs = stateDirs(root);
  const { doc, text } = readToml(dirs.configFile); // invalid TOML fails here, before it is trusted
  if (opts.revoke && fs.existsSync(dirs.storeChoice)) revokeTrust(dirs.storeChoice, env);
  if (text === undefined) {
    throw new CodememError("PATH_NOT_FOUND", `${dirs.configFile} does not exist: there is nothing to trust in ${root}.`, { value: dirs.configFile });
  }
  const settings: Record<string, string> = {};
  for (const [sec, keys] of Object.entries(SENSITIVE)) {
    const t = section(doc, sec, dirs.configFile);
    for (const k of keys) {
      const v = str(t, k, dirs.configFile, sec);
      if (v !== undefined) settings[`[${sec}] ${k}`] = k.endsWith("url") ? redactUrlText(v) : v;
    }
  }
  if (opts.revoke) revokeTrust(dirs.configFile, env);
  else trustContent(dirs.configFile, text, env);
  return [{ file: dirs.configFile, sha256: createHash("sha256").update(text).digest("hex"), settings }];
}
