// Secret detection and redaction: provider key formats, PEM private keys, credential-named
// assignments and `.env` values. Used by `codemem scan-for-secrets` (report) and by
// `build --exclude-secrets` (redact source text before parsing and embedding, keeping every line
// number of the rest of the file unchanged).
import fs from "node:fs";
import path from "node:path";
import { type Ignore } from "ignore";
import { ALWAYS_EXCLUDED_DIRS, compileExcludes, isIgnored, loadGitignore } from "../index/walk.js";
import { leadsOutside } from "../../shared/paths.js";

export interface SecretFinding {
  file: string;
  /** 1-based line of the secret (of the BEGIN line for a PEM block). */
  line: number;
  kind: string;
  /** Redacted: a short prefix, "…" and the length; never the secret itself. */
  preview: string;
}

export const REDACTED = "«redacted»";
export const REDACTED_PRIVATE_KEY = "«redacted private key»";

/** Files at most this big are scanned. */
export const MAX_SCAN_BYTES = 2 * 1024 * 1024;

const LOCK_FILES = new Set([
  "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock", "go.sum", "Cargo.lock",
  "poetry.lock", "Pipfile.lock", "uv.lock", "composer.lock", "Gemfile.lock", "pdm.lock", "flake.lock", "packages.lock.json",
]);

/** `.env`, `.env.local`, `.env.production`, `prod.env` … */
export function isEnvFile(file: string): boolean {
  const base = basename(file);
  return /^\.env(\..+)?$/.test(base) || /^[\w.-]+\.env$/.test(base);
}
/** `.env.example`, `.env.sample`, `.env.template` (and `.dist`/`.defaults`): documentation of the variables. */
function isEnvTemplate(file: string): boolean {
  return /\.(example|sample|template|dist|defaults?|tmpl|tpl)$/i.test(basename(file)) || /^\.env\.(example|sample|template)\./i.test(basename(file));
}
/** Formats where `key: value` / `key = value` take unquoted values. */
function isConfigFile(file: string): boolean {
  return (
    isEnvFile(file) ||
    /\.(ya?ml|ini|cfg|conf|properties|toml|env)$/i.test(file) ||
    /(^|\/)\.?(npmrc|pypirc|netrc|htpasswd)$/.test(file) ||
    /(^|\/)(Dockerfile|Containerfile)([.-][\w.-]+)?$|\.dockerfile$/i.test(file)
  );
}
function basename(file: string): string {
  const i = Math.max(file.lastIndexOf("/"), file.lastIndexOf("\\"));
  return i < 0 ? file : file.slice(i + 1);
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Shannon entropy in bits per character. */
export function shannonEntropy(s: string): number {
  if (!s) return 0;
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  const n = [...s].length;
  let h = 0;
  for (const c of counts.values()) {
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}

function preview(secret: string): string {
  const n = secret.length;
  const k = Math.min(4, Math.floor(n / 4)); // never more than a quarter of a short secret
  return `${secret.slice(0, k)}…(${n} chars)`;
}

const PLACEHOLDER_WORDS = new Set([
  "changeme", "change_me", "change-me", "changeit", "change_this", "changethis", "password", "passwd", "passphrase", "secret",
  "token", "apikey", "api_key", "api-key", "example", "sample", "dummy", "placeholder", "redacted", "none", "null", "nil",
  "undefined", "true", "false", "test", "testing", "todo", "fixme", "tbd", "replaceme", "replace_me", "replace-me", "default",
  "foo", "bar", "foobar", "admin", "root", "user", "username", "pass", "hunter2", "qwerty", "letmein", "mypassword",
  "yourpassword", "your_password", "secretkey", "secret_key", "mysecret", "mysecretkey", "notasecret", "not-a-secret",
  "secret123", "password123", "password1", "p@ssw0rd", "pa$$word", "s3cr3t", "empty", "unset", "required", "optional",
]);
const PLACEHOLDER_RE = new RegExp(
  [
    String.raw`(.)\1*`, // xxxxxxxx, ********, 00000000
    String.raw`<[^>]*>`, String.raw`\[[^\]]*\]`, String.raw`\(.*\)`,
    String.raw`.*\{\{.*\}\}.*`, String.raw`.*\$\{[^}]*\}.*`, String.raw`\$[A-Za-z_]\w*`, String.raw`.*\$\(.*\).*`, String.raw`.*%\([\w.]*\)[sdr].*`, String.raw`.*%[sd].*`,
    String.raw`.*\{[A-Za-z_][\w.]*\}.*`, String.raw`.*\{\d*\}.*`, // format strings
    String.raw`(?:your|my|some|the|insert|enter|put|add)[-_ ].*`,
    String.raw`.*(?:example|placeholder|dummy|sample|changeme|change[-_]me|redacted|«).*`,
    String.raw`(?:process\.env|import\.meta\.env|os\.environ|os\.getenv|getenv|env|ENV|System\.getenv)\b.*`,
    String.raw`x{3,}.*`, String.raw`.*x{6,}.*`, String.raw`\*{3,}.*`, String.raw`\.{3,}.*`, String.raw`.*\.\.\.`,
  ].map((p) => `(?:${p})`).join("|"),
  "i",
);
const PLACEHOLDER_FULL = new RegExp(`^(?:${PLACEHOLDER_RE.source})$`, "i");
/** "changeme", "xxx", "<token>", "${API_KEY}", "your-key-here", env lookups, format strings… */
export function isPlaceholder(value: string): boolean {
  const t = value.trim();
  return !t || PLACEHOLDER_WORDS.has(t.toLowerCase()) || PLACEHOLDER_FULL.test(t);
}
const placeholder = isPlaceholder;

// ---------------------------------------------------------------------------------------------
// Detection

interface Span {
  start: number; // offset in text
  end: number;
  kind: string;
  secret: string;
  /** PEM blocks: replace whole lines. */
  pem?: { lineStart: number; lineEnd: number; header: string };
}

/** Provider formats, most specific first (an earlier match wins an overlap). */
const PROVIDERS: { kind: string; re: RegExp }[] = [
  { kind: "aws-access-key-id", re: /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])/g },
  { kind: "github-token", re: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g },
  { kind: "gitlab-token", re: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}/g },
  { kind: "slack-token", re: /(?<![A-Za-z0-9_-])xox[baprs]-[A-Za-z0-9-]{10,}/g },
  { kind: "slack-webhook", re: /https:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9_]+\/B[A-Za-z0-9_]+\/[A-Za-z0-9_]{16,}/g },
  { kind: "stripe-key", re: /(?<![A-Za-z0-9_])(?:sk|rk)_live_[A-Za-z0-9]{20,}/g },
  { kind: "google-api-key", re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  { kind: "anthropic-key", re: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}/g },
  { kind: "openai-key", re: /(?<![A-Za-z0-9_-])(?:sk-proj-[A-Za-z0-9_-]{20,}|sk-(?:svcacct-|admin-)?[A-Za-z0-9]{20,})(?![A-Za-z0-9])/g },
  { kind: "npm-token", re: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g },
  { kind: "sendgrid-key", re: /(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  { kind: "jwt", re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/g },
];
/** AWS secret access keys: 40 base64 characters assigned to an aws…secret… name. */
const AWS_SECRET_RE = /aws[_.-]?(?:secret[_.-]?(?:access[_.-]?)?key|secret)["']?\s*(?:=|:=|:|=>)\s*["']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi;
const BEARER_RE = /\b(?:Bearer|Basic|token)[ \t]+([A-Za-z0-9._~+/-]{20,}=*)/g;
const URL_CRED_RE = /:\/\/([^\s/:@'"`<>()]{0,256}):([^\s/@'"`<>()]{1,256})@/y; // scheme://user:pass@ or scheme://:pass@, tried at each "://"
/** `password=…` inside a connection string (libpq `host=… password=…`, ADO.NET `…;Password=…;`), in any file. */
const CONNSTR_RE = /(?<=^|[\s;"'`(])(?:password|passwd|pwd)[ \t]*=[ \t]*([^\s;"'`)]+)/gim;
/** `.netrc`: `machine host login user password secret`. */
const NETRC_RE = /\bpassword[ \t]+(\S+)/g;
const PEM_BEGIN_RE = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;
const DATA_URI_RE = /data:[\w/+.-]*(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=]{16,}/g;
const KEYWORD_RE = /pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth/gi;
const IDENT_CHAR = /[A-Za-z0-9_.-]/;

const SECRET_TOKENS = new Set(["password", "passwd", "passphrase", "pwd", "pass", "secret", "token", "apikey", "auth", "accesskey", "privatekey", "clientsecret", "secretkey"]);
const SECRET_PAIRS = new Set(["api key", "access key", "private key", "client secret", "secret key"]);
/** Names ending in these describe a secret rather than hold one: `token_url`, `password_field`, `auth_type`. */
const NON_SECRET_SUFFIX = new Set([
  "url", "uri", "urls", "endpoint", "host", "path", "file", "filename", "dir", "name", "names", "type", "types", "kind", "header", "headers",
  "field", "fields", "label", "prefix", "suffix", "env", "var", "variable", "length", "len", "size", "count", "format", "fmt", "pattern",
  "regex", "re", "message", "msg", "prompt", "error", "errors", "class", "mode", "method", "methods", "policy", "provider", "scheme",
  "source", "expiry", "expires", "ttl", "timeout", "hash", "handler", "id", "ids", "index", "idx", "char", "chars", "kinds", "cls",
  "module", "param", "arg", "option", "opt", "setting", "version", "enabled", "required", "min", "max", "label", "text", "doc", "help",
  "placeholder", "example", "description", "desc", "input", "string", "str", "hdr",
]);

function nameTokens(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}
/** Does this identifier name a credential (`DB_PASSWORD`, `clientSecret`, `api-key`), not describe one (`token_url`)? */
export function isSecretName(name: string): boolean {
  const last = name.slice(name.lastIndexOf(".") + 1);
  const t = nameTokens(last);
  if (!t.length) return false;
  if (NON_SECRET_SUFFIX.has(t[t.length - 1])) return false;
  for (let i = 0; i < t.length; i++) {
    if (SECRET_TOKENS.has(t[i])) return true;
    if (i + 1 < t.length && SECRET_PAIRS.has(`${t[i]} ${t[i + 1]}`)) return true;
  }
  return false;
}

/** Is this literal, assigned to a credential name, a real-looking secret? Returns the kind. */
function classifyValue(value: string): string | undefined {
  if (placeholder(value)) return undefined;
  if (/\s/.test(value)) return undefined; // prose, not a credential
  if (/:\/\//.test(value) || /^(?:[./~]|[A-Za-z]:\\)/.test(value)) return undefined; // URLs (credentials in URLs are found separately) and paths
  if (/^[\d.]+$/.test(value)) return undefined; // versions, OIDs (`SERVER_AUTH = '1.3.6.1.5.5.7.3.1'`)
  if (/^[A-Za-z]+(?:[-_.][A-Za-z]+)+$/.test(value)) return undefined; // hyphenated words (`"Proxy-Authorization"`)
  if (value.length >= 16 && shannonEntropy(value) >= 3.5) return "high-entropy-assignment";
  // Any other literal ≥ 8 chars, unless it reads as a word or a dotted identifier (`Authorization`, `auth.backend`).
  if (value.length >= 8 && (/\d/.test(value) || /[^A-Za-z0-9_.\-/]/.test(value))) return "hardcoded-credential";
  return undefined;
}

interface Ctx {
  text: string;
  file: string;
  spans: Span[];
  blocked: [number, number][]; // data URIs: never secrets
}

function overlaps(ctx: Ctx, start: number, end: number): boolean {
  for (const [s, e] of ctx.blocked) if (start < e && end > s) return true;
  for (const sp of ctx.spans) if (start < sp.end && end > sp.start) return true;
  return false;
}
function add(ctx: Ctx, span: Span): void {
  if (span.end <= span.start || overlaps(ctx, span.start, span.end)) return;
  ctx.spans.push(span);
}
function providerPlaceholder(s: string): boolean {
  return /EXAMPLE|x{6,}|X{6,}|0{10,}|(?:abcdef|123456)/.test(s) || /(.)\1{7,}/.test(s);
}

function lineBounds(text: string, pos: number): { start: number; end: number } {
  const start = text.lastIndexOf("\n", pos - 1) + 1;
  let end = text.indexOf("\n", pos);
  if (end < 0) end = text.length;
  if (end > start && text[end - 1] === "\r") end--;
  return { start, end };
}

function detectPem(ctx: Ctx): void {
  const { text } = ctx;
  PEM_BEGIN_RE.lastIndex = 0;
  for (let m; (m = PEM_BEGIN_RE.exec(text)); ) {
    const label = m[1];
    const header = m[0];
    const begin = m.index;
    const first = lineBounds(text, begin);
    const endMarker = `-----END ${label}-----`;
    const endAt = text.indexOf(endMarker, begin + header.length);
    const sameLineEnd = endAt >= 0 && endAt + endMarker.length <= first.end;
    if (sameLineEnd) {
      // A whole key inside one line, e.g. a string with "\n" escapes.
      add(ctx, { start: begin, end: endAt + endMarker.length, kind: "private-key", secret: header });
      PEM_BEGIN_RE.lastIndex = endAt + endMarker.length;
      continue;
    }
    let last: { start: number; end: number };
    const nextBegin = text.indexOf("-----BEGIN ", begin + header.length);
    if (endAt >= 0 && (nextBegin < 0 || nextBegin > endAt) && endAt - begin < 64 * 1024) {
      last = lineBounds(text, endAt);
      last = { start: last.start, end: last.end };
      // Everything after the END marker on its line is kept (moved to the first line).
      ctx.spans.push({ start: begin, end: endAt + endMarker.length, kind: "private-key", secret: header, pem: { lineStart: first.start, lineEnd: last.end, header } });
    } else {
      // No END marker: the block is the BEGIN line and the base64/header lines after it.
      let pos = first.end;
      let lastEnd = first.end;
      while (pos < text.length) {
        const next = lineBounds(text, pos + 1);
        const line = text.slice(next.start, next.end);
        if (!/^\s*["'`]?(?:[A-Za-z0-9+/=]{16,}|Proc-Type:.*|DEK-Info:.*|)\s*(?:\\n)?["'`]?[,+;]?\s*$/.test(line) || !line.trim()) break;
        lastEnd = next.end;
        pos = next.end;
        if (next.end >= text.length) break;
      }
      ctx.spans.push({ start: begin, end: lastEnd, kind: "private-key", secret: header, pem: { lineStart: first.start, lineEnd: lastEnd, header } });
    }
  }
}

function detectProviders(ctx: Ctx): void {
  const { text } = ctx;
  for (const { kind, re } of PROVIDERS) {
    re.lastIndex = 0;
    for (let m; (m = re.exec(text)); ) {
      if (providerPlaceholder(m[0])) continue;
      add(ctx, { start: m.index, end: m.index + m[0].length, kind, secret: m[0] });
    }
  }
  AWS_SECRET_RE.lastIndex = 0;
  for (let m; (m = AWS_SECRET_RE.exec(text)); ) {
    const v = m[1];
    if (providerPlaceholder(v) || shannonEntropy(v) < 3.5) continue;
    const start = m.index + m[0].length - v.length;
    add(ctx, { start, end: start + v.length, kind: "aws-secret-access-key", secret: v });
  }
  BEARER_RE.lastIndex = 0;
  for (let m; (m = BEARER_RE.exec(text)); ) {
    const v = m[1];
    if (placeholder(v) || providerPlaceholder(v) || shannonEntropy(v) < 3.5 || !/\d/.test(v)) continue;
    const start = m.index + m[0].length - v.length;
    add(ctx, { start, end: start + v.length, kind: "bearer-token", secret: v });
  }
  for (let at = text.indexOf("://"); at >= 0; at = text.indexOf("://", at + 3)) {
    URL_CRED_RE.lastIndex = at;
    const m = URL_CRED_RE.exec(text);
    if (!m) continue;
    const [, user, pass] = m;
    if (pass.length < 6 || pass === user || placeholder(pass) || /^[%$<{]/.test(pass)) continue;
    const start = m.index + m[0].length - 1 - pass.length;
    add(ctx, { start, end: start + pass.length, kind: "url-credentials", secret: pass });
  }
  for (const [re, kind] of [[CONNSTR_RE, "connection-string-password"], ...(/(^|\/)[._]netrc$/.test(ctx.file) ? [[NETRC_RE, "netrc-password"] as const] : [])] as const) {
    re.lastIndex = 0;
    for (let m; (m = re.exec(text)); ) {
      const v = m[1];
      if (v.length < 6 || placeholder(v) || /^[%$<{]/.test(v)) continue;
      const start = m.index + m[0].length - v.length;
      add(ctx, { start, end: start + v.length, kind, secret: v });
    }
  }
}

const OPERATOR_RE = /^["']?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w.[\], |]*?[ \t]*=(?!=)|:=|=>|\?\?=|\|\|=|=(?![=~>])|:(?![:=]))[ \t]*/;
const QUOTED_RE = /^(?:[bBrRuU]{1,2})?(["'`])((?:\\.|(?!\1)[^\\\r\n])*)\1/;
const UNQUOTED_RE = /^([^\s#;,'"`]+)/;

function detectAssignments(ctx: Ctx, unquotedOk: boolean): void {
  const { text } = ctx;
  KEYWORD_RE.lastIndex = 0;
  for (let m; (m = KEYWORD_RE.exec(text)); ) {
    let s = m.index;
    let e = m.index + m[0].length;
    while (s > 0 && IDENT_CHAR.test(text[s - 1])) s--;
    while (e < text.length && IDENT_CHAR.test(text[e])) e++;
    KEYWORD_RE.lastIndex = e;
    const name = text.slice(s, e).replace(/[.-]+$/, "");
    if (!isSecretName(name)) continue;
    const rest = text.slice(s + name.length, Math.min(text.length, s + name.length + 400));
    const op = OPERATOR_RE.exec(rest);
    if (!op) continue;
    const after = rest.slice(op[0].length);
    let valueStart: number;
    let value: string;
    const q = QUOTED_RE.exec(after);
    if (q) {
      value = q[2];
      valueStart = s + name.length + op[0].length + (q[0].length - q[2].length - 1);
    } else if (unquotedOk || (/^[A-Z][A-Z0-9_]*$/.test(name) && op[0] === "=")) {
      // Unquoted values: in config formats, and for shell-style `NAME=value` anywhere (scripts,
      // Markdown setup steps, Makefiles).
      const u = UNQUOTED_RE.exec(after);
      if (!u) continue;
      value = u[1];
      valueStart = s + name.length + op[0].length;
    } else continue;
    // "Bearer <token>" and similar: the credential is the last word.
    const auth = /^(?:Bearer|Basic|Token)\s+(\S{8,})$/.exec(value);
    if (auth) {
      valueStart += value.length - auth[1].length;
      value = auth[1];
    }
    const kind = classifyValue(value);
    if (!kind) continue;
    add(ctx, { start: valueStart, end: valueStart + value.length, kind, secret: value });
  }
}

const ENV_LINE_RE = /^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*(.*?)[ \t]*\r?$/dgm;

function detectEnv(ctx: Ctx): void {
  const { text } = ctx;
  ENV_LINE_RE.lastIndex = 0;
  for (let m; (m = ENV_LINE_RE.exec(text)); ) {
    let raw = m[2];
    if (!raw) continue;
    let offset = m.indices![2][0];
    const quoted = /^(["'])(.*)\1/.exec(raw);
    if (quoted) {
      raw = quoted[2];
      offset += 1;
    } else {
      const hash = raw.search(/[ \t]+#/);
      if (hash >= 0) raw = raw.slice(0, hash);
      raw = raw.trimEnd();
    }
    if (!raw || placeholder(raw)) continue;
    add(ctx, { start: offset, end: offset + raw.length, kind: "env-value", secret: raw });
  }
}

function detect(text: string, file: string): Span[] {
  const base = basename(file);
  if (LOCK_FILES.has(base)) return []; // integrity hashes, never credentials
  const ctx: Ctx = { text, file, spans: [], blocked: [] };
  DATA_URI_RE.lastIndex = 0;
  for (let m; (m = DATA_URI_RE.exec(text)); ) ctx.blocked.push([m.index, m.index + m[0].length]);
  detectPem(ctx);
  detectProviders(ctx);
  const env = isEnvFile(file);
  detectAssignments(ctx, isConfigFile(file));
  if (env && !isEnvTemplate(file)) detectEnv(ctx);
  ctx.spans.sort((a, b) => a.start - b.start);
  return ctx.spans;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}
function lineOf(starts: number[], pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function toFindings(text: string, file: string, spans: Span[]): SecretFinding[] {
  if (!spans.length) return [];
  const starts = lineStarts(text);
  return spans.map((s) => ({ file, line: lineOf(starts, s.start), kind: s.kind, preview: s.pem ? s.pem.header : preview(s.secret) }));
}

/** Likely secrets in one file's text, in order of position. `file` (project-relative) decides the rules (`.env`, lock files). */
export function findSecrets(text: string, file: string): SecretFinding[] {
  return toFindings(text, file, detect(text, file));
}

/**
 * Replaces every secret value with «redacted», keeping the line count: a multi-line PEM block becomes
 * one «redacted private key» line (keeping the code around the block on that line) followed by as
 * many empty lines as the block had after its first line. Everything else is untouched.
 */
export function redactSecrets(text: string, file: string): { text: string; findings: SecretFinding[] } {
  const spans = detect(text, file);
  if (!spans.length) return { text, findings: [] };
  const findings = toFindings(text, file, spans);
  let out = "";
  let pos = 0;
  for (const s of spans) {
    if (s.pem) {
      if (s.pem.lineStart < pos) continue;
      const prefix = text.slice(s.pem.lineStart, s.start);
      const suffix = text.slice(s.end, s.pem.lineEnd);
      const block = text.slice(s.pem.lineStart, s.pem.lineEnd);
      const newlines = block.split("\n").length - 1;
      const eol = block.includes("\r\n") ? "\r\n" : "\n";
      out += text.slice(pos, s.pem.lineStart) + prefix + REDACTED_PRIVATE_KEY + suffix + eol.repeat(newlines);
      pos = s.pem.lineEnd;
    } else {
      if (s.start < pos) continue;
      const secretText = text.slice(s.start, s.end);
      const newlines = secretText.split("\n").length - 1; // single-line secrets: 0
      out += text.slice(pos, s.start) + (s.kind === "private-key" ? REDACTED_PRIVATE_KEY : REDACTED) + "\n".repeat(newlines);
      pos = s.end;
    }
  }
  out += text.slice(pos);
  return { text: out, findings };
}

// ---------------------------------------------------------------------------------------------
// Project scan

const BINARY_EXT = /\.(png|jpe?g|gif|bmp|ico|icns|webp|avif|tiff?|psd|mp[34]|m4a|wav|ogg|flac|mov|avi|mkv|webm|woff2?|ttf|otf|eot|zip|gz|tgz|bz2|xz|zst|7z|rar|jar|war|class|so|dylib|dll|exe|o|a|lib|pyc|pyo|wasm|node|sqlite3?|db|pdf|docx?|xlsx?|pptx?|bin|dat|npy|npz|pt|onnx|safetensors|pkl)$/i;

/**
 * Walks the project like the index build does (always-excluded directories, `exclude_patterns`,
 * nested .gitignore files) and scans every text file under 2 MB. `.env` files are scanned even when
 * gitignored: they are usually ignored precisely because they hold secrets, and they are what the
 * user wants to hear about (gitignored directories are still not entered, nor excluded ones).
 * Lock files, binaries (a NUL byte in the first 8 KB) and larger files count as skipped.
 */
export function scanProject(root: string, opts: { excludePatterns?: string[] } = {}): { findings: SecretFinding[]; files_scanned: number; skipped: number } {
  const excluded = compileExcludes(opts.excludePatterns ?? []);
  const rootAbs = path.resolve(root);
  const findings: SecretFinding[] = [];
  let filesScanned = 0;
  let skipped = 0;

  const scanFile = (abs: string, rel: string) => {
    let buf: Buffer;
    try {
      const st = fs.statSync(abs);
      if (st.size > MAX_SCAN_BYTES) {
        skipped++;
        return;
      }
      buf = fs.readFileSync(abs);
    } catch {
      skipped++;
      return;
    }
    if (buf.subarray(0, 8192).includes(0)) {
      skipped++;
      return;
    }
    filesScanned++;
    findings.push(...findSecrets(buf.toString("utf8"), rel));
  };

  const walk = (dirAbs: string, dirRel: string, ignores: { base: string; ig: Ignore }[]) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dirAbs, { withFileTypes: true });
    } catch {
      skipped++;
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const rel = dirRel ? `${dirRel}/${e.name}` : e.name;
      const abs = path.join(dirAbs, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        // Same rule as the index walk: follow file links inside the project, never directory links.
        try {
          const st = fs.statSync(abs);
          if (st.isDirectory()) continue;
          if (leadsOutside(path.relative(rootAbs, fs.realpathSync(abs)))) continue;
          isFile = st.isFile();
          isDir = false;
        } catch {
          continue;
        }
      }
      if (isDir) {
        if (ALWAYS_EXCLUDED_DIRS.has(e.name) || excluded(rel, true)) continue;
        if (isIgnored(ignores, rel, true)) continue;
        const own = loadGitignore(abs, rel);
        walk(abs, rel, own ? [...ignores, own] : ignores);
      } else if (isFile) {
        if (excluded(rel, false) || LOCK_FILES.has(e.name) || BINARY_EXT.test(e.name)) {
          skipped++;
          continue;
        }
        if (!isEnvFile(rel) && isIgnored(ignores, rel, false)) {
          skipped++;
          continue;
        }
        scanFile(abs, rel);
      }
    }
  };
  const rootIgnore = loadGitignore(rootAbs, "");
  walk(rootAbs, "", rootIgnore ? [rootIgnore] : []);
  return { findings, files_scanned: filesScanned, skipped };
}
