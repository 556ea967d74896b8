import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { splitWords } from "../../dist/daemon/index/text.js";
import { redactSecrets } from "../../dist/daemon/secrets/scan.js";
import { makeProject, touchLater } from "../helpers.js";
// @ts-expect-error plain JS module shared with scripts/bench-secrets.mjs
import { FORMS } from "./forms.mjs";

/**
 * The planted corpus (forms.mjs): realistic forms a credential takes, each in the kind of file
 * where it lives, with a seeded random value. The scanner must redact every one, leave ordinary
 * code alone, and an index built with redaction must not hold any of them nor serve them.
 */
interface Form {
  form: string;
  file: string;
  secret: string;
  text: (s: string) => string;
}
const PLANTS = FORMS as Form[];
/** One directory per form keeps every file's own name (`.netrc`, `Dockerfile`, `.env.production`). */
const PLANTED: Record<string, Form> = Object.fromEntries(PLANTS.map((p, i) => [`f${i}/${p.file}`, p]));

/**
 * Ordinary code that names credentials without holding one: must stay as written. What is not a
 * secret: a value read from a call, the environment, a parameter or an attribute; an empty string;
 * a type; a placeholder (`<password>`, `${PASSWORD}`, `changeme`, `xxx`, `your-token-here`); a word
 * or CamelCase name (`"Authorization"`, `"?InterpolationInTemplate"`); prose that describes a
 * password without giving one.
 */
const ORDINARY: { file: string; text: string }[] = [
  { file: "app/forms.py", text: `password_field = forms.CharField(widget=forms.PasswordInput)\n` },
  { file: "app/env.ts", text: `const token = process.env.GITHUB_TOKEN;\n` },
  { file: "app/hash.py", text: `EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"\n` },
  { file: "docs/config.md", text: `Set \`PASSWORD=<your password>\` before running.\n` },
  { file: "app/auth.go", text: `func checkPassword(password string) bool { return len(password) > 8 }\n` },
  { file: "app/login.py", text: `password = getpass.getpass("Password: ")\npwd = os.getcwd()\npasswd = self.passwd\n` },
  { file: "app/urls.py", text: `user, passwd = _splitpasswd(userinfo)\npassword = bytes(memoryview(password))\n` },
  { file: "app/conn.py", text: `conn = psycopg2.connect(host=host, user=user, password=password)\nconn2 = connect(password=self.password, timeout=5)\n` },
  { file: "app/types.py", text: `class Settings:\n    password: str = ""\n    api_key: Optional[str] = None\n    token: str\n` },
  { file: "app/types.ts", text: `interface Login {\n  password: string;\n  apiKey?: string | null;\n}\nconst secret: Secret = loadSecret();\n` },
  { file: "app/placeholders.py", text: `password = "changeme"\nAPI_KEY = "\${API_KEY}"\ntoken = "<token>"\nsecret = "xxxxxxxx"\nkey = "your-api-key-here"\n` },
  { file: "app/fallback.js", text: `const password = process.env.DB_PASSWORD || "";\nconst token = opts.token ?? defaultToken;\n` },
  { file: "app/headers.py", text: `AUTH_HEADER = "Authorization"\nheaders["Authorization"] = f"Bearer {token}"\nauth_type = "Basic"\n` },
  { file: "app/all.py", text: `__all__ = ['HTTPPasswordMgr', 'HTTPPasswordMgrWithDefaultRealm',\n    'HTTPPasswordMgrWithPriorAuth', 'AbstractBasicAuthHandler']\n` },
  { file: "app/tokenizer.js", text: `lastSignificantToken = "?InterpolationInTemplate";\nthis._passThroughOptions = !!passThrough;\n` },
  { file: "app/headers.js", text: `res.writeHead(200, { "x-auth-request-user": who.user, "x-auth-request-groups": who.groups });\n` },
  { file: "app/map.py", text: `TYPES = {"NMTOKEN": minidom.TypeInfo(None, "nmtoken")}\nd = {'password': config.get(server, 'password')}\n` },
  { file: "app/comments.py", text: `# The password is hashed with pbkdf2_sha256 before it is stored.\n# token: base64url(sha256(verifier))\n"""The secret key is SHA256-hashed; see RFC7636."""\n` },
  { file: "app/cli.py", text: `parser.add_argument("--password", help="database password")\nparser.add_argument("--token", default=None)\n` },
  { file: "scripts/run.sh", text: `curl -u "$USER:$PASS" https://x.example.com\nmysql -u root -p"$MYSQL_PWD" app\ndocker login -u ci -p "$REGISTRY_TOKEN" registry.example.com\necho "$PW" | docker login --password-stdin\n` },
  { file: "scripts/defaults.sh", text: `DB_PASSWORD="\${DB_PASSWORD:-}"\nTOKEN="\${TOKEN:?set TOKEN}"\n` },
  { file: "docs/usage.md", text: `# Usage\n\nPass \`--password PASSWORD\` or set \`token: <token>\` in the config.\nThe password must be 12 characters or more.\n` },
  { file: "docs/api.md", text: `# API\n\n\`\`\`http\nAuthorization: Bearer <token>\n\`\`\`\n\n    password = get_password()\n` },
  { file: "config/app.yaml", text: `database:\n  password: \${DB_PASSWORD}\n  password_file: /run/secrets/db\ntoken: "{{ vault_token }}"\n` },
  { file: ".github/workflows/ci.yml", text: `env:\n  NPM_TOKEN: \${{ secrets.NPM_TOKEN }}\n  password: \${{ secrets.REGISTRY_PASSWORD }}\n` },
  { file: "app/Keys.java", text: `String password = System.getenv("DB_PASSWORD");\nchar[] pw = console.readPassword();\n` },
  { file: "app/client.go", text: `req.SetBasicAuth(user, password)\nauth := smtp.PlainAuth("", cfg.User, cfg.Password, cfg.Host)\n` },
  { file: "app/auth.py", text: `r = requests.get(url, auth=(user, password))\nserver.login(username, password)\n` },
  { file: "app/url.py", text: `url = f"postgresql://{user}:{password}@{host}/db"\nDSN = "postgres://app:\${PGPASSWORD}@db/app"\n` },
  { file: "app/pg.c", text: `snprintf(buf, n, "host=%s password=%s", host, pw);\n` },
  { file: "app/time.py", text: `STAMP = "12:30:45:00:ok"\nRANGE = "a:1:b:c:d"\n` },
  { file: "app/xml.ts", text: `const tpl = "<password>{{password}}</password>";\nconst el = "<token></token>";\n` },
  { file: "app/versions.py", text: `SERVER_AUTH = "1.3.6.1.5.5.7.3.1"\nPROXY_AUTH = "Proxy-Authorization"\n` },
];

describe("secret scanner on the planted corpus", () => {
  it(`redacts every one of ${PLANTS.length} forms`, () => {
    expect(PLANTS.length).toBeGreaterThanOrEqual(100);
    const missed: string[] = [];
    for (const p of PLANTS) {
      const { text } = redactSecrets(p.text(p.secret), p.file);
      if (text.includes(p.secret)) missed.push(p.form);
    }
    expect({ recall: (PLANTS.length - missed.length) / PLANTS.length, missed }).toEqual({ recall: 1, missed: [] });
  });

  it("redacts nothing in ordinary code that names credentials without holding one", () => {
    const changed = ORDINARY.filter((l) => redactSecrets(l.text, l.file).text !== l.text).map((l) => `${l.file}: ${JSON.stringify(redactSecrets(l.text, l.file).findings)}`);
    expect(changed).toEqual([]);
  });

  describe("an index built with --exclude-secrets", () => {
    const files: Record<string, string> = { "README.md": "# planted\n" };
    for (const [f, p] of Object.entries(PLANTED)) files[f] = p.text(p.secret);
    const proj = makeProject(files);
    afterAll(() => proj.cleanup());
    const out = path.join(proj.root, "codegraph-out");

    it("serves no planted secret through query, search, skeleton, wakeup or query_docs, and stores none, also after every file is edited and built again without the flag", async () => {
      const engine = await ProjectEngine.open(proj.root, { sideEffects: false });
      const served: unknown[] = [];
      try {
        await engine.build({ project_path: proj.root, exclude_secrets: true });
        // The policy is the index's: a later build that does not restate it re-reads the edited files redacted.
        for (const f of Object.keys(PLANTED)) {
          fs.appendFileSync(path.join(proj.root, f), "\n");
          touchLater(path.join(proj.root, f));
        }
        expect((await engine.build({ project_path: proj.root })).files_changed).toBeGreaterThan(0);
        const p = proj.root;
        served.push(await engine.dispatch("wakeup", { project_path: p }));
        for (const [f, form] of Object.entries(PLANTED)) {
          // The question is the file's own words around the secret: what an assistant would ask to reach it.
          const context = form.text("").replace(/\s+/g, " ").slice(0, 300);
          if (/\.(md|markdown)$/.test(f)) {
            served.push(await engine.dispatch("query_docs", { project_path: p, question: context }));
            continue;
          }
          served.push(await engine.dispatch("search", { project_path: p, query: form.secret }));
          served.push(await engine.dispatch("search", { project_path: p, query: context }));
          served.push(await engine.dispatch("query", { project_path: p, question: context, budget: 2000 }));
          served.push(await engine.dispatch("skeleton", { project_path: p, file_path: f }).catch(() => undefined)); // files no parser reads have none
        }
      } finally {
        await engine.close();
      }
      const all = JSON.stringify(served);
      expect(all).toContain("«redacted");
      expect(PLANTS.filter((p) => all.includes(p.secret)).map((p) => p.form)).toEqual([]);

      // Stored: every text cell of every table of index.db and docs.db, and every other file the build wrote.
      const stored: string[] = [];
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const abs = path.join(d, e.name);
          if (e.isDirectory()) walk(abs);
          else if (/\.db$/.test(e.name)) stored.push(...dbText(abs));
          else if (!/\.db-(?:wal|shm)$/.test(e.name)) stored.push(fs.readFileSync(abs, "latin1"));
        }
      };
      walk(out);
      // The walk read both stores: the code index holds a source file's path, docs.db a document's.
      const docFile = Object.keys(PLANTED).find((f) => f.endsWith(".md"))!;
      for (const f of ["f0/deploy/aws.py", docFile]) expect(stored.some((t) => t.includes(f)), f).toBe(true);
      const storedAll = stored.join("\n");
      expect(PLANTS.filter((p) => storedAll.includes(p.secret)).map((p) => p.form)).toEqual([]);

      // Fragments: the words the lexical index makes of a secret (identifier splitting), three in a row,
      // a phrase no other text of the corpus holds.
      const leaks: string[] = [];
      const index = new Database(path.join(out, "codemem_db/index.db"), { readonly: true });
      try {
        for (const p of PLANTS) {
          const words = splitWords(p.secret).map((w: string) => w.toLowerCase().replace(/"/g, ""));
          for (let i = 0; i + 3 <= words.length; i++) {
            if (words.slice(i, i + 3).join("").length < 8) continue;
            const phrase = `"${words.slice(i, i + 3).join(" ")}"`;
            for (const table of ["fts_nodes", "fts_files"]) {
              const n = (index.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).get(phrase) as { n: number }).n;
              if (n > 0) leaks.push(`${p.form}: ${phrase} in ${table}`);
            }
          }
        }
      } finally {
        index.close();
      }
      expect(leaks).toEqual([]);
    }, 600_000);
  });
});

/** Every text cell of every table of a SQLite file (FTS shadow tables included). */
function dbText(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    const cells: string[] = [];
    for (const { name } of tables) {
      let rows: Record<string, unknown>[];
      try {
        rows = db.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`).all() as Record<string, unknown>[];
      } catch {
        continue; // virtual tables of modules this connection has not loaded (vec0)
      }
      for (const r of rows) for (const v of Object.values(r)) if (typeof v === "string") cells.push(v);
      else if (Buffer.isBuffer(v)) cells.push(v.toString("latin1"));
    }
    return cells;
  } finally {
    db.close();
  }
}
