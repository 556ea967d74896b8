import { dbHost, type StoreSettings } from "../../shared/config.js";
import { CodememError } from "../../shared/errors.js";

/**
 * The URL pg connects with, or the reason none may be made (an untrusted project file chose the
 * server, or the password would travel in cleartext). pg parses a connectionString over its other
 * settings, so a password given beside the URL would be dropped; it travels inside and is never
 * printed (see redactDbUrl).
 */
export function connectionUrl(s: StoreSettings & { dbUrl: string }): string {
  if (s.refused) throw new CodememError(s.refused.code, s.refused.message);
  if (s.password === undefined) return s.dbUrl;
  const u = new URL(s.dbUrl);
  u.password = s.password;
  return u.toString();
}

/** Where a connection goes, for messages: never the password. */
export interface Target {
  host: string;
  port: number;
  user: string;
  database: string;
}

/** Host, port, user and database named by a postgres:// URL (defaults as libpq's). */
export function targetOf(dbUrl: string): Target {
  const u = new URL(dbUrl);
  const host = dbHost(dbUrl);
  const user = decodeURIComponent(u.username) || "postgres";
  return { host, port: Number(u.port || 5432), user, database: decodeURIComponent(u.pathname.slice(1)) || user };
}

const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "EPIPE", "57P01", "57P02", "57P03"]);

/**
 * Turns a failure of the pg client or server into a CodememError with a stable code and the fix.
 * Server messages never contain the password; ours name the user, host and port only.
 */
export function pgError(err: unknown, t: Target, doing: string): CodememError {
  if (err instanceof CodememError) return err;
  const e = err as { code?: string; message?: string };
  const code = e.code ?? "";
  const msg = e.message ?? String(err);
  const at = `${t.host}:${t.port}`;
  if (UNREACHABLE.has(code) || /timeout|timed out|Connection terminated/i.test(msg)) {
    return new CodememError(
      "BACKEND_UNREACHABLE",
      `Cannot reach PostgreSQL at ${at} while ${doing} (${code || msg}). Start the server (on a dev machine: \`sudo bash scripts/setup-postgres.sh\`) or fix the host and port in --db-url / CODEMEM_DB_URL.`,
      { host: t.host, port: t.port, cause: code || msg },
    );
  }
  if (code === "28P01") {
    return new CodememError(
      "BACKEND_AUTH_FAILED",
      `PostgreSQL at ${at} rejected the password of user "${t.user}". Set the right one in CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE (or [store] password_file).`,
      { host: t.host, port: t.port, user: t.user },
    );
  }
  if (/client password must be a string|password authentication/i.test(msg)) {
    return new CodememError(
      "BACKEND_AUTH_FAILED",
      `PostgreSQL at ${at} asks for a password for user "${t.user}" and none is configured. Set CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE (or [store] password_file).`,
      { host: t.host, port: t.port, user: t.user },
    );
  }
  if (code === "28000") {
    return new CodememError(
      "BACKEND_AUTH_FAILED",
      `PostgreSQL at ${at} does not let user "${t.user}" connect to database "${t.database}" (${msg}). Add a pg_hba.conf entry for this host and user, or grant the role LOGIN; the password comes from CODEMEM_DB_PASSWORD or CODEMEM_DB_PASSWORD_FILE.`,
      { host: t.host, port: t.port, user: t.user },
    );
  }
  if (code === "3D000") {
    return new CodememError(
      "BACKEND_UNREACHABLE",
      `Database "${t.database}" does not exist on PostgreSQL at ${at}. Create it (\`createdb -h ${t.host} -p ${t.port} -O ${t.user} ${t.database}\`) or fix the database name in --db-url / CODEMEM_DB_URL.`,
      { host: t.host, port: t.port, database: t.database },
    );
  }
  if (code === "42501") {
    return new CodememError(
      "BACKEND_AUTH_FAILED",
      `User "${t.user}" lacks a privilege on database "${t.database}" at ${at} while ${doing}: ${msg}. Grant it (e.g. \`GRANT CREATE ON DATABASE ${t.database} TO ${t.user}\`) or use the database owner.`,
      { host: t.host, port: t.port, user: t.user },
    );
  }
  if (code === "57014") {
    return new CodememError("BACKEND_UNREACHABLE", `PostgreSQL at ${at} did not answer in time while ${doing} (statement timeout). Check the server's load.`, { host: t.host, port: t.port });
  }
  if (code === "42P01" || code === "3F000") {
    return new CodememError("INDEX_MISSING", `The index disappeared while ${doing} (${msg}); run \`codemem build --backend postgres\`.`);
  }
  return new CodememError("INTERNAL", `PostgreSQL error while ${doing}${code ? ` (${code})` : ""}: ${msg}`, code ? { sqlstate: code } : undefined);
}
