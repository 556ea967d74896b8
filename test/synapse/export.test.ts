import { describe, it, expect, afterEach } from "vitest";
import { mkdtempSync, mkdirSync, rmSync, readFileSync, existsSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SynapseStore } from "../../dist/daemon/synapse/store.js";
import { renderSynapseMarkdown, exportSynapseMemory, claudeProjectSlug } from "../../dist/daemon/synapse/export.js";

const T0 = Date.UTC(2025, 0, 1, 9, 0, 0);
const NODES: Record<string, { name: string; file_path: string; line_start: number }> = {
  "app/db.py::Session.commit": { name: "Session.commit", file_path: "app/db.py", line_start: 40 },
  "app/db.py::Session.rollback": { name: "Session.rollback", file_path: "app/db.py", line_start: 58 },
  "app/api.py::create_user": { name: "create_user", file_path: "app/api.py", line_start: 12 },
};

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function tmp(prefix: string) {
  const d = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  dirs.push(d);
  return d;
}

function seeded(root: string) {
  const store = SynapseStore.open(join(root, ".codemem", "synapses.db"));
  for (let i = 0; i < 6; i++) store.reinforce(["app/db.py::Session.commit", "app/db.py::Session.rollback"], { now: T0 });
  store.reinforce(["app/api.py::create_user", "app/db.py::Session.commit", "unknown::thing"], { now: T0 });
  return store;
}

describe("synapse memory export", () => {
  it("renders the strongest associations with names and files, hubs, date and parameters", () => {
    const root = tmp("codemem-export-root-");
    const store = seeded(root);
    const md = renderSynapseMarkdown(store, (id: string) => NODES[id], { limit: 5, now: T0 });
    store.close();
    expect(md).toContain("2025-01-01T09:00:00.000Z");
    expect(md).toContain("`Session.commit` (app/db.py:40) ↔ `Session.rollback` (app/db.py:58) — weight 0.62, 6× together, long-term");
    expect(md).toContain("`unknown::thing`");
    expect(md).toMatch(/## Hubs\n\n- `Session.commit` \(app\/db.py:40\) — 3 associations/);
    expect(md).toContain("Learning rate 0.15");
    expect(md).toContain("4 associations (1 long-term) among 4 symbols");
  });

  it("writes the project file always and the Claude Code memory file only when its directory exists", () => {
    const root = tmp("codemem-export-root-");
    const home = tmp("codemem-export-home-");
    const store = seeded(root);
    const md = renderSynapseMarkdown(store, (id: string) => NODES[id]);
    store.close();

    const projectFile = join(root, ".codemem", "synapse-memory.md");
    const slug = claudeProjectSlug(root);
    expect(slug).toMatch(/^-[A-Za-z0-9-]+$/);
    expect(slug).toBe(root.replace(/[^a-zA-Z0-9]/g, "-"));
    const projectDir = join(home, ".claude", "projects", slug);
    const memFile = join(projectDir, "memory", "codemem-synapses.md");

    expect(exportSynapseMemory(root, md, { home })).toEqual({ written: [projectFile] });
    expect(readFileSync(projectFile, "utf8")).toBe(md);
    expect(existsSync(join(home, ".claude"))).toBe(false);

    // Claude Code's project dir without a memory/ dir: still not ours to create.
    mkdirSync(projectDir, { recursive: true });
    expect(exportSynapseMemory(root, md, { home }).written).toEqual([projectFile]);
    expect(existsSync(join(projectDir, "memory"))).toBe(false);

    mkdirSync(join(projectDir, "memory"));
    expect(exportSynapseMemory(root, md, { home })).toEqual({ written: [projectFile, memFile] });
    expect(readFileSync(memFile, "utf8")).toBe(md);
  });

  it("maps a path to Claude Code's project directory name", () => {
    expect(claudeProjectSlug("/home/me/my.app_v2")).toBe("-home-me-my-app-v2");
  });
});
