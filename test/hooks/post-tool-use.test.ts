import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readLast, saveLast, LAST_KEEP } from "../../dist/hooks/store-last.js";

const DIST = path.join(import.meta.dirname, "..", "..", "dist", "hooks");
const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", "outputs");
const tmps: string[] = [];

function project(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cm-hook-")));
  tmps.push(dir);
  fs.mkdirSync(path.join(dir, ".git"));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "calc.ts"), "export const x = 1;\n");
  return dir;
}

afterAll(() => {
  for (const d of tmps) fs.rmSync(d, { recursive: true, force: true });
});

function runHook(script: string, stdin: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, [path.join(DIST, script)], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 }));
    child.stdin.end(stdin);
  });
}

// The PostToolUse payload as Claude Code sends it for Bash (hooks reference, PostToolUse input).
function bashPayload(cwd: string, stdout: string, extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    session_id: "3f1c2d9e-session",
    transcript_path: path.join(cwd, "transcript.jsonl"),
    cwd,
    permission_mode: "default",
    hook_event_name: "PostToolUse",
    tool_name: "Bash",
    tool_input: { command: "npx vitest run --reporter=verbose", description: "Run the tests" },
    tool_response: { stdout, stderr: "", interrupted: false, isImage: false, ...extra },
    tool_use_id: "toolu_01ABC",
  });
}

async function waitFor<T>(fn: () => T | undefined, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function hookEvents(root: string): Record<string, unknown>[] {
  try {
    return fs
      .readFileSync(path.join(root, ".codemem", "events.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.source === "hook");
  } catch {
    return [];
  }
}

describe("post-tool-use hook as a real process", () => {
  const passing = fs.readFileSync(path.join(FIXTURES, "vitest-passing.txt"), "utf8").replace(/\x1b\[[0-9;]*m/g, "");

  it("replaces bulky Bash output in Bash's shape, saves the original, without a daemon (its latency: npm run bench:hooks)", async () => {
    const root = project();
    const stdout = `${passing}\nsrc/calc.ts:1 checked`;
    const r = await runHook("post-tool-use.js", bashPayload(root, stdout), root);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe("PostToolUse");
    const u = out.hookSpecificOutput.updatedToolOutput;
    expect(typeof u).toBe("object");
    expect(u).toMatchObject({ stderr: "", interrupted: false, isImage: false });
    expect(u.stdout.length).toBeLessThan(stdout.length);
    expect(u.stdout).toMatch(/Tests .*123 passed/);
    expect(u.stdout).toContain("codemem last");
    const last = readLast(root);
    expect(last?.text).toBe(stdout);
    expect(last?.tool).toBe("Bash");
    // The detached child logs the saving, counted in o200k tokens, and the touched file.
    const ev = await waitFor(() => hookEvents(root).find((e) => e.hook === "post_tool_use"), 60_000);
    expect(ev).toMatchObject({ tool: "Bash", delivery: "updatedToolOutput", files: ["src/calc.ts"] });
    expect(ev!.tokens_saved as number).toBeGreaterThan(1000);
    expect(ev!.tokens_saved).toBe((ev!.original_tokens as number) - (ev!.tokens as number));
  });

  // How fast it gives up is measured in bench:hooks; here, that it gives up at all.
  it("exits 0 without the daemon's answer when the daemon socket accepts but never answers", async () => {
    const root = project();
    const { daemonFiles } = await import("../../dist/client/socket-path.js");
    const sock = daemonFiles(root).socket;
    fs.mkdirSync(path.dirname(sock), { recursive: true });
    const hung = net.createServer(() => undefined);
    await new Promise<void>((res) => hung.listen(sock, res));
    try {
      const r = await runHook("post-tool-use.js", bashPayload(root, passing), root);
      expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout).hookSpecificOutput.updatedToolOutput.stdout.length).toBeLessThan(passing.length);
      const ev = await waitFor(() => hookEvents(root).find((e) => e.hook === "post_tool_use"), 60_000);
      expect(ev).toMatchObject({ daemon: false });
    } finally {
      hung.close();
    }
  });

  it("prints nothing for small output, other tools, malformed payloads and unknown projects", async () => {
    const root = project();
    const small = await runHook("post-tool-use.js", bashPayload(root, "ok\n3 passed"), root);
    expect(small).toMatchObject({ code: 0, stdout: "" });
    const edit = JSON.stringify({
      session_id: "s", cwd: root, hook_event_name: "PostToolUse", tool_name: "Edit",
      tool_input: { file_path: path.join(root, "src", "calc.ts"), old_string: "1", new_string: "2" },
      tool_response: { filePath: path.join(root, "src", "calc.ts"), success: true },
    });
    const e = await runHook("post-tool-use.js", edit, root);
    expect(e).toMatchObject({ code: 0, stdout: "" });
    const ev = await waitFor(() => hookEvents(root).find((x) => x.tool === "Edit"), 60_000);
    expect(ev).toMatchObject({ files: ["src/calc.ts"], tokens_saved: 0, delivery: "none" });
    for (const bad of ["", "{not json", "[]", JSON.stringify({ tool_name: "Bash", tool_response: 42 })]) {
      const b = await runHook("post-tool-use.js", bad, root);
      expect(b).toMatchObject({ code: 0, stdout: "" });
    }
    const nowhere = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cm-noproj-")));
    tmps.push(nowhere);
    const n = await runHook("post-tool-use.js", bashPayload(nowhere, passing), nowhere);
    expect(n).toMatchObject({ code: 0, stdout: "" });
  });

  it("reads the whole output from persistedOutputPath and drops the persisted fields", async () => {
    const root = project();
    const full = path.join(root, "persisted.txt");
    fs.writeFileSync(full, passing);
    const r = await runHook("post-tool-use.js", bashPayload(root, passing.slice(0, 2000), { persistedOutputPath: full, persistedOutputSize: passing.length }), root);
    const u = JSON.parse(r.stdout).hookSpecificOutput.updatedToolOutput;
    expect(u.persistedOutputPath).toBeUndefined();
    expect(u.stdout).toMatch(/Tests .*123 passed/);
    expect(readLast(root)?.text).toBe(passing);
  });
});

describe("store-last", () => {
  it("keeps the newest 20 originals and reads them newest first", () => {
    const root = project();
    for (let i = 0; i < LAST_KEEP + 5; i++) saveLast(root, "Bash", `output ${i}`, new Date(Date.UTC(2026, 0, 1, 0, 0, i)));
    expect(fs.readdirSync(path.join(root, ".codemem", "hooks", "last")).length).toBe(LAST_KEEP);
    expect(readLast(root)?.text).toBe(`output ${LAST_KEEP + 4}`);
    expect(readLast(root, 2)?.text).toBe(`output ${LAST_KEEP + 3}`);
    expect(readLast(root, 1)?.ts).toBe("2026-01-01T00:00:24.000Z");
    expect(readLast(root, LAST_KEEP + 1)).toBeNull();
  });
});

describe("session-start hook", () => {
  it("exits 0 and prints either nothing or the documented SessionStart shape", async () => {
    const root = project();
    const payload = JSON.stringify({ session_id: "s", transcript_path: "/tmp/t.jsonl", cwd: root, hook_event_name: "SessionStart", source: "startup" });
    const r = await runHook("session-start.js", payload, root);
    try {
      expect(r.code).toBe(0);
      if (r.stdout) {
        const out = JSON.parse(r.stdout);
        expect(out.hookSpecificOutput.hookEventName).toBe("SessionStart");
        expect(typeof out.hookSpecificOutput.additionalContext).toBe("string");
      }
      expect(hookEvents(root).some((e) => e.hook === "session_start")).toBe(true);
    } finally {
      // The hook may have autostarted a daemon for the temp project.
      const rpc = await import("../../dist/client/rpc.js").catch(() => null);
      await rpc?.stopDaemon(root, { timeoutMs: 10_000 }).catch(() => undefined);
      await rpc?.closeConnections();
    }
  });
});
