import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parsePgUrl } from "pg-connection-string";
import { dbHost, recordStoreChoice, resolveConfig, trustProject } from "../../dist/shared/config.js";
import { makeProject } from "../helpers.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function project(files: Record<string, string> = {}) {
  const p = makeProject(files);
  cleanups.push(p.cleanup);
  return p;
}

function codeOf(f: () => unknown): { code?: string; message: string } {
  try {
    f();
  } catch (err) {
    return { code: (err as { code?: string }).code, message: (err as Error).message };
  }
  throw new Error("expected an error");
}

describe("backend selection", () => {
  it("accepts the documented spellings and names the accepted values otherwise", () => {
    const p = project();
    expect(resolveConfig(p.root, {}, {}).store.backend).toBe("local");
    for (const [v, want] of [["sqlite", "local"], ["PG", "postgres"], ["pgvector", "postgres"], ["offline", "lancedb"], ["lance", "lancedb"]]) {
      expect(resolveConfig(p.root, { backend: v }, {}).store.backend).toBe(want);
    }
    const e = codeOf(() => resolveConfig(p.root, { backend: "mongo" }, {}));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.message).toContain('"mongo"');
    expect(e.message).toContain("postgres");
    expect(codeOf(() => resolveConfig(p.root, {}, { CODEMEM_BACKEND: "oracle" })).message).toContain("CODEMEM_BACKEND");
  });

  it("refuses a database URL that carries a password, without repeating it", () => {
    const p = project();
    const e = codeOf(() => resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://app:hunter2secret@db:5432/x" }, {}));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.message).toContain("CODEMEM_DB_PASSWORD");
    expect(e.message).not.toContain("hunter2secret");
    expect(codeOf(() => resolveConfig(p.root, { dbUrl: "mysql://db/x" }, {})).code).toBe("CONFIG_INVALID");
    expect(codeOf(() => resolveConfig(p.root, { dbUrl: "not a url" }, {})).code).toBe("CONFIG_INVALID");
    // pg reads query parameters as settings: ?password= is a password in the URL too.
    const q = codeOf(() => resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://app@db:5432/x?sslmode=require&password=hunter3secret" }, {}));
    expect(q.code).toBe("CONFIG_INVALID");
    expect(q.message).not.toContain("hunter3secret");
    // A URL that does not parse is not echoed with its password.
    const broken = codeOf(() => resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://app:hunter4secret@db:port/x" }, {}));
    expect(broken.code).toBe("CONFIG_INVALID");
    expect(broken.message).not.toContain("hunter4secret");
    const brokenParam = codeOf(() => resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://app@db:port/x?password=hunter5secret" }, {}));
    expect(brokenParam.message).not.toContain("hunter5secret");
  });

  it("takes the password from the environment or a file, and fails clearly on an unreadable file", () => {
    const p = project();
    const file = path.join(p.root, "pw");
    fs.writeFileSync(file, "s3cret\nignored\n");
    expect(resolveConfig(p.root, { backend: "postgres" }, { CODEMEM_DB_PASSWORD: "direct" }).store.password).toBe("direct");
    expect(resolveConfig(p.root, { backend: "postgres" }, { CODEMEM_DB_PASSWORD_FILE: file }).store.password).toBe("s3cret");
    const e = codeOf(() => resolveConfig(p.root, { backend: "postgres" }, { CODEMEM_DB_PASSWORD_FILE: path.join(p.root, "missing") }));
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.message).toContain("missing");
    // Other backends never read it.
    expect(resolveConfig(p.root, {}, { CODEMEM_DB_PASSWORD_FILE: path.join(p.root, "missing") }).store.password).toBeUndefined();
  });

  it("precedence: flags, then environment, then the last build, then codemem.toml", () => {
    const p = project({ "codemem.toml": '[store]\nbackend = "lancedb"\n' });
    const env = { XDG_CONFIG_HOME: path.join(p.root, ".user-config") };
    expect(resolveConfig(p.root, {}, {}).store.backend).toBe("lancedb");
    fs.mkdirSync(path.join(p.root, ".codemem"), { recursive: true });
    // A record that came with the repository names a server: not connected to.
    fs.writeFileSync(path.join(p.root, ".codemem/store.json"), JSON.stringify({ backend: "postgres", db_url: "postgres://u@h/db", schema: "codemem_kept" }));
    const shipped = resolveConfig(p.root, {}, env).store;
    expect(shipped.dbUrl).toBeUndefined();
    expect(shipped.refused?.code).toBe("CONFIG_UNTRUSTED");
    // The record a build of this user writes is followed.
    recordStoreChoice(p.root, { backend: "postgres", dbUrl: "postgres://u@h/db", schema: "codemem_kept", poolSize: 4 }, env);
    const recorded = resolveConfig(p.root, {}, env).store;
    expect(recorded).toMatchObject({ backend: "postgres", dbUrl: "postgres://u@h/db", schema: "codemem_kept" });
    expect(recorded.refused).toBeUndefined();
    expect(resolveConfig(p.root, {}, { CODEMEM_BACKEND: "local" }).store.backend).toBe("local");
    expect(resolveConfig(p.root, { backend: "lancedb" }, { CODEMEM_BACKEND: "local" }).store.backend).toBe("lancedb");
    // A damaged record is ignored, not fatal.
    fs.writeFileSync(path.join(p.root, ".codemem/store.json"), "{ not json");
    expect(resolveConfig(p.root, {}, {}).store.backend).toBe("lancedb");
  });

  it("gives every project its own schema, and [store] project names it", () => {
    const a = project();
    const b = project({ "codemem.toml": '[store]\nproject = "Payments_API"\n' });
    const sa = resolveConfig(a.root, {}, {}).store.schema;
    expect(sa).toMatch(/^codemem_[a-z0-9_]+_[0-9a-f]{8}$/);
    expect(resolveConfig(b.root, {}, {}).store.schema).toBe("codemem_payments_api");
    const bad = project({ "codemem.toml": '[store]\nproject = "x; drop table"\n' });
    expect(codeOf(() => resolveConfig(bad.root, {}, {})).code).toBe("CONFIG_INVALID");
  });
});

describe("settings that decide where credentials go", () => {
  it("come from codemem.toml only once that exact content is trusted; an untrusted password_file is not even read", () => {
    const p = project({ "codemem.toml": '[store]\nbackend = "postgres"\ndb_url = "postgres://me@db.example:5432/x?sslmode=verify-full"\npassword_file = "/no/such/file"\n[llm]\nbase_url = "https://llm.example/v1"\n' });
    const env = { XDG_CONFIG_HOME: path.join(p.root, ".user-config"), PROVIDER_API_KEY: "sk-1" };
    const before = resolveConfig(p.root, {}, env);
    expect(before.store).toMatchObject({ backend: "postgres", refused: { code: "CONFIG_UNTRUSTED" } });
    expect(before.store.dbUrl).toBeUndefined();
    expect(before.store.refused!.message).toContain("[store] db_url and [store] password_file");
    expect(before.llm.baseUrl).toBeUndefined();
    expect(before.llm.refused?.code).toBe("CONFIG_UNTRUSTED");
    // The user's own environment is trusted and wins over the file.
    const own = resolveConfig(p.root, {}, { ...env, CODEMEM_DB_URL: "postgres://me@127.0.0.1/x", CODEMEM_DB_PASSWORD: "pw", CODEMEM_LLM_BASE_URL: "https://mine.example/v1" });
    expect(own.store).toMatchObject({ dbUrl: "postgres://me@127.0.0.1/x", password: "pw" });
    expect(own.store.refused).toBeUndefined();
    expect(own.llm).toMatchObject({ baseUrl: "https://mine.example/v1", apiKey: "sk-1" });

    const trusted = trustProject(p.root, {}, env);
    expect(trusted[0].settings).toEqual({ "[store] db_url": "postgres://me@db.example:5432/x?sslmode=verify-full", "[store] password_file": "/no/such/file", "[llm] base_url": "https://llm.example/v1" });
    // Trusted, the password file is read (and this one is missing).
    expect(codeOf(() => resolveConfig(p.root, {}, env)).code).toBe("CONFIG_INVALID");
    fs.appendFileSync(path.join(p.root, "codemem.toml"), "# edited\n");
    expect(resolveConfig(p.root, {}, env).store.refused?.code).toBe("CONFIG_UNTRUSTED");
    // A backend other than postgres never uses them: nothing to refuse.
    expect(resolveConfig(p.root, { backend: "local" }, env).store.refused).toBeUndefined();
    trustProject(p.root, { revoke: true }, env);
    expect(resolveConfig(p.root, {}, env).store.refused?.code).toBe("CONFIG_UNTRUSTED");
  });

  it("reads a URL's host as pg does: the last host parameter, an empty one ignored", () => {
    for (const url of ["postgres://me@127.0.0.1/x?host=127.0.0.1&host=db.example", "postgres://me@db.example/x?host=", "postgres://me@db.example/x?host=%2Ftmp", "postgres://me@[::1]:5433/x"]) {
      expect(dbHost(url)).toBe(parsePgUrl(url).host || "localhost");
    }
  });

  it("never send a credential in cleartext to another machine", () => {
    const p = project();
    const pw = { CODEMEM_DB_PASSWORD: "pw" };
    const remote = resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://me@db.example/x" }, pw).store;
    expect(remote.refused?.code).toBe("INSECURE_TRANSPORT");
    expect(remote.password).toBeUndefined();
    // A host parameter overrides the authority in pg: it is the host that counts.
    expect(resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://me@127.0.0.1/x?host=db.example" }, pw).store.refused?.code).toBe("INSECURE_TRANSPORT");
    expect(resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://me@db.example/x?sslmode=prefer" }, pw).store.refused?.code).toBe("INSECURE_TRANSPORT");
    for (const ok of ["postgres://me@db.example/x?sslmode=require", "postgres://me@db.example/x?sslmode=verify-full", "postgres://me@localhost/x", "postgres://me@127.0.0.2/x", "postgres://me@[::1]/x", "postgres://me@%2Fvar%2Frun%2Fpostgresql/x"]) {
      expect(resolveConfig(p.root, { backend: "postgres", dbUrl: ok }, pw).store.refused).toBeUndefined();
    }
    // A repeated parameter is refused, naming it: pg would connect with its last value.
    for (const dup of ["postgres://me@db.example/x?sslmode=require&sslmode=disable", "postgres://me@127.0.0.1/x?host=127.0.0.1&host=db.example", "postgres://me@db.example/x?ssl%6Dode=require&sslmode=disable"]) {
      const e = codeOf(() => resolveConfig(p.root, { backend: "postgres", dbUrl: dup }, pw));
      expect(e.code).toBe("CONFIG_INVALID");
    }
    // Without a password nothing secret travels.
    expect(resolveConfig(p.root, { backend: "postgres", dbUrl: "postgres://me@db.example/x" }, {}).store.refused).toBeUndefined();

    const key = { PROVIDER_API_KEY: "sk-1" };
    const plain = resolveConfig(p.root, {}, { ...key, CODEMEM_LLM_BASE_URL: "http://llm.example/v1" }).llm;
    expect(plain.refused?.code).toBe("INSECURE_TRANSPORT");
    expect(plain.baseUrl).toBeUndefined();
    expect(resolveConfig(p.root, {}, { ...key, CODEMEM_LLM_BASE_URL: "http://127.0.0.1:8080/v1" }).llm.refused).toBeUndefined();
    expect(resolveConfig(p.root, {}, { ...key, CODEMEM_LLM_BASE_URL: "https://llm.example/v1" }).llm.refused).toBeUndefined();
    const bad = codeOf(() => resolveConfig(p.root, {}, { ...key, CODEMEM_LLM_BASE_URL: "https://user:sk-in-url@llm.example:port/v1" }));
    expect(bad.code).toBe("CONFIG_INVALID");
    expect(bad.message).not.toContain("sk-in-url");
  });
});

describe("codemem trust and a shipped .codemem/store.json", () => {
  it("trusting a harmless codemem.toml does not trust a store.json that came with the repository", () => {
    const p = project({ "codemem.toml": '[index]\nexclude_patterns = ["vendor/**"]\n' });
    const env = { XDG_CONFIG_HOME: path.join(p.root, ".user-config"), CODEMEM_DB_PASSWORD: "pw" };
    fs.mkdirSync(path.join(p.root, ".codemem"), { recursive: true });
    fs.writeFileSync(path.join(p.root, ".codemem/store.json"), JSON.stringify({ backend: "postgres", db_url: "postgres://me@127.0.0.1:5432/theirs" }));
    const trusted = trustProject(p.root, {}, env);
    expect(trusted.map((t) => path.basename(t.file))).toEqual(["codemem.toml"]);
    const store = resolveConfig(p.root, {}, env).store;
    expect(store.refused?.code).toBe("CONFIG_UNTRUSTED");
    expect(store.dbUrl).toBeUndefined();
    expect(store.password).toBeUndefined();
    // The user's own URL is used, and the build's record of it is then trusted as theirs.
    recordStoreChoice(p.root, { backend: "postgres", dbUrl: "postgres://me@127.0.0.1:5432/mine", schema: "codemem_x", poolSize: 4 }, env);
    expect(resolveConfig(p.root, {}, env).store).toMatchObject({ dbUrl: "postgres://me@127.0.0.1:5432/mine", password: "pw" });
  });
});

describe("[synapses] history half-lives", () => {
  it("default to 20 commits of the file and 700 of the project, are read from codemem.toml, and refuse what is not a positive integer", () => {
    const p = project();
    expect(resolveConfig(p.root, {}, {}).synapses).toMatchObject({ historyHalfLife: 20, historyProjectHalfLife: 700 });
    fs.writeFileSync(path.join(p.root, "codemem.toml"), "[synapses]\nhistory_half_life = 5\nhistory_project_half_life = 90\n");
    expect(resolveConfig(p.root, {}, {}).synapses).toMatchObject({ historyHalfLife: 5, historyProjectHalfLife: 90 });
    for (const bad of ["history_half_life = 0", "history_half_life = 2.5", 'history_project_half_life = "long"', "history_project_half_life = -1"]) {
      fs.writeFileSync(path.join(p.root, "codemem.toml"), `[synapses]\n${bad}\n`);
      expect(codeOf(() => resolveConfig(p.root, {}, {})).code).toBe("CONFIG_INVALID");
    }
  });
});
