// The planted secret corpus: realistic forms a credential takes in a project, each in the kind of
// file where it lives, with a seeded random value (the same corpus on every run). Shared by
// test/secrets/recall.test.ts (the scanner must redact them; an index must not hold them) and
// scripts/bench-secrets.mjs (recall per form). Plain JS so the benchmark can load it without a build.
import { seededRandom } from "../../dist/shared/random.js";

const next = seededRandom(20261124);
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";
const UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LOWER_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789";
const B64 = `${ALNUM}+/`;
const URLSAFE = `${ALNUM}_-`;
const rand = (n, alphabet = ALNUM) => Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
/** A human-chosen password: mixed case, a digit, a symbol that needs no quoting in shells, URLs or INI. */
const pw = () => `${rand(1, "ABCDEFGHJKLMNPQRSTUVWXYZ")}${rand(3, "abcdefghijkmnopqrstuvwxyz")}${rand(2, "0123456789")}${rand(1, "!*_.~^")}${rand(5 + Math.floor(next() * 6))}`;
const b64 = (n) => rand(n, B64);
const uuid = () => `${rand(8, HEX)}-${rand(4, HEX)}-4${rand(3, HEX)}-a${rand(3, HEX)}-${rand(12, HEX)}`;
/** A PEM body line (what a key's base64 looks like), the secret checked for. */
const pemLine = () => `MII${b64(61)}`;
const pemBlock = (label, first, indent = "") =>
  [`-----BEGIN ${label}-----`, first, b64(64), b64(64), `${b64(40)}==`, `-----END ${label}-----`].map((l) => indent + l).join("\n");

/**
 * @typedef {{ form: string; file: string; secret: string; text: (s: string) => string }} Form
 * `form` names the shape (what a recall report lists), `file` the path it is planted at (made
 * unique per form by the test), `text(secret)` the whole file.
 */
/** @type {Form[]} */
export const FORMS = [
  // ---- Provider key formats, in source
  { form: "aws access key id (boto3 call)", file: "deploy/aws.py", secret: `AKIA${rand(16, UP)}`, text: (s) => `session = boto3.Session(aws_access_key_id="${s}")\n` },
  { form: "aws secret key (.env)", file: "deploy/aws.env", secret: rand(40, `${ALNUM}/+`), text: (s) => `AWS_SECRET_ACCESS_KEY=${s}\n` },
  { form: "aws credentials file", file: ".aws/credentials", secret: rand(40, `${ALNUM}/+`), text: (s) => `[default]\naws_access_key_id = AKIA${rand(16, UP)}\naws_secret_access_key = ${s}\nregion = eu-west-1\n` },
  { form: "aws session token (credentials file)", file: ".aws/credentials", secret: `FwoGZXIvYXdzE${b64(180)}`, text: (s) => `[tmp]\naws_session_token = ${s}\n` },
  { form: "aws secret key (JS SDK config)", file: "infra/s3.ts", secret: rand(40, `${ALNUM}/+`), text: (s) => `const s3 = new S3Client({ credentials: { accessKeyId: id, secretAccessKey: "${s}" } });\n` },
  { form: "github classic token (curl header)", file: "ci/release.sh", secret: `ghp_${rand(36)}`, text: (s) => `curl -H "Authorization: token ${s}" https://api.github.com/user\n` },
  { form: "github fine-grained pat (YAML)", file: "ci/pat.yml", secret: `github_pat_${rand(22)}_${rand(59)}`, text: (s) => `token: ${s}\n` },
  { form: "github oauth token (gh hosts.yml)", file: ".config/gh/hosts.yml", secret: `gho_${rand(36)}`, text: (s) => `github.com:\n    user: octocat\n    oauth_token: ${s}\n    git_protocol: https\n` },
  { form: "github app token (Go call)", file: "bot/gh.go", secret: `ghs_${rand(36)}`, text: (s) => `client := github.NewClient(nil).WithAuthToken("${s}")\n` },
  { form: "gitlab pat (CI YAML)", file: "ci/gitlab.yml", secret: `glpat-${rand(20, URLSAFE)}`, text: (s) => `variables:\n  GITLAB_TOKEN: ${s}\n` },
  { form: "gitlab trigger token (curl form field)", file: "ci/trigger.sh", secret: `glptt-${rand(40, HEX)}`, text: (s) => `curl -X POST -F token=${s} -F ref=main https://gitlab.example.com/api/v4/projects/12/trigger/pipeline\n` },
  { form: "gitlab runner token (config.toml)", file: "runner/config.toml", secret: `glrt-${rand(20, URLSAFE)}`, text: (s) => `[[runners]]\n  name = "docker"\n  url = "https://gitlab.example.com"\n  token = "${s}"\n` },
  { form: "slack bot token (JS call)", file: "bots/slack.js", secret: `xoxb-${rand(12, "0123456789")}-${rand(13, "0123456789")}-${rand(24)}`, text: (s) => `const slack = new WebClient("${s}");\n` },
  { form: "slack user token (Python call)", file: "bots/slack_user.py", secret: `xoxp-${rand(12, "0123456789")}-${rand(12, "0123456789")}-${rand(13, "0123456789")}-${rand(32, HEX)}`, text: (s) => `client = WebClient(token="${s}")\n` },
  { form: "slack app-level token", file: "bots/socket.py", secret: `xapp-1-A${rand(10, UP)}-${rand(13, "0123456789")}-${rand(64, HEX)}`, text: (s) => `handler = SocketModeHandler(app, "${s}")\n` },
  { form: "slack webhook URL", file: "bots/hook.py", secret: `https://hooks.slack.com/services/T${rand(8, UP)}/B${rand(8, UP)}/${rand(24)}`, text: (s) => `WEBHOOK = "${s}"\n` },
  { form: "stripe live secret key (Ruby)", file: "billing/stripe.rb", secret: `sk_live_${rand(24)}`, text: (s) => `Stripe.api_key = '${s}'\n` },
  { form: "stripe restricted key (.env)", file: "billing/.env", secret: `rk_live_${rand(99)}`, text: (s) => `STRIPE_KEY=${s}\n` },
  { form: "stripe test key (call argument)", file: "billing/charge.js", secret: `sk_test_${rand(99)}`, text: (s) => `const stripe = require("stripe")("${s}");\n` },
  { form: "stripe webhook secret", file: "billing/webhook.ts", secret: `whsec_${rand(32)}`, text: (s) => `const event = stripe.webhooks.constructEvent(body, sig, "${s}");\n` },
  { form: "twilio auth token (positional)", file: "sms/send.py", secret: rand(32, HEX), text: (s) => `client = Client("AC${rand(32, HEX)}", "${s}")\n` },
  { form: "twilio auth token (.env)", file: "sms/.env", secret: rand(32, HEX), text: (s) => `TWILIO_ACCOUNT_SID=AC${rand(32, HEX)}\nTWILIO_AUTH_TOKEN=${s}\n` },
  { form: "sendgrid key (Go call)", file: "mail/send.go", secret: `SG.${rand(22, URLSAFE)}.${rand(43, URLSAFE)}`, text: (s) => `client := sendgrid.NewSendClient("${s}")\n` },
  { form: "mailgun key (PHP call)", file: "mail/mailgun.php", secret: `key-${rand(32, LOWER_DIGITS)}`, text: (s) => `<?php\n$mg = Mailgun::create('${s}');\n` },
  { form: "google api key (JS constant)", file: "maps/config.js", secret: `AIza${rand(35, URLSAFE)}`, text: (s) => `export const mapsKey = "${s}";\n` },
  { form: "google oauth client secret", file: "auth/google.py", secret: `GOCSPX-${rand(28, URLSAFE)}`, text: (s) => `flow = Flow.from_client_config({"web": {"client_id": "1234-abc.apps.googleusercontent.com", "client_secret": "${s}"}}, scopes)\n` },
  { form: "gcp service account private_key_id (JSON)", file: "gcp/sa.json", secret: rand(40, HEX), text: (s) => `{\n  "type": "service_account",\n  "project_id": "shop-prod",\n  "private_key_id": "${s}",\n  "client_email": "ci@shop-prod.iam.gserviceaccount.com"\n}\n` },
  { form: "gcp service account private_key (JSON, one line)", file: "gcp/key.json", secret: pemLine(), text: (s) => `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${s}\\n${b64(64)}\\n-----END PRIVATE KEY-----\\n"}\n` },
  { form: "azure storage AccountKey (C#)", file: "azure/Blob.cs", secret: `${b64(86)}==`, text: (s) => `var cs = "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey=${s};EndpointSuffix=core.windows.net";\n` },
  { form: "azure storage AccountKey (appsettings.json)", file: "azure/appsettings.json", secret: `${b64(86)}==`, text: (s) => `{\n  "ConnectionStrings": {\n    "Storage": "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey=${s}"\n  }\n}\n` },
  { form: "azure service bus SharedAccessKey", file: "azure/bus.py", secret: `${b64(43)}=`, text: (s) => `CONN = "Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${s}"\n` },
  { form: "azure SAS token sig", file: "azure/sas.ts", secret: `${rand(40, ALNUM)}%3D`, text: (s) => `const url = "https://shopdata.blob.core.windows.net/exports?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-01-01T00:00:00Z&sig=${s}";\n` },
  { form: "azure client secret (terraform)", file: "infra/main.tf", secret: `${rand(3)}8Q~${rand(34, URLSAFE)}`, text: (s) => `provider "azurerm" {\n  features {}\n  client_secret = "${s}"\n}\n` },
  { form: "openai project key (Python call)", file: "ai/client.py", secret: `sk-proj-${rand(48, URLSAFE)}`, text: (s) => `client = OpenAI(api_key="${s}")\n` },
  { form: "openai key (.env)", file: "ai/.env", secret: `sk-${rand(48)}`, text: (s) => `OPENAI_API_KEY=${s}\n` },
  { form: "anthropic key (TS object)", file: "ai/claude.ts", secret: `sk-ant-api03-${rand(40, URLSAFE)}`, text: (s) => `const anthropic = new Anthropic({ apiKey: "${s}" });\n` },
  { form: "anthropic key (shell export)", file: "ai/env.sh", secret: `sk-ant-api03-${rand(90, URLSAFE)}AA`, text: (s) => `export ANTHROPIC_API_KEY=${s}\n` },
  { form: "huggingface token (CLI)", file: "ml/setup.sh", secret: `hf_${rand(34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")}`, text: (s) => `huggingface-cli login --token ${s}\n` },
  { form: "discord bot token (call)", file: "bots/discord_bot.py", secret: `MT${rand(24)}.${rand(6, URLSAFE)}.${rand(38, URLSAFE)}`, text: (s) => `client.run("${s}")\n` },
  { form: "telegram bot token (call)", file: "bots/tg.py", secret: `${rand(10, "0123456789")}:AA${rand(33, URLSAFE)}`, text: (s) => `bot = telebot.TeleBot("${s}")\n` },
  { form: "shopify access token", file: "shop/shopify.rb", secret: `shpat_${rand(32, HEX)}`, text: (s) => `session = ShopifyAPI::Auth::Session.new(shop: "shop.myshopify.com", access_token: "${s}")\n` },
  { form: "digitalocean token (call)", file: "infra/do.go", secret: `dop_v1_${rand(64, HEX)}`, text: (s) => `client := godo.NewFromToken("${s}")\n` },
  { form: "vault token (call)", file: "infra/vault.go", secret: `hvs.${rand(90, URLSAFE)}`, text: (s) => `client.SetToken("${s}")\n` },
  { form: "npm token (.npmrc)", file: ".npmrc", secret: `npm_${rand(36)}`, text: (s) => `//registry.npmjs.org/:_authToken=${s}\n` },
  { form: "npmrc _authToken uuid (.npmrc)", file: "web/.npmrc", secret: uuid(), text: (s) => `registry=https://npm.example.com/\n//npm.example.com/:_authToken=${s}\n` },
  { form: "npmrc _auth base64 (.npmrc)", file: "legacy/.npmrc", secret: b64(32), text: (s) => `_auth = ${s}\nemail = ci@example.com\nalways-auth = true\n` },
  { form: "pypi token (.pypirc)", file: ".pypirc", secret: `pypi-AgEIcHlwaS5vcmc${rand(70, URLSAFE)}`, text: (s) => `[pypi]\nusername = __token__\npassword = ${s}\n` },
  { form: "docker config auth (config.json)", file: ".docker/config.json", secret: Buffer.from(`ci:${rand(20)}`).toString("base64"), text: (s) => `{\n  "auths": {\n    "registry.example.com": {\n      "auth": "${s}"\n    }\n  }\n}\n` },
  { form: "jwt (TS constant)", file: "api/fixtures.ts", secret: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI${rand(20)}.${rand(43, URLSAFE)}`, text: (s) => `const session = "${s}";\n` },
  { form: "jwt signing secret (Python)", file: "api/tokens.py", secret: rand(48, URLSAFE), text: (s) => `JWT_SECRET = "${s}"\n` },

  // ---- Private keys
  { form: "pem private key file", file: "certs/server.key", secret: pemLine(), text: (s) => `${pemBlock("PRIVATE KEY", s)}\n` },
  { form: "rsa private key (Python triple-quoted)", file: "certs/keys.py", secret: pemLine(), text: (s) => `SIGNING_KEY = """${pemBlock("RSA PRIVATE KEY", s)}"""\n` },
  { form: "openssh private key (Markdown block)", file: "docs/ssh.md", secret: `b3BlbnNzaC1rZXktdjEAAAAA${b64(46)}`, text: (s) => `# Deploy key\n\n\`\`\`\n${pemBlock("OPENSSH PRIVATE KEY", s)}\n\`\`\`\n` },
  { form: "pgp private key block", file: "release/signing.asc", secret: `lQdGBF${b64(58)}`, text: (s) => `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n${s}\n${b64(64)}\n=${b64(4)}\n-----END PGP PRIVATE KEY BLOCK-----\n` },
  { form: "ec private key (YAML block scalar)", file: "k8s/tls.yaml", secret: pemLine(), text: (s) => `tls:\n  key: |\n${pemBlock("EC PRIVATE KEY", s, "    ")}\n` },
  { form: "private key (JS template literal)", file: "src/sign.js", secret: pemLine(), text: (s) => `const key = \`${pemBlock("PRIVATE KEY", s)}\`;\n` },

  // ---- Connection strings and URLs
  { form: "postgres URL (Python)", file: "app/db.py", secret: pw(), text: (s) => `DATABASE_URL = "postgresql://app:${s}@db.internal:5432/app"\n` },
  { form: "redis URL without user", file: "app/cache.js", secret: pw(), text: (s) => `const redis = new Redis("redis://:${s}@cache.internal:6379/0");\n` },
  { form: "mysql URL (.env)", file: "app/.env", secret: pw(), text: (s) => `DATABASE_URL=mysql://root:${s}@127.0.0.1:3306/shop\n` },
  { form: "mongodb+srv URL (JS)", file: "app/mongo.js", secret: pw(), text: (s) => `await mongoose.connect("mongodb+srv://shop:${s}@cluster0.ab1cd.mongodb.net/shop?retryWrites=true");\n` },
  { form: "amqp URL (celery)", file: "app/celeryconfig.py", secret: pw(), text: (s) => `broker_url = "amqp://worker:${s}@rabbit:5672//"\n` },
  { form: "sqlalchemy mssql URL", file: "app/engine.py", secret: pw(), text: (s) => `engine = create_engine("mssql+pyodbc://sa:${s}@db/app?driver=ODBC+Driver+18+for+SQL+Server")\n` },
  { form: "elasticsearch URL (YAML)", file: "deploy/es.yaml", secret: pw(), text: (s) => `output:\n  hosts: ["https://elastic:${s}@es.internal:9200"]\n` },
  { form: "git credentials file", file: ".git-credentials", secret: pw(), text: (s) => `https://alice:${s}@git.example.org\n` },
  { form: "libpq conninfo (C)", file: "app/conn.c", secret: pw(), text: (s) => `PGconn *c = PQconnectdb("host=db.internal dbname=app user=app password=${s}");\n` },
  { form: "ado.net connection string (C#)", file: "app/Data.cs", secret: pw(), text: (s) => `var cs = "Server=db;Database=App;User Id=app;Password=${s};";\n` },
  { form: "odbc connection string PWD", file: "app/odbc.py", secret: pw(), text: (s) => `conn = pyodbc.connect("DRIVER={ODBC Driver 18 for SQL Server};SERVER=db;DATABASE=app;UID=sa;PWD=${s}")\n` },
  { form: "jdbc URL password parameter (Kotlin)", file: "app/Db.kt", secret: pw(), text: (s) => `val url = "jdbc:postgresql://db:5432/app?user=app&password=${s}&ssl=true"\n` },
  { form: "jdbc sqlserver URL (Java)", file: "app/Sql.java", secret: pw(), text: (s) => `String url = "jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=${s};encrypt=true";\n` },
  { form: "oracle easy connect user/password@host", file: "app/oracle.py", secret: pw(), text: (s) => `conn = cx_Oracle.connect("app/${s}@db.internal:1521/ORCLPDB1")\n` },
  { form: "jdbc password property", file: "app/db.properties", secret: pw(), text: (s) => `jdbc.url=jdbc:mysql://db/app\njdbc.password=${s}\n` },
  { form: "spring datasource password (properties)", file: "src/main/resources/application.properties", secret: pw(), text: (s) => `spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password=${s}\n` },
  { form: "spring placeholder default (YAML)", file: "src/main/resources/application.yml", secret: pw(), text: (s) => `spring:\n  datasource:\n    password: \${DB_PASSWORD:${s}}\n` },
  { form: "django DATABASES PASSWORD", file: "shop/settings.py", secret: pw(), text: (s) => `DATABASES = {\n    "default": {\n        "ENGINE": "django.db.backends.postgresql",\n        "PASSWORD": "${s}",\n    }\n}\n` },
  { form: "rails database.yml password", file: "config/database.yml", secret: pw(), text: (s) => `production:\n  adapter: postgresql\n  username: shop\n  password: ${s}\n` },
  { form: "redis requirepass (redis.conf)", file: "deploy/redis.conf", secret: pw(), text: (s) => `bind 0.0.0.0\nrequirepass ${s}\n` },
  { form: "pgpass file line", file: ".pgpass", secret: pw(), text: (s) => `db.internal:5432:app:app:${s}\n` },
  { form: "netrc file", file: ".netrc", secret: pw(), text: (s) => `machine api.example.org login svc password ${s}\n` },
  { form: "netrc file (multi-line)", file: "ci/_netrc", secret: pw(), text: (s) => `machine git.example.org\n  login deploy\n  password ${s}\n` },
  { form: "maven settings.xml password", file: ".m2/settings.xml", secret: pw(), text: (s) => `<settings>\n  <servers>\n    <server>\n      <id>releases</id>\n      <username>deploy</username>\n      <password>${s}</password>\n    </server>\n  </servers>\n</settings>\n` },
  { form: "web.config appSettings key/value", file: "web/Web.config", secret: rand(32), text: (s) => `<appSettings>\n  <add key="PaymentApiKey" value="${s}" />\n</appSettings>\n` },
  { form: "xml attribute password", file: "conf/context.xml", secret: pw(), text: (s) => `<Resource name="jdbc/app" username="app" password="${s}" url="jdbc:mysql://db/app"/>\n` },

  // ---- Credential-named assignments across languages
  { form: "DB_PASS assignment (Python)", file: "app/settings.py", secret: pw(), text: (s) => `DB_PASS = "${s}"\n` },
  { form: "db_pwd (PHP)", file: "app/config.php", secret: pw(), text: (s) => `<?php\n$db_pwd = '${s}';\n` },
  { form: "java constant SECRET_KEY", file: "src/Keys.java", secret: rand(40), text: (s) => `private static final String SECRET_KEY = "${s}";\n` },
  { form: "kotlin val apiKey", file: "android/Api.kt", secret: rand(32), text: (s) => `private val apiKey = "${s}"\n` },
  { form: "swift let apiToken", file: "ios/Api.swift", secret: rand(40), text: (s) => `let apiToken = "${s}"\n` },
  { form: "go const password", file: "cmd/seed.go", secret: pw(), text: (s) => `const adminPassword = "${s}"\n` },
  { form: "rust const API_KEY: &str", file: "src/client.rs", secret: rand(32), text: (s) => `const API_KEY: &str = "${s}";\n` },
  { form: "c #define API_TOKEN", file: "firmware/secrets.h", secret: rand(32), text: (s) => `#define API_TOKEN "${s}"\n` },
  { form: "c char *password", file: "firmware/wifi.c", secret: pw(), text: (s) => `static const char *wifi_password = "${s}";\n` },
  { form: "elixir config keyword", file: "config/prod.exs", secret: rand(64), text: (s) => `config :shop, ShopWeb.Endpoint,\n  secret_key_base: "${s}"\n` },
  { form: "ruby secret_key_base", file: "config/initializers/secret.rb", secret: rand(128, HEX), text: (s) => `Rails.application.config.secret_key_base = "${s}"\n` },
  { form: "flask app.config SECRET_KEY", file: "web/app.py", secret: rand(32, HEX), text: (s) => `app.config["SECRET_KEY"] = "${s}"\n` },
  { form: "lua local password", file: "scripts/login.lua", secret: pw(), text: (s) => `local password = "${s}"\n` },
  { form: "perl my $password", file: "scripts/backup.pl", secret: pw(), text: (s) => `my $password = '${s}';\n` },
  { form: "powershell ConvertTo-SecureString", file: "scripts/deploy.ps1", secret: pw(), text: (s) => `$secure = ConvertTo-SecureString "${s}" -AsPlainText -Force\n` },
  { form: "hex api secret (Ruby)", file: "app/keys.rb", secret: rand(64, HEX), text: (s) => `API_SECRET = "${s}"\n` },
  { form: "json client_secret", file: "config/prod.json", secret: rand(32), text: (s) => `{"client_secret": "${s}", "client_id": "web"}\n` },
  { form: "oauth refresh_token (JSON)", file: "config/token.json", secret: `1//0g${rand(60, URLSAFE)}`, text: (s) => `{"access_token": null, "refresh_token": "${s}", "token_type": "Bearer"}\n` },
  { form: "toml token", file: "config/bot.toml", secret: rand(32), text: (s) => `[discord]\ntoken = "${s}"\n` },
  { form: "ini passwd", file: "conf/app.ini", secret: pw(), text: (s) => `[database]\nuser = app\npasswd = ${s}\n` },
  { form: "wpa_supplicant psk", file: "rpi/wpa_supplicant.conf", secret: pw(), text: (s) => `network={\n    ssid="office"\n    psk="${s}"\n}\n` },
  { form: "ansible inventory ansible_ssh_pass", file: "ops/inventory.ini", secret: pw(), text: (s) => `[web]\nweb1 ansible_host=10.0.0.5 ansible_user=deploy ansible_ssh_pass=${s}\n` },
  { form: "ansible vars become_pass (YAML)", file: "ops/group_vars/all.yml", secret: pw(), text: (s) => `ansible_become_pass: ${s}\n` },
  { form: "kubernetes Secret stringData", file: "k8s/secret.yaml", secret: pw(), text: (s) => `apiVersion: v1\nkind: Secret\nstringData:\n  password: "${s}"\n` },
  { form: "helm values password", file: "deploy/values.yaml", secret: pw(), text: (s) => `postgresql:\n  auth:\n    password: ${s}\n` },
  { form: "terraform tfvars password", file: "infra/prod.tfvars", secret: pw(), text: (s) => `db_password = "${s}"\n` },

  // ---- Environment files, Docker, shell
  { form: "dotenv api key", file: ".env.production", secret: rand(32), text: (s) => `MAILGUN_API_KEY=${s}\n` },
  { form: "dotenv quoted secret with comment", file: "svc/.env", secret: rand(40, URLSAFE), text: (s) => `SESSION_SECRET="${s}" # rotated 2024-05\n` },
  { form: "dockerfile ENV", file: "Dockerfile", secret: pw(), text: (s) => `FROM postgres:15\nENV POSTGRES_PASSWORD=${s}\n` },
  { form: "dockerfile ARG default", file: "web/Dockerfile", secret: rand(36), text: (s) => `FROM node:20\nARG NPM_TOKEN=${s}\nRUN npm ci\n` },
  { form: "dockerfile RUN writes .npmrc", file: "api/Dockerfile", secret: rand(36), text: (s) => `FROM node:20\nRUN echo "//npm.example.com/:_authToken=${s}" > .npmrc && npm ci\n` },
  { form: "docker compose env list", file: "docker-compose.yml", secret: pw(), text: (s) => `services:\n  db:\n    environment:\n      - MYSQL_ROOT_PASSWORD=${s}\n` },
  { form: "docker compose env map", file: "compose.yaml", secret: pw(), text: (s) => `services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: ${s}\n` },
  { form: "shell export", file: "scripts/env.sh", secret: rand(30), text: (s) => `export GITHUB_CLIENT_SECRET=${s}\n` },
  { form: "shell PGPASSWORD=… psql", file: "scripts/restore.sh", secret: pw(), text: (s) => `PGPASSWORD=${s} psql -h db.internal -U app app < dump.sql\n` },
  { form: "shell default ${VAR:-pw}", file: "scripts/start.sh", secret: pw(), text: (s) => `DB_PASSWORD="\${DB_PASSWORD:-${s}}"\n` },
  { form: "curl -u user:pw", file: "scripts/health.sh", secret: pw(), text: (s) => `curl -fsS -u admin:${s} https://ci.example.com/api/json\n` },
  { form: "curl --user 'user:pw'", file: "scripts/upload.sh", secret: pw(), text: (s) => `curl --user 'deploy:${s}' -T build.zip https://files.example.com/\n` },
  { form: "wget --password", file: "scripts/fetch.sh", secret: pw(), text: (s) => `wget --user=ci --password=${s} https://files.example.com/data.tgz\n` },
  { form: "mysql -p<pw>", file: "scripts/mysql.sh", secret: pw(), text: (s) => `mysql -h db -u root -p${s} shop < schema.sql\n` },
  { form: "mysqldump --password=", file: "scripts/dump.sh", secret: pw(), text: (s) => `mysqldump --user=backup --password=${s} shop > shop.sql\n` },
  { form: "docker login -p", file: "ci/push.sh", secret: pw(), text: (s) => `docker login -u ci -p ${s} registry.example.com\n` },
  { form: "sshpass -p", file: "scripts/copy.sh", secret: pw(), text: (s) => `sshpass -p '${s}' scp build.tgz deploy@web1:/srv/\n` },
  { form: "redis-cli -a", file: "scripts/flush.sh", secret: pw(), text: (s) => `redis-cli -h cache -a ${s} FLUSHALL\n` },
  { form: "sqlcmd -P", file: "scripts/mssql.sh", secret: pw(), text: (s) => `sqlcmd -S db -U sa -P '${s}' -Q "SELECT 1"\n` },
  { form: "htpasswd -b", file: "scripts/users.sh", secret: pw(), text: (s) => `htpasswd -bc /etc/nginx/.htpasswd admin ${s}\n` },
  { form: "openssl -passout pass:", file: "scripts/cert.sh", secret: pw(), text: (s) => `openssl pkcs12 -export -in cert.pem -inkey key.pem -out cert.p12 -passout pass:${s}\n` },
  { form: "keytool -storepass", file: "scripts/keystore.sh", secret: pw(), text: (s) => `keytool -genkeypair -alias app -keystore app.jks -storepass ${s} -dname "CN=app"\n` },
  { form: "helm repo add --password", file: "ci/helm.sh", secret: pw(), text: (s) => `helm repo add internal https://charts.example.com --username ci --password ${s}\n` },
  { form: "Makefile variable", file: "Makefile", secret: pw(), text: (s) => `DB_PASSWORD ?= ${s}\n\nmigrate:\n\tflyway -password=$(DB_PASSWORD) migrate\n` },

  // ---- Calls, defaults, headers
  { form: "os.environ.setdefault(NAME, value)", file: "app/local.py", secret: pw(), text: (s) => `os.environ.setdefault("DB_PASSWORD", "${s}")\n` },
  { form: "os.getenv(NAME, default)", file: "app/conf.py", secret: rand(32), text: (s) => `API_KEY = os.getenv("API_KEY", "${s}")\n` },
  { form: "env.X || 'pw' (JS)", file: "app/db.js", secret: pw(), text: (s) => `const password = process.env.DB_PASSWORD || "${s}";\n` },
  { form: "env.X ?? 'token' (TS)", file: "app/token.ts", secret: rand(40), text: (s) => `export const token = process.env.API_TOKEN ?? "${s}";\n` },
  { form: "Go os.Setenv", file: "cmd/env.go", secret: rand(32), text: (s) => `os.Setenv("API_TOKEN", "${s}")\n` },
  { form: "Java System.setProperty keyStorePassword", file: "src/Tls.java", secret: pw(), text: (s) => `System.setProperty("javax.net.ssl.keyStorePassword", "${s}");\n` },
  { form: "headers.set('x-api-key', …)", file: "web/fetch.ts", secret: rand(40), text: (s) => `headers.set("x-api-key", "${s}");\n` },
  { form: "Authorization: Bearer (dict)", file: "api/call.py", secret: rand(40, URLSAFE), text: (s) => `headers = {"Authorization": "Bearer ${s}"}\n` },
  { form: "Authorization: Basic (dict)", file: "api/basic.py", secret: Buffer.from(`svc:${rand(16)}`).toString("base64"), text: (s) => `headers = {"Authorization": "Basic ${s}"}\n` },
  { form: "bearer header (Go)", file: "api/call.go", secret: rand(40), text: (s) => `req.Header.Set("Authorization", "Bearer ${s}")\n` },
  { form: "X-API-Key header (dict)", file: "api/partner.py", secret: rand(32, HEX), text: (s) => `resp = requests.get(url, headers={"X-API-Key": "${s}"})\n` },
  { form: "PRIVATE-TOKEN header", file: "api/gitlab.py", secret: rand(20, URLSAFE), text: (s) => `session.headers.update({"PRIVATE-TOKEN": "${s}"})\n` },
  { form: "C# AuthenticationHeaderValue", file: "api/Client.cs", secret: rand(40), text: (s) => `client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", "${s}");\n` },
  { form: "requests auth=(user, pw)", file: "api/basic_auth.py", secret: pw(), text: (s) => `r = requests.get(url, auth=("admin", "${s}"))\n` },
  { form: "HTTPBasicAuth(user, pw)", file: "api/jira.py", secret: pw(), text: (s) => `auth = HTTPBasicAuth("bot@example.com", "${s}")\n` },
  { form: "Go SetBasicAuth", file: "api/basic.go", secret: pw(), text: (s) => `req.SetBasicAuth("admin", "${s}")\n` },
  { form: "Go smtp.PlainAuth", file: "mail/smtp.go", secret: pw(), text: (s) => `auth := smtp.PlainAuth("", "noreply@example.com", "${s}", "smtp.example.com")\n` },
  { form: "smtplib login(user, pw)", file: "mail/notify.py", secret: pw(), text: (s) => `server.login("noreply@example.com", "${s}")\n` },
  { form: "Java DriverManager.getConnection", file: "src/Dao.java", secret: pw(), text: (s) => `Connection c = DriverManager.getConnection(url, "app", "${s}");\n` },
  { form: "PHP new PDO(dsn, user, pw)", file: "web/db.php", secret: pw(), text: (s) => `<?php\n$pdo = new PDO("mysql:host=db;dbname=shop", "shop", "${s}");\n` },
  { form: "PHP mysqli_connect", file: "web/legacy.php", secret: pw(), text: (s) => `<?php\n$link = mysqli_connect("db", "shop", "${s}", "shop");\n` },
  { form: "C# NetworkCredential", file: "mail/Mailer.cs", secret: pw(), text: (s) => `smtp.Credentials = new NetworkCredential("noreply@example.com", "${s}");\n` },
  { form: "Java PasswordAuthentication", file: "mail/Mailer.java", secret: pw(), text: (s) => `return new PasswordAuthentication("noreply@example.com", "${s}".toCharArray());\n` },

  // ---- Comments and docstrings
  { form: "password in Python docstring", file: "app/staging.py", secret: pw(), text: (s) => `def connect():\n    """Connect to staging.\n\n    The admin password is ${s} (rotated quarterly).\n    """\n    return open_db()\n` },
  { form: "password in JS line comment", file: "app/seed.js", secret: pw(), text: (s) => `// staging login: admin / password: ${s}\nexport function seed() {}\n` },
  { form: "token in shell comment", file: "scripts/notes.sh", secret: rand(40, HEX), text: (s) => `# token for the staging bot: ${s}\n./deploy.sh\n` },
  { form: "password in JSDoc", file: "app/client.ts", secret: pw(), text: (s) => `/**\n * Test account for the sandbox (user: demo, pwd: ${s}).\n */\nexport function sandbox() {}\n` },
  { form: "password in SQL comment", file: "db/seed.sql", secret: pw(), text: (s) => `-- admin password is '${s}'\nINSERT INTO users(name) VALUES ('admin');\n` },
  { form: "password in trailing comment", file: "app/retry.go", secret: pw(), text: (s) => `const retries = 3 // old db password was ${s}\n` },

  // ---- Markdown
  { form: "markdown shell setup NAME=value", file: "docs/setup.md", secret: pw(), text: (s) => `# Setup\n\nExport the admin password first:\n\n    PASSWORD=${s} ./run.sh\n` },
  { form: "markdown YAML password:", file: "docs/deploy.md", secret: pw(), text: (s) => `# Deploy\n\nPut this in \`values.yaml\`:\n\n\`\`\`yaml\ndatabase:\n  user: shop\n  password: ${s}\n\`\`\`\n` },
  { form: "markdown netrc line", file: "docs/netrc.md", secret: pw(), text: (s) => `# Access\n\nAdd to ~/.netrc:\n\n    machine git.example.org login deploy password ${s}\n` },
  { form: "markdown pgpass line", file: "docs/pgpass.md", secret: pw(), text: (s) => `# Database\n\nAdd this line to ~/.pgpass:\n\n\`\`\`\ndb.internal:5432:shop:shop:${s}\n\`\`\`\n` },
  { form: "markdown npmrc _authToken", file: "docs/npm.md", secret: uuid(), text: (s) => `# Publishing\n\n\`\`\`ini\n//npm.example.com/:_authToken=${s}\n\`\`\`\n` },
  { form: "markdown GCP service-account JSON", file: "docs/gcp.md", secret: rand(40, HEX), text: (s) => `# GCP\n\n\`\`\`json\n{\n  "type": "service_account",\n  "private_key_id": "${s}",\n  "client_email": "ci@shop.iam.gserviceaccount.com"\n}\n\`\`\`\n` },
  { form: "markdown token in prose", file: "docs/ops.md", secret: `ghp_${rand(36)}`, text: (s) => `# Operations\n\nThe deploy bot uses the token ${s} to push release tags.\n` },
  { form: "markdown password in prose", file: "docs/staging.md", secret: pw(), text: (s) => `# Staging\n\nLog in as \`admin\` with password \`${s}\`.\n` },
  { form: "markdown HTTP Authorization header", file: "docs/api.md", secret: rand(40, URLSAFE), text: (s) => `# API\n\n\`\`\`http\nGET /v1/orders HTTP/1.1\nAuthorization: Bearer ${s}\n\`\`\`\n` },
  { form: "markdown curl -H x-api-key", file: "docs/curl.md", secret: rand(32, HEX), text: (s) => `# Calling the API\n\n    curl -H "x-api-key: ${s}" https://api.example.com/v1/ping\n` },
  { form: "markdown .env block", file: "docs/env.md", secret: rand(32), text: (s) => `# Environment\n\n\`\`\`\nSTRIPE_WEBHOOK_SECRET=${s}\n\`\`\`\n` },
  { form: "markdown secret in heading", file: "docs/keys.md", secret: rand(32, HEX), text: (s) => `# Keys\n\n## Staging API key: ${s}\n\nRotate it monthly.\n` },
];
