import net from "node:net";
import pg from "pg";
import { redactDbUrl, type StoreSettings } from "../../shared/config.js";
import { pgError, targetOf, connectionUrl, type Target } from "./postgres-connection.js";

type Check = { name: string; ok: boolean; detail?: string };

/** pgvector 0.5.0 brought HNSW. */
const MIN_PGVECTOR = [0, 5, 0];

/**
 * Exercises what the postgres backend needs, step by step, against the configured server; each
 * failing step says what is wrong and how to fix it, and the steps after it are not attempted.
 */
export async function checkPostgresBackend(s: StoreSettings): Promise<{ ok: boolean; checks: Check[] }> {
  const checks: Check[] = [];
  const done = () => ({ ok: checks.every((c) => c.ok), checks });
  const pass = (name: string, detail?: string) => void checks.push({ name, ok: true, ...(detail ? { detail } : {}) });
  const fail = (name: string, detail: string) => void checks.push({ name, ok: false, detail });

  if (s.refused) {
    fail("database URL", `${s.refused.code}: ${s.refused.message}`);
    return done();
  }
  if (!s.dbUrl) {
    fail("database URL", "none configured: pass --db-url postgres://user@host:5432/db or set CODEMEM_DB_URL ([store] db_url in codemem.toml); for a local test server run `sudo bash scripts/setup-postgres.sh`, which prints one.");
    return done();
  }
  let t: Target;
  try {
    t = targetOf(s.dbUrl);
  } catch {
    fail("database URL", `${redactDbUrl(s.dbUrl)} cannot be parsed; use postgres://user@host:5432/db.`);
    return done();
  }
  pass("database URL", `${redactDbUrl(s.dbUrl)} (schema ${s.schema}; password ${s.password === undefined ? "not set" : "set"})`);

  if (t.host.startsWith("/")) {
    pass("TCP reachable", `Unix socket ${t.host}: no TCP check`);
  } else {
    const reach = await tcpProbe(t.host, t.port, 5000);
    if (reach) {
      fail("TCP reachable", `${t.host}:${t.port}: ${reach}`);
      return done();
    }
    pass("TCP reachable", `${t.host}:${t.port}`);
  }

  const client = new pg.Client({ connectionString: connectionUrl({ ...s, dbUrl: s.dbUrl }), connectionTimeoutMillis: 5000, statement_timeout: 30_000, application_name: "codemem-check" });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    fail("login", pgError(err, t, "connecting").message);
    return done();
  }
  try {
    pass("login", `as ${t.user} to database ${t.database}`);

    const v = await client.query<{ version: string; num: string }>("SELECT current_setting('server_version') AS version, current_setting('server_version_num') AS num");
    if (Number(v.rows[0].num) < 130000) {
      fail("server version", `PostgreSQL ${v.rows[0].version}; pgvector needs 13 or later: upgrade the server.`);
      return done();
    }
    pass("server version", `PostgreSQL ${v.rows[0].version}`);

    const ext = await client.query<{ installed: string | null; available: string | null; schema: string | null }>(
      "SELECT e.extversion AS installed, a.default_version AS available, e.extnamespace::regnamespace::text AS schema " +
        "FROM (SELECT 1) one LEFT JOIN pg_available_extensions a ON a.name = 'vector' LEFT JOIN pg_extension e ON e.extname = 'vector'",
    );
    const { installed, available, schema } = ext.rows[0];
    const version = installed ?? available;
    if (!version) {
      fail("vector extension", `pgvector is not installed on the server at ${t.host}:${t.port}: install it (Debian: postgresql-NN-pgvector; PostgreSQL 15 on Debian 12: \`sudo bash scripts/setup-postgres.sh\`).`);
      return done();
    }
    if (older(version, MIN_PGVECTOR)) {
      fail("vector extension", `pgvector ${version} has no HNSW index; install pgvector 0.5.0 or later${installed ? ", then run ALTER EXTENSION vector UPDATE" : ""}.`);
      return done();
    }
    if (installed) {
      pass("vector extension", `pgvector ${installed} enabled in schema ${schema} of database ${t.database}`);
    } else {
      // Not enabled yet: the first build enables it, if this user may.
      const why = await tryRolledBack(client, "CREATE EXTENSION vector");
      if (why) {
        fail("vector extension", `pgvector ${available} is installed but not enabled in database ${t.database}, and user ${t.user} may not enable it (${why}): run \`CREATE EXTENSION vector;\` in that database as a superuser (\`sudo -u postgres psql -d ${t.database} -c 'CREATE EXTENSION vector'\`).`);
        return done();
      }
      pass("vector extension", `pgvector ${available} available; the first build enables it in database ${t.database}`);
    }

    // A scratch schema with the backend's index types, queried through the indexes, then rolled back.
    const scratch = `codemem_check_${process.pid}_${Date.now().toString(36)}`;
    const why = await tryRolledBack(
      client,
      `${installed ? "" : "CREATE EXTENSION vector; "}CREATE SCHEMA ${scratch}; SET LOCAL search_path TO ${scratch}, ${installed ? schema : '"$user", public'};` +
        " CREATE TABLE t (id int PRIMARY KEY, e vector(3), w tsvector);" +
        " INSERT INTO t SELECT i, ('[' || cos(i) || ',' || sin(i) || ',' || (i % 7) || ']')::vector, to_tsvector('english', 'parse token ' || i) FROM generate_series(1, 200) i;" +
        " CREATE INDEX t_e ON t USING hnsw (e vector_cosine_ops); CREATE INDEX t_w ON t USING gin (w);" +
        " SET LOCAL enable_seqscan = off;",
      async () => {
        const near = await client.query<{ id: number }>(`SELECT id FROM ${scratch}.t ORDER BY e <=> '[1,0,0]' LIMIT 3`);
        if (near.rows.length !== 3) throw new Error(`the HNSW index answered ${near.rows.length} rows instead of 3`);
        const words = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${scratch}.t WHERE w @@ plainto_tsquery('english', 'parsing')`);
        if (Number(words.rows[0].n) !== 200) throw new Error(`the text index found ${words.rows[0].n} rows instead of 200`);
        await client.query(`DROP SCHEMA ${scratch} CASCADE`);
      },
    );
    if (why) {
      fail("scratch index", `creating a schema with an HNSW and a GIN index failed: ${why}. ${/permission denied/i.test(why) ? `Grant the user the right to create schemas: \`GRANT CREATE ON DATABASE ${t.database} TO ${t.user}\`.` : "Check the server log."}`);
      return done();
    }
    pass("scratch index", "created a schema, an HNSW and a GIN index, queried both, dropped it");

    const project = await client.query<{ nodes: string | null }>("SELECT to_regclass(format('%I.nodes', $1::text))::text AS nodes", [s.schema]);
    if (project.rows[0].nodes) {
      const n = await client.query<{ n: string }>(`SELECT count(*) AS n FROM "${s.schema}".nodes`);
      pass("project index", `schema ${s.schema}: ${n.rows[0].n} nodes`);
    } else {
      pass("project index", `schema ${s.schema}: not built yet (\`codemem build --backend postgres\`)`);
    }
  } catch (err) {
    fail("query", pgError(err, t, "checking the backend").message);
  } finally {
    await client.end().catch(() => {});
  }
  return done();
}

/** Runs `sql` (and `then`) in a transaction that is always rolled back; the failure's message, or undefined. */
async function tryRolledBack(client: pg.Client, sql: string, then?: () => Promise<void>): Promise<string | undefined> {
  try {
    await client.query("BEGIN");
    await client.query(sql);
    await then?.();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.query("ROLLBACK").catch(() => {});
  }
}

/** Why a TCP connection to host:port fails, or undefined when it opens. */
function tcpProbe(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const finish = (why?: string) => {
      socket.destroy();
      resolve(why);
    };
    socket.setTimeout(timeoutMs, () => finish(`no answer within ${timeoutMs / 1000} s: check the host, the port and any firewall in between.`));
    socket.once("connect", () => finish());
    socket.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNREFUSED") finish(`connection refused: no PostgreSQL listens there. Start it (local test server: \`sudo bash scripts/setup-postgres.sh\`) or fix the port in the URL.`);
      else if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN") finish(`host ${host} not found: fix the host in the URL.`);
      else finish(`${err.code ?? err.message}: check the host and port in the URL.`);
    });
  });
}

function older(version: string, min: number[]): boolean {
  const v = version.split(".").map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < min.length; i++) {
    if ((v[i] ?? 0) !== min[i]) return (v[i] ?? 0) < min[i];
  }
  return false;
}
