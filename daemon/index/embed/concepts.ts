import { createHash } from "node:crypto";

/**
 * Groups of words that mean the same thing in code and in questions about code. The built-in
 * embedder adds a shared concept feature for each member, so "remove" finds `delete_entry`.
 * Words are stems as produced by text.stem().
 */
export const CONCEPT_GROUPS: string[][] = [
  ["delete", "remove", "drop", "erase", "unlink", "purge", "discard", "rm", "del"],
  ["create", "make", "new", "build", "construct", "init", "initialize", "initialise", "spawn", "alloc", "allocate"],
  ["get", "fetch", "retrieve", "load", "lookup", "find", "locate", "query", "obtain", "read"],
  ["set", "assign", "store", "save", "put", "write", "persist", "update"],
  ["parse", "decode", "unmarshal", "deserialize", "deserialise", "unpack", "scan", "tokenize", "lex"],
  ["format", "encode", "marshal", "serialize", "serialise", "pack", "dump", "render", "stringify", "print"],
  ["error", "err", "exception", "fail", "failure", "fault", "panic", "raise", "throw"],
  ["check", "validate", "verify", "ensure", "assert", "test", "guard"],
  ["config", "configuration", "setting", "option", "opt", "preference", "conf", "cfg", "param", "parameter"],
  ["connect", "connection", "conn", "dial", "socket", "sock", "link"],
  ["close", "shutdown", "stop", "terminate", "end", "finish", "teardown", "quit", "exit"],
  ["start", "begin", "launch", "run", "boot", "open", "serve", "listen"],
  ["send", "transmit", "emit", "post", "publish", "dispatch", "push", "write"],
  ["receive", "recv", "accept", "consume", "pull", "subscribe"],
  ["request", "req"],
  ["response", "resp", "reply", "answer", "result"],
  ["header", "hdr", "field", "metadata"],
  ["cache", "memo", "memoize", "lru", "buffer", "pool"],
  ["retry", "backoff", "attempt", "again", "redo"],
  ["timeout", "deadline", "expire", "expiry", "ttl", "timer"],
  ["lock", "mutex", "mu", "semaphore", "sync", "synchronize", "atomic"],
  ["thread", "goroutine", "worker", "concurrent", "parallel", "async", "await", "task", "coroutine", "future", "promise"],
  ["path", "filename", "dir", "directory", "folder", "file"],
  ["url", "uri", "href", "link", "address", "addr", "host", "endpoint"],
  ["auth", "authenticate", "authentication", "login", "credential", "password", "token", "cookie", "session"],
  ["encrypt", "cipher", "crypto", "tls", "ssl", "secure", "hash", "digest", "sign", "signature"],
  ["compress", "gzip", "zlib", "deflate", "zip", "inflate", "decompress"],
  ["log", "logger", "logging", "trace", "debug", "warn"],
  ["test", "spec", "mock", "fixture", "assert"],
  ["list", "array", "slice", "vector", "seq", "sequence", "collection"],
  ["map", "dict", "dictionary", "hash", "table", "object", "record"],
  ["string", "str", "text", "char", "byte", "bytes", "rune"],
  ["number", "num", "int", "integer", "float", "decimal", "digit", "numeric"],
  ["date", "time", "datetime", "timestamp", "clock", "calendar", "duration"],
  ["sort", "order", "rank", "compare", "cmp", "less"],
  ["copy", "clone", "duplicate", "dup"],
  ["convert", "transform", "cast", "coerce", "translate", "adapt"],
  ["iterate", "iter", "iterator", "loop", "each", "walk", "traverse", "visit", "generator", "yield"],
  ["event", "signal", "notify", "callback", "hook", "handler", "listener", "observer", "observable"],
  ["schedule", "scheduler", "queue", "job", "cron", "delay", "defer"],
  ["user", "account", "member", "principal", "identity"],
  ["permission", "role", "access", "acl", "grant", "authorize", "authorization", "policy"],
  ["escape", "quote", "sanitize", "unescape"],
  ["split", "tokenize", "chunk", "partition", "divide", "separate"],
  ["join", "concat", "concatenate", "merge", "combine", "union"],
  ["size", "length", "len", "count", "number"],
  ["max", "maximum", "limit", "cap", "bound", "upper"],
  ["min", "minimum", "lower", "floor"],
  ["redirect", "forward", "proxy", "reroute"],
  ["environment", "env", "variable", "var"],
  ["temp", "temporary", "tmp", "scratch"],
  ["random", "rand", "rng", "shuffle", "seed"],
  ["match", "regex", "regexp", "pattern", "glob", "wildcard"],
  ["email", "mail", "smtp", "message", "msg"],
  ["http", "web", "rest", "api", "server", "client"],
  ["database", "db", "sql", "sqlite", "storage", "store", "repository"],
  ["graph", "node", "edge", "tree", "vertex"],
  ["wait", "sleep", "block", "poll", "select"],
  ["cancel", "abort", "interrupt", "kill"],
  ["unique", "dedupe", "distinct", "uniq"],
  ["empty", "blank", "null", "nil", "none", "zero", "missing"],
  ["default", "fallback", "preset", "standard"],
  ["app", "application", "applicate"],
];

const conceptOf = new Map<string, number[]>();
CONCEPT_GROUPS.forEach((group, i) => {
  for (const w of group) {
    const list = conceptOf.get(w) ?? [];
    list.push(i);
    conceptOf.set(w, list);
  }
});

/** Names the groups' contents in the built-in embedder's id: another grouping gives other vectors. */
export const CONCEPTS_VERSION = createHash("sha1").update(JSON.stringify(CONCEPT_GROUPS)).digest("hex").slice(0, 8);

export function conceptsOf(stemmedWord: string): number[] | undefined {
  return conceptOf.get(stemmedWord);
}
