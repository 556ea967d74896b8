import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectEngine } from "../../dist/daemon/engine.js";
import { SynapseStore } from "../../dist/daemon/synapse/store.js";
import { makeProject } from "../helpers.js";

// A real git repository whose history says: a.py changes with b.py (three commits; b.py is renamed
// to b2.py later), once with c.py, and once in a bulk commit with 39 files of a library copied in.
const py = (name: string, v = 0) => `"""Module ${name}."""\n\n\ndef ${name}_step_${v}(x):\n    return x + ${v}\n`;
let clock = Date.parse("2026-01-01T00:00:00Z");

function git(root: string, ...args: string[]): string {
  const at = new Date((clock += 3_600_000)).toISOString();
  return execFileSync("git", ["-C", root, "-c", "user.name=Dev", "-c", "user.email=dev@example.com", ...args], {
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at },
  });
}

function commit(p: ReturnType<typeof makeProject>, files: Record<string, string>, message: string): void {
  for (const [rel, body] of Object.entries(files)) p.write(rel, body);
  git(p.root, "add", "-A");
  git(p.root, "commit", "-q", "-m", message);
}

function makeRepo(): ReturnType<typeof makeProject> {
  const p = makeProject({
    "README.md": "# shop\n",
    "app/a.py": `"""Invoices."""\n\n\ndef compute_invoice_total(lines):\n    """Sum of the invoice lines with tax."""\n    return sum(lines) * 1.2\n`,
  });
  git(p.root, "init", "-q", "-b", "main");
  commit(p, {}, "initial");
  for (let i = 1; i <= 3; i++) commit(p, { "app/a.py": fs.readFileSync(path.join(p.root, "app/a.py"), "utf8") + `\n# rev ${i}\n`, "app/b.py": py("b", i) }, `a with b ${i}`);
  commit(p, { "app/a.py": fs.readFileSync(path.join(p.root, "app/a.py"), "utf8") + "\n# with c\n", "app/c.py": py("c") }, "a with c");
  const vendored: Record<string, string> = { "app/a.py": fs.readFileSync(path.join(p.root, "app/a.py"), "utf8") + "\n# vendoring\n" };
  for (let i = 0; i < 39; i++) vendored[`extlib/v${i}.py`] = py(`v${i}`);
  commit(p, vendored, "vendor a library");
  git(p.root, "mv", "app/b.py", "app/b2.py");
  git(p.root, "commit", "-q", "-m", "rename b");
  commit(p, { "app/d.py": py("d"), "README.md": "# shop\n\nwith d\n" }, "d and docs");
  return p;
}

const storeOf = (root: string) => SynapseStore.open(path.join(root, ".codemem/synapses.db"));
function historyOf(root: string) {
  const s = storeOf(root);
  try {
    return { stats: s.historyStats(), head: s.historyHead(), ab: s.evidence("app/a.py", "app/b2.py"), neighbors: s.neighbors(["app/a.py"], { depth: 1, k: 50 }).map((n) => n.id) };
  } finally {
    s.close();
  }
}

async function buildAndSettle(root: string, input: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const e = await ProjectEngine.open(root); // side effects on, as in the daemon
  try {
    return (await e.build({ project_path: root, ...input })) as Record<string, unknown>;
  } finally {
    await e.close(); // waits for the background replay
  }
}

let p: ReturnType<typeof makeRepo>;
beforeAll(() => {
  p = makeRepo();
});
afterAll(() => p.cleanup());

describe("the first build learns co-change from the git history", () => {
  it("reads every commit once, follows renames and skips bulk commits", async () => {
    await buildAndSettle(p.root);
    const h = historyOf(p.root);
    expect(h.stats.commits).toBe(8); // every commit, merges aside
    expect(h.stats.learned).toBe(4); // three a+b, one a+c; the 40-file vendoring commit is bulk
    expect(h.head).toBe(git(p.root, "rev-parse", "HEAD").trim());
    expect(h.neighbors[0]).toBe("app/b2.py"); // b.py's commits count for the file it is today
    expect(h.neighbors).toContain("app/c.py");
    expect(h.neighbors.some((n) => n.startsWith("extlib/"))).toBe(false);
    expect(h.ab.commits).toBe(3);
  });

  it("a second build adds nothing; a new commit is read by the next build", async () => {
    const before = historyOf(p.root);
    await buildAndSettle(p.root);
    expect(historyOf(p.root)).toEqual(before);

    commit(p, { "app/d.py": py("d", 1), "app/a.py": fs.readFileSync(path.join(p.root, "app/a.py"), "utf8") + "\n# with d\n" }, "a with d");
    await buildAndSettle(p.root);
    const after = historyOf(p.root);
    // The commit took everything `git add -A` saw: codemem's own state stays out of it.
    expect(git(p.root, "ls-files")).not.toMatch(/\.codemem|codegraph-out/);
    expect(after.stats.commits).toBe(before.stats.commits + 1);
    expect(after.stats.learned).toBe(before.stats.learned + 1);
    const s = storeOf(p.root);
    expect(s.evidence("app/a.py", "app/d.py").commits).toBe(1);
    s.close();
  });

  it("build --history N reads the last N commits again (same result), and the bulk cap is configurable", async () => {
    const before = historyOf(p.root);
    const r = await buildAndSettle(p.root, { history: 100 });
    expect(r.history).toMatchObject({ commits: 9, learned: 5 });
    expect(historyOf(p.root)).toEqual(before);

    fs.writeFileSync(path.join(p.root, "codemem.toml"), "[synapses]\nhistory_max_files = 50\n");
    try {
      await buildAndSettle(p.root, { history: 100 });
      const s = storeOf(p.root);
      expect(s.evidence("app/a.py", "extlib/v0.py").commits).toBe(1);
      s.close();
    } finally {
      fs.rmSync(path.join(p.root, "codemem.toml"));
      await buildAndSettle(p.root, { history: 100 });
    }
  });

  it("answers say what changes with what: synaptic_neighbors with evidence, one line in the query within its budget", async () => {
    const e = await ProjectEngine.open(p.root, { sideEffects: false });
    try {
      const n = (await e.dispatch("synaptic_neighbors", { project_path: p.root, node_ids: [path.join(p.root, "app/a.py")], depth: 1 })) as {
        neighbors: { file_path: string; commits: number; co_activations: number; last_at: string | null }[];
      };
      expect(n.neighbors[0]).toMatchObject({ file_path: "app/b2.py", commits: 3, co_activations: 0 });
      expect(n.neighbors[0].last_at).toMatch(/^2026-01-01T/);
      for (const budget of [200, 400, 800]) {
        const a = (await e.dispatch("query", { project_path: p.root, question: "compute the invoice total with tax", budget })) as { context: string; tokens: number; citations: { file_path: string }[] };
        expect(a.tokens).toBeLessThanOrEqual(budget);
        expect(a.citations[0].file_path).toBe("app/a.py");
        expect(a.context).toContain("(usually changed with app/b2.py (3 commits)");
      }
    } finally {
      await e.close();
    }
  });

  it("a benchmark run leaves the project's store and files as they were", () => {
    const db = path.join(p.root, ".codemem/synapses.db");
    const before = fs.readFileSync(db);
    const status = git(p.root, "status", "--porcelain");
    const out = execFileSync("node", [path.resolve("scripts/bench-cochange.mjs"), "--no-graph", "--split", "0.5", p.root], { encoding: "utf8" });
    expect(out).toMatch(/raw co-change counts\s+\d\.\d{3}/);
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(git(p.root, "status", "--porcelain")).toBe(status);
  });
});

describe("projects with little or no history", () => {
  it("a first commit that adds every file teaches nothing: only later commits are co-change", async () => {
    const files: Record<string, string> = {};
    for (const n of ["a", "b", "c", "d", "e"]) files[`app/${n}.py`] = py(n);
    const q = makeProject(files);
    try {
      git(q.root, "init", "-q", "-b", "main");
      commit(q, {}, "initial import");
      commit(q, { "app/a.py": py("a", 1), "app/b.py": py("b", 1) }, "a with b");
      await buildAndSettle(q.root);
      const s = storeOf(q.root);
      try {
        expect(s.historyStats()).toMatchObject({ commits: 2, learned: 1 }); // read, but not learned
        expect(s.neighbors(["app/a.py"], { depth: 1, k: 50 }).map((n) => n.id)).toEqual(["app/b.py"]);
        expect(s.neighbors(["app/c.py"], { depth: 2, k: 50 })).toEqual([]);
      } finally {
        s.close();
      }
      // So too through the tool: c.py changed with nothing; what it lists is what the project changed last.
      const e = await ProjectEngine.open(q.root, { sideEffects: false });
      try {
        const n = (await e.dispatch("synaptic_neighbors", { project_path: q.root, node_ids: ["app/c.py"] })) as { neighbors: { file_path: string; reason: string }[] };
        expect(n.neighbors.map((x) => [x.file_path, x.reason])).toEqual([
          ["app/a.py", "recent_change"],
          ["app/b.py", "recent_change"],
        ]);
      } finally {
        await e.close();
      }
    } finally {
      q.cleanup();
    }
  });

  it("a shallow clone learns what it has; a project outside git and history_commits = 0 learn nothing", async () => {
    const shallow = makeProject({});
    const plain = makeProject({ "app/a.py": py("a"), "app/b.py": py("b") });
    try {
      fs.rmSync(shallow.root, { recursive: true });
      execFileSync("git", ["clone", "-q", "--depth", "3", `file://${p.root}`, shallow.root]);
      await buildAndSettle(shallow.root);
      const h = historyOf(shallow.root);
      expect(h.stats.commits).toBe(3);
      expect(h.stats.learned).toBeLessThanOrEqual(1); // the boundary commit holds the whole tree and has no parent: not learned

      await buildAndSettle(plain.root);
      expect(historyOf(plain.root).stats).toEqual({ commits: 0, learned: 0, edges: 0 });

      const off = makeRepo();
      try {
        fs.writeFileSync(path.join(off.root, "codemem.toml"), "[synapses]\nhistory_commits = 0\n");
        await buildAndSettle(off.root);
        expect(historyOf(off.root).stats.commits).toBe(0);
      } finally {
        off.cleanup();
      }
    } finally {
      shallow.cleanup();
      plain.cleanup();
    }
  });
});
