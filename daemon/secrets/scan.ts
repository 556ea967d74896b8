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
    /(^|\/)\.?(npmrc|pypirc|netrc|htpasswd|pgpass|git-credentials)$/.test(file) ||
    /(^|\/)\.aws\/(credentials|config)$/.test(file) ||
    /(^|\/)(Dockerfile|Containerfile)([.-][\w.-]+)?$|\.dockerfile$/i.test(file)
  );
}
/** Prose with config snippets: unquoted `key: value` lines are taken as written, and all of it is prose. */
function isDocFile(file: string): boolean {
  return /\.(md|markdown|mdx|txt|rst|adoc)$/i.test(file);
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
    String.raw`<[^>]*>[.,;:!?)]*`, String.raw`\[[^\]]*\]`, String.raw`\(.*\)`,
    String.raw`.*\{\{.*\}\}.*`, String.raw`.*\$\{[^}]*\}.*`, String.raw`\$[A-Za-z_]\w*`, String.raw`.*\$\(.*\).*`, String.raw`.*%\([\w.]*\)[sdr].*`, String.raw`.*%[sd].*`,
    String.raw`.*\{[A-Za-z_][\w.]*\}.*`, String.raw`.*\{\d*\}.*`, // format strings
    String.raw`(?:your|my|some|the|insert|enter|put|add)[-_ ].*`, String.raw`(?:your|my|some)(?:password|passwd|pass|secret|token|api_?key|key)\w*`,
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
const PROVIDERS: { kind: string; re: RegExp; gate?: string }[] = [
  { kind: "aws-access-key-id", re: /(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])/g },
  { kind: "github-token", re: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])/g },
  { kind: "gitlab-token", re: /(?<![A-Za-z0-9_-])(?:gl(?:pat|ptt|rt|dt|oas|cbt|ft|imt|soat)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})/g },
  { kind: "slack-token", re: /(?<![A-Za-z0-9_-])(?:xox[baprs]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})/g },
  { kind: "slack-webhook", re: /https:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9_]+\/B[A-Za-z0-9_]+\/[A-Za-z0-9_]{16,}/g },
  { kind: "stripe-key", re: /(?<![A-Za-z0-9_])(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{24,})/g },
  { kind: "mailgun-key", re: /(?<![A-Za-z0-9_-])key-[0-9a-z]{32}(?![A-Za-z0-9])/g , gate: "key-" },
  { kind: "huggingface-token", re: /(?<![A-Za-z0-9_])hf_[A-Za-z]{34}(?![A-Za-z0-9])/g , gate: "hf_" },
  { kind: "discord-token", re: /(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/g },
  { kind: "telegram-token", re: /(?<![A-Za-z0-9_:])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g, gate: ":AA" },
  { kind: "shopify-token", re: /(?<![A-Za-z0-9_])shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9])/g , gate: "shp" },
  { kind: "digitalocean-token", re: /(?<![A-Za-z0-9_])do[por]_v1_[a-f0-9]{64}(?![A-Za-z0-9])/g , gate: "_v1_" },
  { kind: "vault-token", re: /(?<![A-Za-z0-9_.-])hv[sb]\.[A-Za-z0-9_-]{24,}/g , gate: "hv" },
  { kind: "pypi-token", re: /(?<![A-Za-z0-9_-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/g , gate: "pypi-" },
  { kind: "google-oauth-secret", re: /(?<![A-Za-z0-9_-])GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])/g , gate: "GOCSPX-" },
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
/** Twilio: the auth token passed right after the account SID (`Client("AC…", "token")`). */
const TWILIO_PAIR_RE = /AC[0-9a-f]{32}["']\s*,\s*["']([0-9a-f]{32})["']/g;
/** Azure shared access signatures in URLs: `…&sig=…`. */
const SAS_SIG_RE = /[?&]sig=([A-Za-z0-9%+/=]{20,})/g;
const URL_CRED_RE = /:\/\/([^\s/:@'"`<>()]{0,256}):([^\s/@'"`<>()]{1,256})@/y; // scheme://user:pass@ or scheme://:pass@, tried at each "://"
/** `password=…` inside a connection string (libpq `host=… password=…`, ADO.NET `…;Password=…;`), in any file. */
/** Azure `AccountKey=…;`, `SharedAccessKey=…`; JDBC URL parameters (`?user=app&password=…`). */
const CONNSTR_RE = /(?:^|[\s;"'`(?&])(?:password|passwd|pwd|accountkey|sharedaccesskey)[ \t]*=[ \t]*([^\s;,"'`)&]+)/gim;
/** `.netrc`: `machine host login user password secret`. */
const NETRC_RE = /\bpassword[ \t]+([^\s"'`]+)/g;
/** A netrc line quoted anywhere (a setup guide): `machine host login user password secret`. */
const NETRC_LINE_RE = /\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+([^\s"'`]+)/g;
/** `.pgpass` lines, in the file or quoted anywhere: `host:port:database:user:password`. */
const PGPASS_RE = /^[ \t]*(?:[A-Za-z*][\w.-]*|\d+\.\d+\.\d+\.\d+):(?:\d{1,5}|\*):[\w.*-]+:[\w.*@-]+:(\S+?)[ \t]*\r?$/gm;
/** Oracle easy connect `user/password@host:port/service`. */
const ORACLE_RE = /["'\s=][A-Za-z][\w$#]*\/([^\s/@"'`]{6,})@(?:\/\/)?[A-Za-z0-9][\w.-]*:\d{2,5}\//g;
/** XML elements and key/value attributes named for a credential: `<password>…</password>`, `key="ApiKey" value="…"`. */
const XML_ELEMENT_RE = /<([A-Za-z][\w.:-]*)>([^<\s]+)<\/\1>/g;
const XML_KEY_VALUE_RE = /\b(?:key|name)=["']([\w.:-]+)["'][ \t]+value=["']([^"']+)["']/g;
/** Directive-style config (`requirepass secret` in redis.conf). */
const DIRECTIVE_RE = /^[ \t]*([A-Za-z_][\w-]*)[ \t]+(\S+)[ \t]*\r?$/gm;
/** Defaults of placeholders: shell `${DB_PASSWORD:-secret}`, Spring `${DB_PASSWORD:secret}`. */
const PLACEHOLDER_DEFAULT_RE = /\$\{([A-Za-z_][\w.-]*):-?([^}\s]+)\}/g;
const SECURE_STRING_RE = /ConvertTo-SecureString[ \t]+(["'])([^"'\r\n]+)\1[ \t]+-AsPlainText/g;
const PEM_BEGIN_RE = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;
const DATA_URI_RE = /data:[\w/+.-]*(?:;[\w=.-]+)*;base64,[A-Za-z0-9+/=]{16,}/g;
const KEYWORD_RE = /pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|account[_-]?key|auth|psk/gi;
const IDENT_CHAR = /[A-Za-z0-9_.-]/;

const SECRET_TOKENS = new Set([
  "password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "accesskey", "privatekey", "clientsecret", "secretkey",
  "authorization", "psk", "requirepass", "masterauth", "accountkey", "storepass", "keypass",
]);
const SECRET_PAIRS = new Set(["api key", "access key", "private key", "client secret", "secret key", "account key", "auth key", "pass phrase"]);
/** Words that name a credential only at the end of a name: `db_pass`, `_auth`, not `pass_through`, `auth_user`. */
const SECRET_LAST_TOKENS = new Set(["pass", "auth"]);
/** Compound words ending in one (`PGPASSWORD`, `csrftoken`, `clientsecret`); not "pass" (`bypass`, `compass`). */
const SECRET_SUFFIX_RE = /(?:password|passwd|passphrase|secret|token|apikey)$/;
/** Named for what it identifies, yet sensitive: a service account's `private_key_id`. */
const SECRET_EXCEPTIONS = new Set(["private key id"]);
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
  if (SECRET_EXCEPTIONS.has(t.join(" "))) return true;
  if (NON_SECRET_SUFFIX.has(t[t.length - 1])) return false;
  if (SECRET_LAST_TOKENS.has(t[t.length - 1])) return true;
  for (let i = 0; i < t.length; i++) {
    if (SECRET_TOKENS.has(t[i]) || SECRET_SUFFIX_RE.test(t[i])) return true;
    if (i + 1 < t.length && SECRET_PAIRS.has(`${t[i]} ${t[i + 1]}`)) return true;
  }
  return false;
}

/** Does the name end in a credential word (`DB_PASSWORD`, `x-api-key`), not merely hold one (`HTTPPasswordMgr`)? */
function endsInSecretWord(name: string): boolean {
  const t = nameTokens(name.slice(name.lastIndexOf(".") + 1));
  const last = t[t.length - 1] ?? "";
  return SECRET_TOKENS.has(last) || SECRET_LAST_TOKENS.has(last) || SECRET_SUFFIX_RE.test(last) || SECRET_PAIRS.has(t.slice(-2).join(" "));
}

/** Is this literal, assigned to a credential name, a real-looking secret? Returns the kind. */
function classifyValue(value: string): string | undefined {
  if (placeholder(value)) return undefined;
  if (/\s/.test(value)) return undefined; // prose, not a credential
  if (/:\/\//.test(value) || /^(?:[./~]|[A-Za-z]:\\)/.test(value)) return undefined; // URLs (credentials in URLs are found separately) and paths
  if (/^[\d.]+$/.test(value)) return undefined; // versions, OIDs (`SERVER_AUTH = '1.3.6.1.5.5.7.3.1'`)
  if (/^[A-Za-z]+(?:[-_.][A-Za-z]+)+$/.test(value)) return undefined; // hyphenated words (`"Proxy-Authorization"`)
  if (/^[^A-Za-z0-9]{0,2}[a-z]*(?:[A-Z][a-z]+)+$/.test(value)) return undefined; // CamelCase words (`"?InterpolationInTemplate"`)
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
  for (const { kind, re, gate } of PROVIDERS) {
    if (gate && !text.includes(gate)) continue;
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
      if (v.length < 6 || placeholder(v) || /^[%$<{]/.test(v) || looksLikeCode(v)) continue;
      const start = m.index + m[0].length - v.length;
      add(ctx, { start, end: start + v.length, kind, secret: v });
    }
  }
}

/** Adds group `g` of every match of `re` that `keep` accepts (a password: ≥ 6 characters, no placeholder). */
function capture(ctx: Ctx, re: RegExp, g: number, kind: string, keep: (v: string, m: RegExpExecArray) => boolean = passwordLike): void {
  re.lastIndex = 0;
  for (let m; (m = re.exec(ctx.text)); ) {
    const v = m[g];
    if (!v || !keep(v, m)) continue;
    const start = m.index + m[0].lastIndexOf(v);
    add(ctx, { start, end: start + v.length, kind, secret: v });
  }
}
function passwordLike(v: string): boolean {
  return v.length >= 6 && !placeholder(v) && !/^[%$<{]/.test(v) && !providerPlaceholder(v);
}

/** Shapes that say "credential" by their syntax, not by a name: pgpass and netrc lines, XML, Oracle, SAS, defaults. */
function detectShapes(ctx: Ctx): void {
  if (ctx.text.includes("AC")) capture(ctx, TWILIO_PAIR_RE, 1, "twilio-auth-token", (v) => !providerPlaceholder(v));
  if (ctx.text.includes("sig=")) capture(ctx, SAS_SIG_RE, 1, "azure-sas-signature");
  if (ctx.text.includes("machine")) capture(ctx, NETRC_LINE_RE, 1, "netrc-password");
  // Gated on a literal each shape needs: the scan runs on every indexed file.
  if (/:(?:\d{1,5}|\*):/.test(ctx.text)) capture(ctx, PGPASS_RE, 1, "pgpass-password", (v) => passwordLike(v) && !looksLikeCode(v));
  if (/@(?:\/\/)?[\w.-]+:\d{2,5}\//.test(ctx.text)) capture(ctx, ORACLE_RE, 1, "connection-string-password");
  if (ctx.text.includes("</")) capture(ctx, XML_ELEMENT_RE, 2, "xml-credential", (v, m) => isSecretName(m[1]) && classifyValue(v) !== undefined);
  if (ctx.text.includes("value=")) capture(ctx, XML_KEY_VALUE_RE, 2, "xml-credential", (v, m) => isSecretName(m[1]) && classifyValue(v) !== undefined);
  if (ctx.text.includes("${")) capture(ctx, PLACEHOLDER_DEFAULT_RE, 2, "placeholder-default", (v, m) => isSecretName(m[1]) && passwordLike(v) && !looksLikeCode(v));
  if (ctx.text.includes("ConvertTo-SecureString")) capture(ctx, SECURE_STRING_RE, 2, "hardcoded-credential");
  if (/\.conf$/i.test(ctx.file)) capture(ctx, DIRECTIVE_RE, 2, "config-directive", (v, m) => isSecretName(m[1]) && classifyValue(v) !== undefined && !looksLikeCode(v));
}

// `name = v`, `name: v`, `name := v`, typed (`name: &str = v`, `name: String = v`), `name => v`, Make's `name ?= v`.
const OPERATOR_RE = /^["']?\]?[ \t]*(?::[ \t]*[&*]?(?:'[a-z]+[ \t]+)?[A-Za-z_][\w.[\]<>, |]*?[ \t]*=(?![=>])|:=|=>|\?\?=|\|\|=|\?=|=(?![=~>])|:(?![:=]))[ \t]*/;
/** `process.env.DB_PASSWORD || "pw"`, `os.environ.get("TOKEN") or "tok"`: a fallback literal is the credential. */
const FALLBACK_RE = /^["'\])]*[ \t]*(?:\|\||\?\?|\bor\b)[ \t]*/;
/** A quoted name then a literal: `setdefault("DB_PASSWORD", "pw")`, `headers.set("x-api-key", "k")`. */
const NAME_ARG_RE = /^["'][ \t]*,[ \t]*/;
const QUOTED_RE = /^(?:[bBrRuU]{1,2})?(["'`])((?:\\.|(?!\1)[^\\\r\n])*)\1/;
const UNQUOTED_RE = /^([^\s#;,'"`]+)/;

/** An unquoted value that reads as code, not a literal: a call, an index, a name without digits (`self.password`, `getpass()`). */
function looksLikeCode(value: string): boolean {
  const v = value.replace(/^[!~+*&-]+/, ""); // `!!passThrough`, `-offset`, `&config`
  return /[()[\]{}]/.test(v) || (/^[A-Za-z_$@][\w$]*(?:(?:\.|->|::)[A-Za-z_$][\w$]*)*$/.test(v) && !/\d/.test(v));
}

/** The value after a credential name at `s`..`s + name.length`, if one is assigned: its offset and text. */
function assignedValue(text: string, s: number, name: string, unquotedOk: boolean): { start: number; value: string } | undefined {
  const before = text.slice(Math.max(0, s - 16), s);
  const rest = text.slice(s + name.length, Math.min(text.length, s + name.length + 400));
  const quotedName = /["']$/.test(before);
  let op = OPERATOR_RE.exec(rest)?.[0];
  let quotedOnly = false;
  if (op === undefined && /#[ \t]*define[ \t]+$/.test(before)) op = /^[ \t]+/.exec(rest)?.[0];
  if (op === undefined) {
    op = FALLBACK_RE.exec(rest)?.[0] ?? (quotedName && endsInSecretWord(name) ? NAME_ARG_RE.exec(rest)?.[0] : undefined);
    quotedOnly = true;
  }
  if (op === undefined) return undefined;
  const after = rest.slice(op.length);
  const at = s + name.length + op.length;
  const q = QUOTED_RE.exec(after);
  // After a fallback or a quoted name the literal may be another name (`"AuthHandler", "BasicAuthHandler"`).
  if (q) return quotedOnly && looksLikeCode(q[2]) ? undefined : { start: at + (q[0].length - q[2].length - 1), value: q[2] };
  if (quotedOnly) return undefined;
  // Inside a string: `"Authorization: token …"`, `"x-api-key: …"` (headers in curl lines and requests).
  const inString = quotedName && /^[ \t]*:/.test(op) ? /^([^"'\r\n]+)["']/.exec(after) : null;
  if (inString) return { start: at, value: inString[1].trimEnd() };
  // Unquoted values: in config formats and docs, and for shell-style `NAME=value` anywhere (scripts,
  // setup steps, Makefiles).
  if (!unquotedOk && !(/^[A-Z][A-Z0-9_]*$/.test(name) && /^[ \t]*[?:]?=[ \t]*$/.test(op))) return undefined;
  const u = UNQUOTED_RE.exec(after);
  if (!u || looksLikeCode(u[1])) return undefined;
  return { start: at, value: u[1] };
}

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
    const found = assignedValue(text, s, name, unquotedOk);
    if (!found) continue;
    let { start: valueStart, value } = found;
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

// ---------------------------------------------------------------------------------------------
// Command lines: a password given as an option

const Q = String.raw`(["']?)([^\s"'\x60]+)\1`; // an option's value, quoted or not: group 1 the quote, group 2 the value
const UNTIL_EOL = String.raw`[^\n|;&]*?[ \t]`;
/** Each rule runs only on text holding its literal `gate` (the scan runs on every indexed file). */
const COMMAND_LINE_RES: { gate: string[]; re: RegExp }[] = [
  // Long options naming a credential, in any command: `--password=…`, `--token …`, `-storepass …`.
  { gate: ["-pass", "-token", "-api", "-auth", "-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-registration", "-http-p", "-ftp-p", "-proxy-p", "-client-secret"], re: new RegExp(String.raw`[\s"'(]--?(?:password|passwd|pass|token|auth-token|api-key|apikey|registration-token|http-password|ftp-password|proxy-password|storepass|keypass|srcstorepass|deststorepass|client-secret)(?:=|[ \t]+)${Q}`, "g") },
  { gate: ["mysql", "mariadb"], re: new RegExp(String.raw`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b${UNTIL_EOL}-p(?=[^\s-])${Q}`, "g") }, // -p<password>, attached
  { gate: ["login", "sshpass"], re: new RegExp(String.raw`\b(?:(?:docker|podman|nerdctl|buildah|skopeo|oc|az|helm(?:[ \t]+registry)?)[ \t]+login|sshpass)\b${UNTIL_EOL}-p[ \t]+${Q}`, "g") },
  { gate: ["redis-cli"], re: new RegExp(String.raw`\bredis-cli\b${UNTIL_EOL}-a[ \t]+${Q}`, "g") },
  { gate: ["sqlcmd", "bcp", "osql", "isql"], re: new RegExp(String.raw`\b(?:sqlcmd|bcp|osql|isql)\b${UNTIL_EOL}-P[ \t]*${Q}`, "g") },
  { gate: ["curl", "wget"], re: new RegExp(String.raw`\b(?:curl|wget)\b${UNTIL_EOL}(?:-u|--user|--proxy-user|-U)(?:=|[ \t]+)(["']?)[^\s:"']*:([^\s"'\x60]+)\1`, "g") }, // user:password
  { gate: ["htpasswd"], re: new RegExp(String.raw`\bhtpasswd[ \t]+-\w*b\w*[ \t]+\S+[ \t]+\S+[ \t]+${Q}`, "g") },
  { gate: ["pass:"], re: new RegExp(String.raw`-(?:pass|passin|passout|password)[ \t]+(["']?)pass:([^\s"'\x60]+)\1`, "g") }, // openssl
];
function detectCommandLines(ctx: Ctx): void {
  for (const { gate, re } of COMMAND_LINE_RES) {
    if (gate.some((g) => ctx.text.includes(g))) capture(ctx, re, 2, "command-line-password", (v) => passwordLike(v) && !looksLikeCode(v));
  }
}

// ---------------------------------------------------------------------------------------------
// Calls that take a credential by position

/** Calls whose argument `arg` (0-based) is a password or token when it is a literal. */
const CREDENTIAL_CALLS: { gate: RegExp; re: RegExp; arg: number }[] = [
  { gate: /auth/, re: /\bauth[ \t]*=[ \t]*\(/g, arg: 1 }, // requests: auth=("user", "pw")
  {
    gate: /Auth|Credential|login|HeaderValue/,
    re: /\b(?:HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|BasicAuth|SetBasicAuth|setBasicAuth|basicAuth|withBasicAuth|NetworkCredential|PasswordAuthentication|UsernamePasswordCredentials|UsernamePasswordAuthenticationToken|PasswordCredential|AuthenticationHeaderValue|login)[ \t]*\(/g,
    arg: 1,
  },
  { gate: /PlainAuth|getConnection|PDO|mysql|MySQL/, re: /\b(?:PlainAuth|getConnection|PDO|mysqli_connect|mysqli|mysql_connect|(?:pymysql|MySQLdb|mysql\.connector)\.connect)[ \t]*\(/g, arg: 2 },
];

/** The arguments of a call whose "(" ends at `open`: text and offset of each, up to the closing ")". */
function callArgs(text: string, open: number): { start: number; text: string }[] {
  const args: { start: number; text: string }[] = [];
  let depth = 0;
  let argStart = open;
  const limit = Math.min(text.length, open + 600);
  for (let i = open; i < limit; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === "`") {
      const close = text.indexOf(c, i + 1);
      if (close < 0 || text.slice(i, close).includes("\n")) return args;
      i = close;
    } else if (c === "(" || c === "[" || c === "{") depth++;
    else if (c === ")" || c === "]" || c === "}") {
      if (depth === 0) {
        args.push({ start: argStart, text: text.slice(argStart, i) });
        return args;
      }
      depth--;
    } else if (c === "," && depth === 0) {
      args.push({ start: argStart, text: text.slice(argStart, i) });
      argStart = i + 1;
    }
  }
  return args;
}

function detectCredentialCalls(ctx: Ctx): void {
  for (const { gate, re, arg } of CREDENTIAL_CALLS) {
    if (!gate.test(ctx.text)) continue;
    re.lastIndex = 0;
    for (let m; (m = re.exec(ctx.text)); ) {
      const a = callArgs(ctx.text, m.index + m[0].length)[arg];
      if (!a) continue;
      // A literal, perhaps converted (`"pw".toCharArray()`).
      const lit = /^\s*(["'])([^"'\r\n]*)\1(?:\.\w+\(\))?\s*$/.exec(a.text);
      if (!lit || !classifyValue(lit[2])) continue;
      const start = a.start + a.text.indexOf(lit[1]) + 1;
      add(ctx, { start, end: start + lit[2].length, kind: "hardcoded-credential", secret: lit[2] });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Prose: comments, docstrings, documentation

/** "password is X", "pwd: X", "token for the staging bot: X", "with password `X`". */
const PROSE_RE = /\b(?:password|passwd|passphrase|pwd|token|secret|api[ _-]?key|access[ _-]?key|secret[ _-]?key|private[ _-]?key)\b(?:[ \t]+(?:for|of|to)[ \t]+[^:=\n]{1,40}?[ \t]*[:=][ \t]*|[ \t]*[:=][ \t]*|[ \t]+(?:is|was)[ \t]+|[ \t]+)["'`]?([^\s"'`,;()<>]+)/gi;
/** Comments and docstrings of code: line comments, block comments, triple-quoted strings. */
const COMMENT_RE = /(?<![^\s])(?:#|\/\/|--)(?=[ \t!*/#-]|$)[^\n]*|\/\*[\s\S]{0,4000}?\*\/|"""[\s\S]{0,4000}?"""|'''[\s\S]{0,4000}?'''|<!--[\s\S]{0,4000}?-->/gm;

/** A word in prose that is a credential: a digit among letters of both cases or symbols; not a word with a version (`SHA256-hashed`, `utf8`). */
function proseSecret(v: string): boolean {
  if (v.length < 8 || placeholder(v) || /:\/\/|^[./~]|\/\w/.test(v)) return false;
  if (!/\d/.test(v) || !/[A-Za-z]/.test(v)) return false;
  if (/^(?:[A-Za-z]+\d*)(?:[-_.][A-Za-z]+\d*)*$/.test(v)) return false;
  const upper = /[A-Z]/.test(v);
  const lower = /[a-z]/.test(v);
  return (upper && lower) || /[^A-Za-z0-9_.-]/.test(v) || /^[0-9a-f]{32,}$/i.test(v) || (v.length >= 16 && shannonEntropy(v) >= 3.5);
}

function detectProse(ctx: Ctx): void {
  const regions: [number, number][] = [];
  if (isDocFile(ctx.file)) regions.push([0, ctx.text.length]);
  else {
    COMMENT_RE.lastIndex = 0;
    for (let m; (m = COMMENT_RE.exec(ctx.text)); ) regions.push([m.index, m.index + m[0].length]);
  }
  for (const [from, to] of regions) {
    const part = ctx.text.slice(from, to);
    PROSE_RE.lastIndex = 0;
    for (let m; (m = PROSE_RE.exec(part)); ) {
      const v = m[1].replace(/[.:!?]+$/, "");
      if (!proseSecret(v)) continue;
      const start = from + m.index + m[0].length - m[1].length;
      add(ctx, { start, end: start + v.length, kind: "password-in-prose", secret: v });
    }
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
  detectShapes(ctx);
  detectCommandLines(ctx);
  detectCredentialCalls(ctx);
  const env = isEnvFile(file);
  detectAssignments(ctx, isConfigFile(file) || isDocFile(file));
  detectProse(ctx);
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
