import fs from "node:fs";
import pg from "pg";

const DEFAULT_URL = "postgres://codemem@127.0.0.1:5432/codemem_test";
const DEFAULT_PASSWORD_FILE = "/tmp/codemem-pg-password";
const SETUP = "run `sudo bash scripts/setup-postgres.sh` (it installs PostgreSQL 15 + pgvector, starts the cluster and writes the password file)";

/**
 * The test server: CODEMEM_TEST_PG_URL + CODEMEM_TEST_PG_PASSWORD_FILE, else what
 * scripts/setup-postgres.sh set up. Throws (never skips) when the server cannot be used.
 */
export async function pgTestSettings(): Promise<{ dbUrl: string; password: string }> {
  const dbUrl = process.env.CODEMEM_TEST_PG_URL || DEFAULT_URL;
  const file = process.env.CODEMEM_TEST_PG_PASSWORD_FILE || DEFAULT_PASSWORD_FILE;
  let password: string;
  try {
    password = fs.readFileSync(file, "utf8").split("\n")[0].trim();
  } catch (err) {
    throw new Error(`PostgreSQL tests need the password file ${file} (${(err as NodeJS.ErrnoException).code}); ${SETUP}, or set CODEMEM_TEST_PG_URL and CODEMEM_TEST_PG_PASSWORD_FILE.`);
  }
  const u = new URL(dbUrl);
  u.password = password;
  const client = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 5000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new Error(`PostgreSQL tests cannot use ${dbUrl} (${(err as { code?: string }).code ?? (err as Error).message}); ${SETUP}, or set CODEMEM_TEST_PG_URL and CODEMEM_TEST_PG_PASSWORD_FILE.`);
  } finally {
    await client.end().catch(() => {});
  }
  return { dbUrl, password };
}

/** A superuser-free client on the test database, for inspecting and dropping test schemas. */
export async function pgTestClient(): Promise<pg.Client> {
  const { dbUrl, password } = await pgTestSettings();
  const u = new URL(dbUrl);
  u.password = password;
  const client = new pg.Client({ connectionString: u.toString() });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/**
 * Drops a test database once the last connection to it has gone. Not `WITH (FORCE)`: that needs
 * the right to signal every backend on it, and a connection still starting up (or a worker the
 * server started there) belongs to no role the test user is a member of, so the drop failed
 * (CI at 945d040). A backend of ours that is still exiting makes the plain drop wait instead.
 */
export async function dropTestDatabase(client: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await client.query(`DROP DATABASE IF EXISTS ${name}`);
      return;
    } catch (err) {
      // 55006: the database is being accessed by other users.
      if ((err as { code?: string }).code !== "55006" || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** A fresh schema name per test, so tests and parallel workers never share tables. */
export function randomSchema(prefix = "t"): string {
  return `codemem_${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
}
