/** Stable error codes: they cross process boundaries (RPC replies, MCP tool errors, exit codes). */
export const ERROR_CODES = [
  "PATH_RELATIVE",
  /** A path holding `${workspaceFolder}`, `$VAR` or a leading `~` that a host passed unexpanded. */
  "PATH_UNEXPANDED",
  "PATH_NOT_FOUND",
  "PATH_NOT_DIRECTORY",
  /** The file system's root or the home directory: not one project (an index of everything below it). */
  "PATH_NOT_PROJECT",
  "PATH_OUTSIDE_PROJECT",
  /** A tool call names a directory outside the project its MCP server was started for. */
  "PROJECT_NOT_SERVED",
  "FILE_NOT_INDEXED",
  /** A symbol named to trace or impact matches no node of the index. */
  "SYMBOL_NOT_FOUND",
  /** A symbol name matches several nodes: the details list them, pick one by id or `path:name`. */
  "SYMBOL_AMBIGUOUS",
  /** `impact --diff REF`: REF names no commit of the repository. */
  "GIT_REF_INVALID",
  /** `impact --diff` on a project that is not inside a git work tree (or git is missing). */
  "NOT_A_GIT_REPO",
  "CONFIG_INVALID",
  /** A project file (codemem.toml, .codemem/store.json) points credentials at a host and the user has not trusted it (`codemem trust`). */
  "CONFIG_UNTRUSTED",
  /** A credential would travel in cleartext to a host that is not this machine (no TLS). */
  "INSECURE_TRANSPORT",
  /** The per-user runtime directory for daemon sockets is not private to this user. */
  "RUNTIME_DIR_UNSAFE",
  /** A path codemem would write through is a link, or a directory that is not this user's own (a repository can ship them). */
  "PATH_UNSAFE",
  "INDEX_MISSING",
  "INDEX_CORRUPT",
  "INDEX_EMBEDDER_MISMATCH",
  /** No space left where codemem writes (index, WAL, graph.json, synapses): nothing was changed. */
  "DISK_FULL",
  "GRAPH_MISSING",
  "GRAPH_MALFORMED",
  "GENERATOR_FAILED",
  "EMBEDDER_MODEL_MISSING",
  "EMBEDDER_LOAD_FAILED",
  /** The learned ranker's model file is missing or malformed (`[query] ranker = "learned"`). */
  "RANKER_MODEL_INVALID",
  "INVALID_ARGUMENT",
  "UNKNOWN_OPERATION",
  "BUILD_IN_PROGRESS",
  /** The user stopped a build (Ctrl-C on `codemem build`) before its write: the index is as it was. */
  "BUILD_CANCELLED",
  "DAEMON_UNAVAILABLE",
  /** The database server cannot be reached (refused, unknown host, timeout). */
  "BACKEND_UNREACHABLE",
  /** The database refused our credentials or permissions. */
  "BACKEND_AUTH_FAILED",
  /** The backend is reachable but lacks something it needs (the vector extension, a native module). */
  "BACKEND_UNSUPPORTED",
  "PROVIDER_FAILED",
  "INTERNAL",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error that may cross a boundary: a stable code plus a message naming the value and the fix. */
export class CodememError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "CodememError";
  }

  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

/** SQLite found a damaged page or a file that is not a database (better-sqlite3's SqliteError codes). */
export function isCorruptionError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
}

/** The disk filled under a write (SQLite's SQLITE_FULL, the file system's ENOSPC or EDQUOT). */
export function isDiskFullError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && /^(SQLITE_FULL|ENOSPC|EDQUOT)$/.test(code);
}

/** Normalises anything thrown into a CodememError (unknown failures become INTERNAL). */
export function asCodememError(err: unknown): CodememError {
  if (err instanceof CodememError) return err;
  const code = (err as { code?: unknown })?.code;
  if (isCorruptionError(err)) {
    return new CodememError("INDEX_CORRUPT", `The index database is damaged (${(err as Error).message}); rebuild it with \`codemem build --force\` (the damaged file is kept aside).`);
  }
  if (isDiskFullError(err)) {
    return new CodememError("DISK_FULL", `The disk is full (${(err as Error).message}); nothing was changed: free space on the disk that holds the project's codegraph-out/ and .codemem/, then run the build again.`);
  }
  if (typeof code === "string" && (ERROR_CODES as readonly string[]).includes(code)) {
    return new CodememError(code as ErrorCode, (err as Error).message);
  }
  return new CodememError("INTERNAL", err instanceof Error ? err.message : String(err));
}

/** Process exit codes of the CLI, by error family. */
export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case "INVALID_ARGUMENT":
    case "UNKNOWN_OPERATION":
    case "PATH_RELATIVE":
    case "PATH_UNEXPANDED":
    case "PATH_NOT_FOUND":
    case "PATH_NOT_DIRECTORY":
    case "PATH_NOT_PROJECT":
    case "PATH_OUTSIDE_PROJECT":
    case "PROJECT_NOT_SERVED":
    case "FILE_NOT_INDEXED":
    case "SYMBOL_NOT_FOUND":
    case "SYMBOL_AMBIGUOUS":
    case "GIT_REF_INVALID":
    case "NOT_A_GIT_REPO":
    case "CONFIG_INVALID":
    case "CONFIG_UNTRUSTED":
    case "INSECURE_TRANSPORT":
      return 2;
    case "INDEX_MISSING":
    case "INDEX_CORRUPT":
    case "INDEX_EMBEDDER_MISMATCH":
    case "GRAPH_MISSING":
    case "GRAPH_MALFORMED":
    case "GENERATOR_FAILED":
      return 3;
    case "DAEMON_UNAVAILABLE":
    case "RUNTIME_DIR_UNSAFE":
    case "PATH_UNSAFE":
    case "DISK_FULL":
    case "BACKEND_UNREACHABLE":
    case "BACKEND_AUTH_FAILED":
    case "BACKEND_UNSUPPORTED":
      return 4;
    default:
      return 1;
  }
}
