import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HOOK_MARKER, installHooks, uninstallHooks } from "../../dist/hooks/install.js";
import { BLOCK_END, BLOCK_START, installGitHook, uninstallGitHook } from "../../dist/hooks/git-hook.js";

const tmps: string[] = [];
const tmp = (p: string) => {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), p)));
  tmps.push(d);
  return d;
};
afterAll(async () => {
  const rpc = await import("../../dist/client/rpc.js").catch(() => null);
  for (const d of tmps) {
    await rpc?.stopDaemon(d, { timeoutMs: 10_000 }).catch(() => undefined);
    fs.rmSync(d, { recursive: true, force: true });
  }
  await rpc?.closeConnections();
});

describe("installHooks / uninstallHooks (.claude/settings.json)", () => {
  const other = {
    model: "sonnet",
    permissions: { allow: ["Bash(npm test:*)"] },
    hooks: {
      PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: "npx prettier --write" }] }],
      Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
    },
  };

  it("merges ours, preserves everything else, and is idempotent", () => {
    const root = tmp("cm-settings-");
    const file = path.join(root, ".claude", "settings.json");
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, JSON.stringify(other, null, 2));
    const first = installHooks(root, { home: "/opt/codemem" });
    expect(first).toMatchObject({ added: ["PostToolUse", "SessionStart"], changed: true });
    const after1 = fs.readFileSync(file, "utf8");
    const s = JSON.parse(after1);
    expect(s.model).toBe("sonnet");
    expect(s.permissions).toEqual(other.permissions);
    expect(s.hooks.Stop).toEqual(other.hooks.Stop);
    expect(s.hooks.PostToolUse[0]).toEqual(other.hooks.PostToolUse[0]);
    const ours = s.hooks.PostToolUse[1];
    expect(ours.matcher).toContain("Bash");
    expect(ours.hooks[0].command).toBe(`'${process.execPath}' '/opt/codemem/dist/hooks/post-tool-use.js' ${HOOK_MARKER}`);
    expect(s.hooks.SessionStart[0].hooks[0].command).toContain("/opt/codemem/dist/hooks/session-start.js");

    const second = installHooks(root, { home: "/opt/codemem" });
    expect(second).toMatchObject({ added: [], updated: [], changed: false });
    expect(fs.readFileSync(file, "utf8")).toBe(after1);

    const moved = installHooks(root, { home: "/srv/codemem" });
    expect(moved).toMatchObject({ updated: ["PostToolUse", "SessionStart"], changed: true });
    expect(JSON.parse(fs.readFileSync(file, "utf8")).hooks.PostToolUse).toHaveLength(2);

    const un = uninstallHooks(root);
    expect(un.removed.sort()).toEqual(["PostToolUse", "SessionStart"]);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(other);
    expect(uninstallHooks(root).changed).toBe(false);
  });

  it("creates the settings file when absent and leaves no empty structure behind", () => {
    const root = tmp("cm-settings-");
    expect(installHooks(root).file).toBe("created");
    const file = path.join(root, ".claude", "settings.json");
    const cmd = JSON.parse(fs.readFileSync(file, "utf8")).hooks.PostToolUse[0].hooks[0].command as string;
    expect(cmd).toMatch(/dist\/hooks\/post-tool-use\.js/);
    expect(path.isAbsolute(cmd.split("'")[1])).toBe(true);
    expect(installHooks(root).file).toBe("unchanged");
    // The file held only our hooks: it goes with them (it was left as {}).
    expect(uninstallHooks(root).file).toBe("deleted");
    expect(fs.existsSync(file)).toBe(false);
  });

  it("refuses a settings file that is not JSON, without touching it", () => {
    const root = tmp("cm-settings-");
    const file = path.join(root, ".claude", "settings.json");
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, "{ broken");
    expect(() => installHooks(root)).toThrow(expect.objectContaining({ code: "CONFIG_INVALID" }));
    expect(fs.readFileSync(file, "utf8")).toBe("{ broken");
  });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" } });
}

function repoWithHook(hooksDir?: string): { root: string; hook: string; original: string } {
  const root = tmp("cm-git-");
  git(root, "init", "-q");
  if (hooksDir) git(root, "config", "core.hooksPath", hooksDir);
  const dir = path.join(root, hooksDir ?? ".git/hooks");
  fs.mkdirSync(dir, { recursive: true });
  const hook = path.join(dir, "post-commit");
  const original = '#!/bin/sh\n# the project\'s own hook\necho "committed $(git rev-parse --short HEAD)" >> "$(git rev-parse --show-toplevel)/marker.txt"\n';
  fs.writeFileSync(hook, original, { mode: 0o755 });
  return { root, hook, original };
}

const countBlocks = (text: string) => text.split(BLOCK_START).length - 1;

describe("git post-commit hook", () => {
  it("adds one block next to the existing hook; the existing hook still runs; the commit reaches codemem", async () => {
    const { root, hook, original } = repoWithHook();
    expect(installGitHook(root).action).toBe("installed");
    expect(installGitHook(root).action).toBe("unchanged");
    const text = fs.readFileSync(hook, "utf8");
    expect(countBlocks(text)).toBe(1);
    expect(text.startsWith(original)).toBe(true);
    expect(text).toContain(BLOCK_END);
    expect(fs.statSync(hook).mode & 0o111).toBe(0o111);

    fs.writeFileSync(path.join(root, "a.py"), "def f():\n    return 1\n");
    git(root, "add", "a.py");
    git(root, "commit", "-qm", "root commit");
    expect(fs.readFileSync(path.join(root, "marker.txt"), "utf8")).toMatch(/^committed [0-9a-f]+\n$/);
    // The background block hands the root commit's files to the daemon and logs it.
    const events = path.join(root, ".codemem", "events.jsonl");
    const end = Date.now() + 30_000;
    let ev: Record<string, unknown> | undefined;
    while (!ev && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 200));
      if (fs.existsSync(events)) {
        ev = fs.readFileSync(events, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.hook === "git_commit");
      }
    }
    expect(ev).toMatchObject({ source: "hook", files: ["a.py"] });

    expect(uninstallGitHook(root).action).toBe("removed");
    expect(fs.readFileSync(hook, "utf8")).toBe(original);
    expect(uninstallGitHook(root).action).toBe("absent");
  });

  it("honours core.hooksPath (husky): the block goes into .husky/post-commit", () => {
    const { root, hook, original } = repoWithHook(".husky");
    const r = installGitHook(root);
    expect(r.hook_file).toBe(hook);
    installGitHook(root);
    expect(countBlocks(fs.readFileSync(hook, "utf8"))).toBe(1);
    expect(fs.existsSync(path.join(root, ".git", "hooks", "post-commit"))).toBe(false);
    uninstallGitHook(root);
    expect(fs.readFileSync(hook, "utf8")).toBe(original);
  });

  it("creates an executable post-commit when there is none, and removes it again", () => {
    const root = tmp("cm-git-");
    git(root, "init", "-q");
    const r = installGitHook(root);
    expect(r).toMatchObject({ action: "installed", created_file: true });
    expect(fs.readFileSync(r.hook_file, "utf8").startsWith("#!/bin/sh\n")).toBe(true);
    expect(fs.statSync(r.hook_file).mode & 0o111).toBe(0o111);
    uninstallGitHook(root);
    expect(fs.existsSync(r.hook_file)).toBe(false);
  });

  it("puts the block before a hook's top-level exit so it still runs", () => {
    const root = tmp("cm-git-");
    git(root, "init", "-q");
    const hook = path.join(root, ".git", "hooks", "post-commit");
    fs.writeFileSync(hook, "#!/bin/sh\necho hi\nexit 0\n", { mode: 0o755 });
    installGitHook(root);
    const text = fs.readFileSync(hook, "utf8");
    expect(text.indexOf(BLOCK_START)).toBeLessThan(text.indexOf("exit 0"));
    uninstallGitHook(root);
    expect(fs.readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho hi\nexit 0\n");
  });
});
