import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { splitWords } from "../../dist/daemon/index/text.js";
import { redactSecrets } from "../../dist/daemon/secrets/scan.js";
import { seededRandom } from "../../dist/shared/random.js";
import { makeProject, touchLater } from "../helpers.js";

/**
 * A planted corpus: one realistic secret of each kind, in the file type where it lives, with a
 * random value (seeded: the same corpus on every run). The scanner must redact every one (recall 1.0 over the kinds),
 * leave the look-alikes alone, and an index built with redaction must not hold any fragment of them.
 */
const next = seededRandom(20261124); // the same corpus on every run
const rand = (n: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") =>
  Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
const HEX = "0123456789abcdef";
const UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

interface Plant {
  kind: string;
  file: string;
  secret: string;
  text: (s: string) => string;
}

const pw = () => `Tr0ub4dor${rand(10)}`;
const PLANTS: Plant[] = [
  { kind: "aws access key id", file: "deploy/aws.py", secret: `AKIA${rand(16, UP)}`, text: (s) => `session = boto3.Session(aws_access_key_id="${s}")\n` },
  { kind: "aws secret key", file: "deploy/aws.env", secret: rand(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"), text: (s) => `AWS_SECRET_ACCESS_KEY=${s}\n` },
  { kind: "github token", file: "ci/release.sh", secret: `ghp_${rand(36)}`, text: (s) => `curl -H "Authorization: token ${s}" https://api.github.com/user\n` },
  { kind: "github fine-grained pat", file: "ci/pat.txt.yml", secret: `github_pat_${rand(22)}_${rand(59)}`, text: (s) => `token: ${s}\n` },
  { kind: "gitlab token", file: "ci/gitlab.yml", secret: `glpat-${rand(20)}`, text: (s) => `variables:\n  GITLAB_TOKEN: ${s}\n` },
  { kind: "slack bot token", file: "bots/slack.js", secret: `xoxb-${rand(12, "0123456789")}-${rand(13, "0123456789")}-${rand(24)}`, text: (s) => `const slack = new WebClient("${s}");\n` },
  { kind: "slack webhook", file: "bots/hook.py", secret: `https://hooks.slack.com/services/T${rand(8, UP)}/B${rand(8, UP)}/${rand(24)}`, text: (s) => `WEBHOOK = "${s}"\n` },
  { kind: "stripe live key", file: "billing/stripe.rb", secret: `sk_live_${rand(24)}`, text: (s) => `Stripe.api_key = '${s}'\n` },
  { kind: "google api key", file: "maps/config.js", secret: `AIza${rand(35, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")}`, text: (s) => `export const mapsKey = "${s}";\n` },
  { kind: "openai key", file: "ai/client.py", secret: `sk-proj-${rand(48)}`, text: (s) => `client = OpenAI(api_key="${s}")\n` },
  { kind: "anthropic key", file: "ai/claude.ts", secret: `sk-ant-api03-${rand(40)}`, text: (s) => `const anthropic = new Anthropic({ apiKey: "${s}" });\n` },
  { kind: "npm token", file: ".npmrc", secret: `npm_${rand(36)}`, text: (s) => `//registry.npmjs.org/:_authToken=${s}\n` },
  { kind: "sendgrid key", file: "mail/send.go", secret: `SG.${rand(22, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")}.${rand(43, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")}`, text: (s) => `client := sendgrid.NewSendClient("${s}")\n` },
  { kind: "jwt", file: "api/fixtures.ts", secret: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI${rand(20)}.${rand(43)}`, text: (s) => `const session = "${s}";\n` },
  { kind: "pem private key", file: "certs/server.key.txt", secret: crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString().split("\n")[1]!, text: (s) => `-----BEGIN PRIVATE KEY-----\n${s}\n-----END PRIVATE KEY-----\n` },
  { kind: "postgres url", file: "app/db.py", secret: pw(), text: (s) => `DATABASE_URL = "postgresql://app:${s}@db.internal:5432/app"\n` },
  { kind: "redis url without user", file: "app/cache.js", secret: pw(), text: (s) => `const redis = new Redis("redis://:${s}@cache.internal:6379/0");\n` },
  { kind: "libpq conninfo", file: "app/conn.c", secret: pw(), text: (s) => `PGconn *c = PQconnectdb("host=db.internal dbname=app user=app password=${s}");\n` },
  { kind: "ado.net connection string", file: "app/Data.cs", secret: pw(), text: (s) => `var cs = "Server=db;Database=App;User Id=app;Password=${s};";\n` },
  { kind: "jdbc password property", file: "app/db.properties", secret: pw(), text: (s) => `jdbc.url=jdbc:mysql://db/app\njdbc.password=${s}\n` },
  { kind: "DB_PASS assignment", file: "app/settings.py", secret: pw(), text: (s) => `DB_PASS = "${s}"\n` },
  { kind: "db_pwd", file: "app/config.php", secret: pw(), text: (s) => `$db_pwd = '${s}';\n` },
  { kind: "yaml password", file: "deploy/values.yaml", secret: pw(), text: (s) => `postgresql:\n  auth:\n    password: ${s}\n` },
  { kind: "json secret", file: "config/prod.json", secret: rand(32), text: (s) => `{"client_secret": "${s}", "client_id": "web"}\n` },
  { kind: "toml token", file: "config/bot.toml", secret: rand(32), text: (s) => `[discord]\ntoken = "${s}"\n` },
  { kind: "dotenv api key", file: ".env.production", secret: rand(32), text: (s) => `MAILGUN_API_KEY=${s}\n` },
  { kind: "dockerfile env", file: "Dockerfile", secret: pw(), text: (s) => `FROM postgres:15\nENV POSTGRES_PASSWORD=${s}\n` },
  { kind: "docker compose env", file: "docker-compose.yml", secret: pw(), text: (s) => `services:\n  db:\n    environment:\n      - MYSQL_ROOT_PASSWORD=${s}\n` },
  { kind: "markdown setup", file: "docs/setup.md", secret: pw(), text: (s) => `# Setup\n\nExport the admin password first:\n\n    PASSWORD=${s} ./run.sh\n` },
  { kind: "shell export", file: "scripts/env.sh", secret: rand(30), text: (s) => `export GITHUB_CLIENT_SECRET=${s}\n` },
  { kind: "basic auth header", file: "api/call.py", secret: Buffer.from(`svc:${rand(16)}`).toString("base64"), text: (s) => `headers = {"Authorization": "Basic ${s}"}\n` },
  { kind: "bearer header", file: "api/call.go", secret: rand(40), text: (s) => `req.Header.Set("Authorization", "Bearer ${s}")\n` },
  { kind: "java private key constant", file: "src/Keys.java", secret: rand(40), text: (s) => `private static final String SECRET_KEY = "${s}";\n` },
  { kind: "ini password", file: "conf/app.ini", secret: pw(), text: (s) => `[database]\nuser = app\npasswd = ${s}\n` },
  { kind: "netrc", file: ".netrc", secret: pw(), text: (s) => `machine api.example.org login svc password ${s}\n` },
  { kind: "hex api secret", file: "app/keys.rb", secret: rand(64, HEX), text: (s) => `API_SECRET = "${s}"\n` },
];

/** Code that looks like a secret but is not one: must stay as written. */
const LOOKALIKES: { file: string; text: string }[] = [
  { file: "app/forms.py", text: `password_field = forms.CharField(widget=forms.PasswordInput)\n` },
  { file: "app/env.ts", text: `const token = process.env.GITHUB_TOKEN;\n` },
  { file: "app/hash.py", text: `EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"\n` },
  { file: "docs/config.md", text: `Set \`PASSWORD=<your password>\` before running.\n` },
  { file: "app/auth.go", text: `func checkPassword(password string) bool { return len(password) > 8 }\n` },
];

const PLANTED = Object.fromEntries(PLANTS.map((p, i) => [p.file.replace(/(\.[^./]+)?$/, (ext) => `${i}${ext}`), p]));

describe("secret scanner on a planted corpus", () => {
  it(`redacts every one of ${PLANTS.length} kinds and leaves the look-alikes alone`, () => {
    expect(PLANTS.length).toBeGreaterThanOrEqual(30);
    const missed: string[] = [];
    for (const p of PLANTS) {
      const { text } = redactSecrets(p.text(p.secret), p.file);
      if (text.includes(p.secret)) missed.push(`${p.kind} (${p.file})`);
    }
    const recall = (PLANTS.length - missed.length) / PLANTS.length;
    expect({ recall, missed }).toEqual({ recall: 1, missed: [] });
    for (const l of LOOKALIKES) expect(redactSecrets(l.text, l.file).text, l.file).toBe(l.text);
  });

  describe("an index built with --exclude-secrets", () => {
    const files: Record<string, string> = { "README.md": "# planted\n" };
    for (const [f, p] of Object.entries(PLANTED)) files[f] = p.text(p.secret);
    const proj = makeProject(files);
    afterAll(() => proj.cleanup());

    it("holds no secret and no fragment of one in its lexical tables or code, also after every file is edited and built again without the flag", async () => {
      const engine = await ProjectEngine.open(proj.root, { sideEffects: false });
      try {
        await engine.build({ project_path: proj.root, exclude_secrets: true });
        // The policy is the index's: a later build that does not restate it re-reads the edited files redacted.
        for (const f of Object.keys(PLANTED)) {
          fs.appendFileSync(path.join(proj.root, f), "\n");
          touchLater(path.join(proj.root, f));
        }
        expect((await engine.build({ project_path: proj.root })).files_changed).toBeGreaterThan(0);
      } finally {
        await engine.close();
      }
      const db = new Database(path.join(proj.root, "codegraph-out/codemem_db/index.db"), { readonly: true });
      try {
        // Fragments: the words the index makes of a secret (identifier splitting), three in a row —
        // a phrase no other text of the corpus holds.
        const leaks: string[] = [];
        for (const p of Object.values(PLANTED)) {
          const words = splitWords(p.secret).map((w: string) => w.toLowerCase().replace(/"/g, ""));
          for (let i = 0; i + 3 <= words.length; i++) {
            const phrase = `"${words.slice(i, i + 3).join(" ")}"`;
            if (words.slice(i, i + 3).join("").length < 8) continue;
            for (const table of ["fts_nodes", "fts_files"]) {
              const n = (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(phrase) as { n: number }).n;
              if (n > 0) leaks.push(`${p.kind}: ${phrase} in ${table}`);
            }
          }
        }
        expect(leaks).toEqual([]);
      } finally {
        db.close();
      }
    });
  });
});
