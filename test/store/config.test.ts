import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../dist/shared/config.js";
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
    expect(resolveConfig(p.root, {}, {}).store.backend).toBe("lancedb");
    fs.mkdirSync(path.join(p.root, ".codemem"), { recursive: true });
    fs.writeFileSync(path.join(p.root, ".codemem/store.json"), JSON.stringify({ backend: "postgres", db_url: "postgres://u@h/db", schema: "codemem_kept" }));
    const recorded = resolveConfig(p.root, {}, {}).store;
    expect(recorded).toMatchObject({ backend: "postgres", dbUrl: "postgres://u@h/db", schema: "codemem_kept" });
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
