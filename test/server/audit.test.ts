import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { AuditLog, auditFiles, canonicalJson, GENESIS, verifyAudit, writeAuditReport } from "../../dist/client/audit.js";
import { makeProject } from "../helpers.js";

let p: ReturnType<typeof makeProject>;
afterEach(() => p?.cleanup());

type AuditEntryLike = Record<string, unknown> & { hash: string; mac?: string; prev: string };

const entry = (i: number, outcome: "ok" | "error" | "forbidden" | "rate_limited" = "ok") => ({
  who: i % 2 ? "alice@example.com" : "bob@example.com",
  role: "viewer",
  tool: i % 3 ? "codemem_query" : "codemem_build",
  args: { question: `secret question ${i}`, project_path: "/p" },
  outcome,
});

describe("audit log", () => {
  it("chains entries, stores only a digest of the arguments, and summarises", () => {
    p = makeProject({});
    let written = 0;
    const log = new AuditLog(p.root, { onWrite: () => written++ });
    for (let i = 0; i < 5; i++) log.append(entry(i, i === 4 ? "forbidden" : "ok"));
    expect(written).toBe(5);
    const files = auditFiles(p.root);
    expect(files.map((f) => path.basename(f))).toEqual([`audit-${new Date().toISOString().slice(0, 10).replace(/-/g, "")}.jsonl`]);
    const text = fs.readFileSync(files[0]!, "utf8");
    expect(text).not.toContain("secret question");
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].prev).toBe(GENESIS);
    expect(lines[1].prev).toBe(lines[0].hash);
    expect(lines[0]).toMatchObject({ who: "bob@example.com", role: "viewer", tool: "codemem_build", outcome: "ok" });
    expect(lines[0].args_sha256).toMatch(/^[0-9a-f]{64}$/);
    // key order does not change the digest
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    const v = verifyAudit(p.root);
    expect(v).toMatchObject({ ok: true, entries: 5, by_outcome: { ok: 4, forbidden: 1 }, by_user: { "alice@example.com": 2, "bob@example.com": 3 } });
    expect(v.first_bad).toBeUndefined();
  });

  it("detects one changed byte in a middle entry, at its line", () => {
    p = makeProject({});
    const log = new AuditLog(p.root);
    for (let i = 0; i < 7; i++) log.append(entry(i));
    const file = auditFiles(p.root)[0]!;
    const lines = fs.readFileSync(file, "utf8").split("\n");
    lines[3] = lines[3]!.replace('"outcome":"ok"', '"outcome":"ol"'); // line 4
    fs.writeFileSync(file, lines.join("\n"));
    const v = verifyAudit(p.root);
    expect(v.ok).toBe(false);
    expect(v.first_bad).toEqual({ file, line: 4, reason: "hash_mismatch" });
  });

  it("detects a rewritten entry whose own hash was recomputed (the next line's link breaks) and a removed line", () => {
    p = makeProject({});
    const log = new AuditLog(p.root);
    for (let i = 0; i < 6; i++) log.append(entry(i));
    const file = auditFiles(p.root)[0]!;
    const original = fs.readFileSync(file, "utf8");
    const lines = original.split("\n");
    // rewrite line 3 and recompute its own hash, as an attacker who knows the hashing would
    const { hash: _h, mac: _m, ...e } = JSON.parse(lines[2]!);
    const forged = { ...e, who: "mallory" };
    lines[2] = JSON.stringify({ ...forged, hash: createHash("sha256").update(canonicalJson(forged)).digest("hex") });
    fs.writeFileSync(file, lines.join("\n"));
    // its MAC (keyed outside the project) gives it away at its own line; the next line's link breaks too
    expect(verifyAudit(p.root).first_bad).toEqual({ file, line: 3, reason: "mac_mismatch" });

    const dropped = original.split("\n");
    dropped.splice(2, 1);
    fs.writeFileSync(file, dropped.join("\n"));
    expect(verifyAudit(p.root).first_bad).toEqual({ file, line: 3, reason: "chain_broken" });
  });

  it("rotation by size and by day keeps one verifiable chain across files", () => {
    p = makeProject({});
    let day = new Date("2031-03-04T10:00:00Z");
    const log = new AuditLog(p.root, { maxBytes: 1500, now: () => day });
    for (let i = 0; i < 8; i++) log.append(entry(i));
    day = new Date("2031-03-05T00:00:01Z");
    for (let i = 0; i < 3; i++) log.append(entry(i, "rate_limited"));
    const files = auditFiles(p.root).map((f) => path.basename(f));
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(files[0]).toBe("audit-20310304.jsonl");
    expect(files[1]).toBe("audit-20310304.1.jsonl");
    expect(files.at(-1)).toBe("audit-20310305.jsonl");
    for (const f of auditFiles(p.root)) expect(fs.statSync(f).size).toBeLessThanOrEqual(1500);
    const v = verifyAudit(p.root);
    expect(v).toMatchObject({ ok: true, entries: 11, by_outcome: { ok: 8, rate_limited: 3 } });

    // the first line of a later file is chained to the last line of the one before
    const second = auditFiles(p.root)[1]!;
    const firstOfSecond = JSON.parse(fs.readFileSync(second, "utf8").split("\n")[0]!);
    const prevLines = fs.readFileSync(auditFiles(p.root)[0]!, "utf8").trim().split("\n");
    expect(firstOfSecond.prev).toBe(JSON.parse(prevLines.at(-1)!).hash);

    // deleting a whole earlier file is detected at the first line of the next one
    fs.rmSync(auditFiles(p.root)[0]!);
    expect(verifyAudit(p.root).first_bad).toEqual({ file: second, line: 1, reason: "chain_broken" });
  });

  it("catches what the chain alone cannot: a cut tail, a forged append, a re-chained history, an emptied or deleted log, a deleted newest rotation", () => {
    const fresh = (n: number, maxBytes?: number) => {
      p?.cleanup();
      p = makeProject({});
      const log = new AuditLog(p.root, maxBytes ? { maxBytes } : {});
      for (let i = 0; i < n; i++) log.append(entry(i));
      expect(verifyAudit(p.root)).toMatchObject({ ok: true, entries: n, anchored: true });
      return auditFiles(p.root);
    };
    const reason = () => verifyAudit(p.root).first_bad?.reason;
    const rechain = (lines: AuditEntryLike[]) => {
      // What a tamperer without the key can do: recompute every hash and link, keep or drop the MACs.
      let prev = GENESIS;
      return lines.map((e) => {
        const { hash: _h, mac: _m, ...rest } = e;
        const body = { ...rest, prev };
        const hash = createHash("sha256").update(canonicalJson(body)).digest("hex");
        prev = hash;
        return JSON.stringify({ ...body, hash, mac: e.mac });
      });
    };
    const read = (f: string) => fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l) as AuditEntryLike);

    // a cut tail
    let [file] = fresh(6);
    fs.writeFileSync(file!, fs.readFileSync(file!, "utf8").split("\n").slice(0, 4).join("\n") + "\n");
    expect(reason()).toBe("head_mismatch");
    // a forged entry appended with a recomputed hash and link
    [file] = fresh(3);
    const lines = read(file!);
    const forged = { ...lines[2]!, who: "mallory@example.com", prev: lines[2]!.hash };
    fs.appendFileSync(file!, rechain([...lines, forged]).at(-1)! + "\n");
    expect(reason()).toBe("mac_mismatch");
    // a history rewritten and re-chained from the start (one entry's user changed)
    [file] = fresh(4);
    const rewritten = read(file!);
    rewritten[1] = { ...rewritten[1]!, who: "nobody@example.com" };
    fs.writeFileSync(file!, rechain(rewritten).join("\n") + "\n");
    expect(reason()).toBe("mac_mismatch");
    // an emptied file, a deleted directory
    [file] = fresh(3);
    fs.writeFileSync(file!, "");
    expect(reason()).toBe("head_mismatch");
    fresh(3);
    fs.rmSync(path.join(p.root, ".codemem/audit"), { recursive: true });
    expect(verifyAudit(p.root)).toMatchObject({ ok: false, entries: 0, first_bad: { reason: "head_mismatch" } });
    // the newest rotation deleted
    const files = fresh(12, 700);
    expect(files.length).toBeGreaterThan(1);
    fs.rmSync(files.at(-1)!);
    expect(reason()).toBe("head_mismatch");
  });

  it("one writer per log: a second server process is refused, a dead one's lock is taken over", async () => {
    p = makeProject({});
    const first = new AuditLog(p.root, { exclusive: true });
    first.append(entry(0));
    // Another live process holds the lock: the lock names a pid that exists (our parent).
    const lock = path.join(p.root, ".codemem/audit/writer.lock");
    first.close();
    fs.writeFileSync(lock, String(process.ppid));
    expect(() => new AuditLog(p.root, { exclusive: true })).toThrowError(expect.objectContaining({ code: "CONFIG_INVALID", message: expect.stringContaining(`pid ${process.ppid}`) }));
    // A dead holder's lock is taken over.
    fs.writeFileSync(lock, "999999999");
    const second = new AuditLog(p.root, { exclusive: true });
    second.append(entry(1));
    expect(fs.readFileSync(lock, "utf8")).toBe(String(process.pid));
    second.close();
    expect(fs.existsSync(lock)).toBe(false);
    expect(verifyAudit(p.root)).toMatchObject({ ok: true, entries: 2 });
  });

  it("writes the JSON report", () => {
    p = makeProject({});
    const log = new AuditLog(p.root);
    for (let i = 0; i < 3; i++) log.append(entry(i));
    const out = path.join(p.root, "report.json");
    writeAuditReport(p.root, { format: "json", output: out });
    const r = JSON.parse(fs.readFileSync(out, "utf8"));
    expect(r).toMatchObject({ ok: true, entries: 3, root: p.root, by_tool: { codemem_build: 1, codemem_query: 2 } });
    expect(() => writeAuditReport(p.root, { format: "csv" as "json", output: out })).toThrowError(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });

  it("an anchor that cannot be written stops the log before it writes, and the chain is whole again once it can", () => {
    // A state directory of this test's own, so other test files' anchors are untouched.
    const state = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-test-state-"));
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = state;
    try {
      p = makeProject({});
      const log = new AuditLog(p.root);
      for (let i = 0; i < 3; i++) log.append(entry(i));
      // The anchors' directory replaced by a file: no process, root included, can write an anchor there.
      const dir = path.join(state, "codemem", "audit-anchors");
      fs.renameSync(dir, `${dir}.aside`);
      fs.writeFileSync(dir, "not a directory");
      const file = auditFiles(p.root)[0]!;
      const before = fs.readFileSync(file, "utf8");
      try {
        expect(log.writable()).toBe(false);
        expect(() => log.append(entry(3))).toThrow();
        expect(fs.readFileSync(file, "utf8")).toBe(before); // nothing written that the anchor does not count
      } finally {
        fs.rmSync(dir);
        fs.renameSync(`${dir}.aside`, dir);
      }
      expect(log.writable()).toBe(true);
      log.append(entry(4));
      expect(verifyAudit(p.root)).toMatchObject({ ok: true, entries: 4, anchored: true });
    } finally {
      process.env.XDG_STATE_HOME = saved;
      fs.rmSync(state, { recursive: true, force: true });
    }
  });

  it("an entry appended whose anchor write was lost (a crash between the two) does not break the chain for good", () => {
    p = makeProject({});
    const log = new AuditLog(p.root);
    log.append(entry(0));
    const anchors = path.join(process.env.XDG_STATE_HOME!, "codemem", "audit-anchors");
    const anchor = fs.readdirSync(anchors).map((n) => path.join(anchors, n)).find((f) => JSON.parse(fs.readFileSync(f, "utf8")).root === p.root)!;
    const older = fs.readFileSync(anchor, "utf8");
    log.append(entry(1));
    log.append(entry(2));
    fs.writeFileSync(anchor, older); // the anchor as it was before the last two appends
    // entries past the anchored head that carry our MAC were written by the key's holder: not a cut
    expect(verifyAudit(p.root)).toMatchObject({ ok: true, entries: 3 });
    log.append(entry(3));
    expect(JSON.parse(fs.readFileSync(anchor, "utf8")).entries).toBe(4);
    expect(verifyAudit(p.root)).toMatchObject({ ok: true, entries: 4, anchored: true });
    // a cut tail is still a cut tail
    const f = auditFiles(p.root)[0]!;
    fs.writeFileSync(f, fs.readFileSync(f, "utf8").split("\n").slice(0, 2).join("\n") + "\n");
    expect(verifyAudit(p.root).first_bad?.reason).toBe("head_mismatch");
  });

  it("two processes taking the writer lock at the same instant: exactly one wins, with and without a dead holder's lock in place", async () => {
    p = makeProject({});
    const lock = path.join(p.root, ".codemem/audit/writer.lock");
    // Each child waits for "go", tries the lock, says won/lost, and on "release" lets it go.
    const script = `
      const { AuditLog } = await import(${JSON.stringify(path.resolve("dist/client/audit.js"))});
      const rl = (await import("node:readline")).createInterface({ input: process.stdin });
      let held;
      for await (const line of rl) {
        if (line === "go") {
          try { held = new AuditLog(${JSON.stringify(p.root)}, { exclusive: true }); console.log("won"); }
          catch (e) { console.log("lost " + e.code); }
        } else if (line === "release") { held?.close(); held = undefined; console.log("released"); }
      }`;
    const children: ChildProcessWithoutNullStreams[] = [0, 1].map(() => spawn(process.execPath, ["--input-type=module", "-e", script]));
    const answers = children.map((c) => {
      const queue: string[] = [];
      const waiters: ((s: string) => void)[] = [];
      readline.createInterface({ input: c.stdout }).on("line", (l) => (waiters.length ? waiters.shift()!(l) : queue.push(l)));
      return () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise<string>((r) => waiters.push(r)));
    });
    const ask = async (cmd: string) => {
      for (const c of children) c.stdin.write(`${cmd}\n`);
      return Promise.all(answers.map((a) => a()));
    };
    try {
      for (let round = 0; round < 60; round++) {
        if (round % 2) fs.writeFileSync(lock, "999999999"); // a dead server's lock left behind
        const got = await ask("go");
        expect(got.filter((g) => g === "won").length, `round ${round}: ${got.join(", ")}`).toBe(1);
        expect(got.filter((g) => g === "lost CONFIG_INVALID").length).toBe(1);
        await ask("release");
        expect(fs.existsSync(lock)).toBe(false);
      }
    } finally {
      for (const c of children) c.kill();
    }
  }, 60_000);

  it("a log shipped in a repository (chained, but not written under this machine's key) is reported unanchored, before and after a server continues it", () => {
    const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=m", "-c", "user.email=m@e", ...args], { cwd, encoding: "utf8" });
    const upstream = makeProject({ "app.py": "def main():\n    return 1\n" }, "codemem-upstream-");
    try {
      // A made-up history: well chained, hashes right, MACs under a key nobody here holds.
      let prev = GENESIS;
      const lines = ["ceo@example.com", "auditor@example.com", "ceo@example.com"].map((who, i) => {
        const body = { v: 1, time: `2024-01-0${i + 1}T10:00:00.000Z`, who, role: "admin", tool: "codemem_query", args_sha256: "0".repeat(64), outcome: "ok", prev };
        const hash = createHash("sha256").update(canonicalJson(body)).digest("hex");
        prev = hash;
        return JSON.stringify({ ...body, hash, mac: "f".repeat(64) });
      });
      upstream.write(".codemem/audit/audit-20240101.jsonl", lines.join("\n") + "\n");
      git(upstream.root, "init", "-q");
      git(upstream.root, "add", "-f", ".");
      git(upstream.root, "commit", "-qm", "ship an audit log");
      const parent = fs.mkdtempSync(path.join(os.tmpdir(), "codemem-clone-"));
      p = { root: path.join(parent, "clone"), write: () => undefined, remove: () => undefined, cleanup: () => fs.rmSync(parent, { recursive: true, force: true }) };
      git(parent, "clone", "-q", upstream.root, p.root);
      const report = () => {
        const out = path.join(parent, "report.json");
        const said = execFileSync(process.execPath, [path.resolve("dist/client/cli.js"), "audit-report", p.root, "--output", out], { encoding: "utf8" });
        return { said, r: JSON.parse(fs.readFileSync(out, "utf8")) };
      };
      let { said, r } = report();
      expect(r).toMatchObject({ anchored: false, entries: 3, unanchored_entries: 3, unanchored_by_user: { "ceo@example.com": 2, "auditor@example.com": 1 } });
      expect(said).toMatch(/not anchored/i);
      // A server on the clone continues the shipped chain: the shipped entries stay unproven.
      new AuditLog(p.root).append(entry(0));
      ({ said, r } = report());
      expect(r).toMatchObject({ entries: 4, anchored: false, unanchored_entries: 3, unanchored_by_user: { "ceo@example.com": 2, "auditor@example.com": 1 } });
      expect(said).toMatch(/not anchored/i);
    } finally {
      upstream.cleanup();
    }
  });

  it("an --output that cannot be written (/proc/self/x) is INVALID_ARGUMENT naming the path (exit 2), not INTERNAL", () => {
    p = makeProject({});
    new AuditLog(p.root).append(entry(0));
    const r = spawnSync(process.execPath, [path.resolve("dist/client/cli.js"), "audit-report", p.root, "--output", "/proc/self/x"], { encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toMatch(/INVALID_ARGUMENT: --output \/proc\/self\/x /);
    expect(r.status).toBe(2);
  });
});
