import crypto from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { findSecrets, redactSecrets, scanProject } from "../../dist/daemon/secrets/scan.js";
import { makeProject } from "../helpers.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** Random string over an alphabet, from crypto (so every run plants a fresh secret). */
function rand(n: number, alphabet: string): string {
  const bytes = crypto.randomBytes(n);
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}
const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

const awsKey = `AKIA${rand(16, UPPER_DIGITS)}`;
const awsSecret = rand(40, `${ALNUM}/+`);
const ghToken = `ghp_${rand(36, ALNUM)}`;
const envToken = rand(32, ALNUM);
const clientSecret = rand(28, `${ALNUM}_-!#`);
const pem = crypto.generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const pemLines = pem.trimEnd().split("\n");

const FILES: Record<string, string> = {
  ".gitignore": ".env\nsecret-local/\nignored.py\n",
  "config/aws.ts": [
    'import { S3Client } from "@aws-sdk/client-s3";', // 1
    "", // 2
    "export const client = new S3Client({", // 3
    "  credentials: {", // 4
    `    accessKeyId: "${awsKey}",`, // 5
    `    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY!,`, // 6
    "  },", // 7
    "});", // 8
    `const aws_secret_access_key = "${awsSecret}";`, // 9
    "",
  ].join("\n"),
  "keys/server.pem": pem,
  "app/deploy.py": [
    '"""Deployment helper."""', // 1
    "import os", // 2
    "", // 3
    "def push(repo):", // 4
    `    token = "${ghToken}"`, // 5
    '    password = "changeme"', // 6
    '    api_key = os.environ["API_KEY"]', // 7
    '    author = "Guido van Rossum"', // 8
    '    token_url = "https://github.com/login/oauth/access_token"', // 9
    "    return repo", // 10
    "",
  ].join("\n"),
  "src/oauth.ts": [
    "// OAuth settings", // 1
    "export const settings = {", // 2
    '  client_id: "codemem-app",', // 3
    `  client_secret: "${clientSecret}",`, // 4
    '  password: "<your password>",', // 5
    "  apiKey: `${API_KEY}`,", // 6
    "};", // 7
    "",
  ].join("\n"),
  "src/embedded-key.ts": [
    "export function load() {", // 1
    "  const key = `" + pemLines[0], // 2: the block starts mid-line
    ...pemLines.slice(1, -1),
    pemLines[pemLines.length - 1] + "`;",
    "  return key;",
    "}",
    "",
  ].join("\n"),
  ".env": ["# local settings", "", `SERVICE_TOKEN=${envToken}`, "API_KEY=${API_KEY}", "EMPTY=", "LOG_LEVEL=debug", ""].join("\n"),
  ".env.example": ["# copy to .env", "SERVICE_TOKEN=your-token-here", "KEY=your-key-here", "API_KEY=${API_KEY}", "DB_PASSWORD=changeme", ""].join("\n"),
  "package-lock.json": JSON.stringify({ packages: { "node_modules/x": { integrity: `sha512-${crypto.randomBytes(64).toString("base64")}`, token: `${rand(40, ALNUM)}` } } }, null, 2),
  "go.sum": `golang.org/x/net v0.1.0 h1:${crypto.randomBytes(32).toString("base64")}\n`,
  "ignored.py": `token = "ghp_${rand(36, ALNUM)}"\n`,
  "secret-local/.env": `OTHER=${rand(20, ALNUM)}\n`,
  "node_modules/pkg/.env": `OTHER=${rand(20, ALNUM)}\n`,
  "web/logo.ts": `export const logo = "data:image/png;base64,${crypto.randomBytes(120).toString("base64")}";\n`,
  "web/plain.ts": 'export function add(a: number, b: number): number {\n  return a + b;\n}\n',
};

function project() {
  const p = makeProject(FILES, "codemem-secrets-");
  cleanups.push(p.cleanup);
  return p;
}

describe("scanProject", () => {
  it("finds every planted secret with its file and line, and nothing else", () => {
    const p = project();
    const r = scanProject(p.root, {});
    const got = r.findings.map((f) => `${f.file}:${f.line}:${f.kind}`).sort();
    expect(got).toEqual(
      [
        "config/aws.ts:5:aws-access-key-id",
        "config/aws.ts:9:aws-secret-access-key",
        "keys/server.pem:1:private-key",
        "app/deploy.py:5:github-token",
        "src/oauth.ts:4:high-entropy-assignment",
        "src/embedded-key.ts:2:private-key",
        // A credential-named value is reported by its stronger rule; every other value as env-value.
        ".env:3:high-entropy-assignment",
        ".env:6:env-value",
      ].sort(),
    );
    // Previews never carry the secret.
    const all = JSON.stringify(r.findings);
    for (const s of [awsKey, awsSecret, ghToken, envToken, clientSecret]) expect(all).not.toContain(s);
    expect(all).not.toContain(pemLines[1]);
    // Lock files and the gitignored source count as skipped; excluded dirs are not entered.
    expect(r.skipped).toBeGreaterThanOrEqual(3);
    expect(r.files_scanned).toBeGreaterThanOrEqual(9);
  });

  it("honours exclude_patterns", () => {
    const p = project();
    const r = scanProject(p.root, { excludePatterns: ["keys", "src/*.ts"] });
    const files = new Set(r.findings.map((f) => f.file));
    expect(files.has("keys/server.pem")).toBe(false);
    expect(files.has("src/oauth.ts")).toBe(false);
    expect(files.has("app/deploy.py")).toBe(true);
  });
});

describe("findSecrets", () => {
  it("recognises provider formats", () => {
    const cases: [string, string][] = [
      [`key = "ASIA${rand(16, UPPER_DIGITS)}"`, "aws-access-key-id"],
      [`t = "github_pat_${rand(22, ALNUM)}_${rand(59, ALNUM)}"`, "github-token"],
      [`t = "glpat-${rand(20, ALNUM)}"`, "gitlab-token"],
      [`t = "xoxb-${rand(11, "0123456789")}-${rand(24, ALNUM)}"`, "slack-token"],
      [`t = "sk_live_${rand(24, ALNUM)}"`, "stripe-key"],
      [`t = "AIza${rand(35, ALNUM)}"`, "google-api-key"],
      [`t = "sk-${rand(48, ALNUM)}"`, "openai-key"],
      [`t = "sk-proj-${rand(60, ALNUM)}"`, "openai-key"],
      [`t = "sk-ant-api03-${rand(60, ALNUM)}"`, "anthropic-key"],
      [`//registry.npmjs.org/:_authToken=npm_${rand(36, ALNUM)}`, "npm-token"],
      [`jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${rand(43, ALNUM)}"`, "jwt"],
      [`db = "postgres://app:${rand(16, ALNUM)}@db:5432/app"`, "url-credentials"],
      [`password = "hunter2-${rand(6, "0123456789")}"`, "hardcoded-credential"],
    ];
    for (const [line, kind] of cases) expect(findSecrets(line, "x.py").map((f) => f.kind), line).toEqual([kind]);
  });

  it("leaves placeholders, env lookups and descriptive names alone", () => {
    const text = [
      'password = "changeme"',
      'secret = "xxx"',
      'token = "<token>"',
      "api_key = os.getenv('API_KEY')",
      'api_key = "${API_KEY}"',
      'api_key = "your-api-key-here"',
      'token_type = "Bearer"',
      'auth_header = "Authorization"',
      'password_field = "password_confirmation_1"',
      'TOKEN = "NAME"',
      'aws = "AKIAIOSFODNN7EXAMPLE"',
      "tokens = tokenize(source)",
      'password = "%(password)s"',
      'secret = f"{prefix}-{name}"',
    ].join("\n");
    expect(findSecrets(text, "x.py")).toEqual([]);
    expect(findSecrets("KEY=your-key-here\nSERVICE_TOKEN=<token>\nPASSWORD=changeme\n", ".env.example")).toEqual([]);
    expect(findSecrets("API_KEY=${API_KEY}\nHOME_DIR=$HOME\n# TOKEN=abc\n", ".env")).toEqual([]);
  });

  it("ignores hashes in lock files and base64 data URIs", () => {
    const p = FILES;
    expect(findSecrets(p["package-lock.json"], "package-lock.json")).toEqual([]);
    expect(findSecrets(p["go.sum"], "go.sum")).toEqual([]);
    expect(findSecrets(`const secret_img = "data:image/png;base64,${crypto.randomBytes(60).toString("base64")}";`, "a.ts")).toEqual([]);
  });
});

describe("redactSecrets", () => {
  it("removes every secret value, keeps the line count and the rest of the code", () => {
    for (const [file, text] of Object.entries(FILES)) {
      const r = redactSecrets(text, file);
      expect(r.text.split("\n").length, file).toBe(text.split("\n").length);
      expect(r.findings).toEqual(findSecrets(text, file));
      // Redacting again finds nothing: the markers are not secrets.
      if (r.findings.length) expect(findSecrets(r.text, file), file).toEqual([]);
    }
    const aws = redactSecrets(FILES["config/aws.ts"], "config/aws.ts").text;
    expect(aws).not.toContain(awsKey);
    expect(aws).not.toContain(awsSecret);
    expect(aws.split("\n")[4]).toBe('    accessKeyId: "«redacted»",');
    expect(aws.split("\n")[5]).toBe(FILES["config/aws.ts"].split("\n")[5]);

    const py = redactSecrets(FILES["app/deploy.py"], "app/deploy.py").text;
    expect(py).not.toContain(ghToken);
    expect(py.split("\n")).toEqual(FILES["app/deploy.py"].split("\n").map((l, i) => (i === 4 ? '    token = "«redacted»"' : l)));

    const ts = redactSecrets(FILES["src/oauth.ts"], "src/oauth.ts").text;
    expect(ts).not.toContain(clientSecret);
    expect(ts).toContain('client_id: "codemem-app"');

    const env = redactSecrets(FILES[".env"], ".env").text;
    expect(env).not.toContain(envToken);
    expect(env.split("\n")[2]).toBe("SERVICE_TOKEN=«redacted»");

    const pemFile = redactSecrets(pem, "keys/server.pem").text;
    expect(pemFile.split("\n")[0]).toBe("«redacted private key»");
    expect(pemFile.split("\n").slice(1).every((l) => l === "")).toBe(true);

    const embedded = redactSecrets(FILES["src/embedded-key.ts"], "src/embedded-key.ts").text.split("\n");
    expect(embedded[0]).toBe("export function load() {");
    expect(embedded[1]).toBe("  const key = `«redacted private key»`;");
    expect(embedded.slice(2, pemLines.length + 1).every((l) => l === "")).toBe(true);
    expect(embedded[pemLines.length + 1]).toBe("  return key;");
    for (const l of pemLines.slice(1, -1)) expect(embedded.join("\n")).not.toContain(l);

    const plain = FILES["web/plain.ts"];
    expect(redactSecrets(plain, "web/plain.ts")).toEqual({ text: plain, findings: [] });
  });

  it("redacts a one-line PEM string and CRLF files in place", () => {
    const oneLine = `const k = "${pemLines.join("\\n")}";\nconst x = 1;\n`;
    const r = redactSecrets(oneLine, "k.ts");
    expect(r.text).toBe('const k = "«redacted private key»";\nconst x = 1;\n');
    const crlf = `a = 1\r\npassword = "Tr0ub4dor&3xq9"\r\n${pem.trimEnd().split("\n").join("\r\n")}\r\nb = 2\r\n`;
    const c = redactSecrets(crlf, "c.py");
    expect(c.findings.map((f) => [f.line, f.kind])).toEqual([[2, "hardcoded-credential"], [3, "private-key"]]);
    expect(c.text.split("\r\n").length).toBe(crlf.split("\r\n").length);
    expect(c.text).toContain('password = "«redacted»"\r\n«redacted private key»\r\n\r\n');
    expect(c.text.endsWith("b = 2\r\n")).toBe(true);
  });
});
