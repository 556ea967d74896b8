import { describe, it, expect, afterEach } from "vitest";
import { mkdtempSync, rmSync, readFileSync, existsSync, readdirSync, writeFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendEvent, onEvent, EventTail, EVENT_LIMITS } from "../../dist/shared/events.js";
import { recordStoreChoice } from "../../dist/shared/config.js";
import { distUrl, runNode } from "./helpers.js";

const EVENTS_URL = distUrl("shared/events.js");

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});
function project() {
  const d = mkdtempSync(join(tmpdir(), "codemem-events-"));
  dirs.push(d);
  return d;
}
const eventsFile = (root: string) => join(root, ".codemem", "events.jsonl");
const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter((l) => l !== "");

describe("event lines", () => {
  it("a project deleted meanwhile is not made again: its event is dropped, its store choice refused", () => {
    const root = project();
    rmSync(root, { recursive: true });
    // A daemon's late writes (a watch batch that was building while `rm -rf` ran): nothing comes back.
    appendEvent(root, { source: "watch", kind: "watch_batch", files: ["a.py"] });
    expect(() => recordStoreChoice(root, { backend: "local" } as Parameters<typeof recordStoreChoice>[1])).toThrow(/ENOENT/);
    expect(existsSync(root)).toBe(false);
  });

  it("writes one versioned JSON object per line and publishes it in process", () => {
    const root = project();
    const seen: unknown[] = [];
    const off = onEvent((e: unknown) => seen.push(e));
    const ev = appendEvent(root, { source: "cli", kind: "tool_call", tool: "codemem_search", nodes: ["a.py::f"], ms: 12, ok: true, query_chars: 30 });
    off();
    appendEvent(root, { source: "cli", kind: "build" });
    const got = lines(eventsFile(root)).map((l) => JSON.parse(l));
    expect(got).toHaveLength(2);
    expect(got[0]).toEqual({ v: 1, ts: ev.ts, pid: process.pid, source: "cli", kind: "tool_call", tool: "codemem_search", nodes: ["a.py::f"], ms: 12, ok: true, query_chars: 30 });
    expect(new Date(got[0].ts).toISOString()).toBe(got[0].ts);
    expect(seen).toEqual([ev]);
  });

  it("keeps every line under 4 KiB by cutting lists to 50 and then halving them", () => {
    const root = project();
    const nodes = Array.from({ length: 200 }, (_, i) => `src/very/long/module/path/number_${i}.py::SomeClass.some_method_${i}`);
    const ev = appendEvent(root, { source: "watch", kind: "watch_batch", nodes, files: nodes.map((n) => n.split("::")[0]) });
    const [line] = readFileSync(eventsFile(root), "utf8").split("\n");
    expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(4096);
    const parsed = JSON.parse(line);
    expect(parsed.truncated).toBe(true);
    expect(ev.truncated).toBe(true);
    expect(parsed.nodes.length).toBeLessThanOrEqual(EVENT_LIMITS.maxListItems);
    expect(parsed.nodes.length).toBeGreaterThan(0);
    expect(parsed.nodes).toEqual(nodes.slice(0, parsed.nodes.length));
    // A huge extra field goes too, and the core fields stay.
    appendEvent(root, { source: "hook", kind: "hook", tool: "Edit", blob: "x".repeat(10_000) });
    const last = JSON.parse(lines(eventsFile(root))[1]);
    expect(last).toMatchObject({ v: 1, source: "hook", kind: "hook", tool: "Edit", truncated: true });
    expect(last.blob).toBeUndefined();
  });

  it("4 processes × 500 appends: every line parses and no line is lost or interleaved", async () => {
    const root = project();
    // Lines near the 4 KiB limit make interleaving as likely as it can be.
    const code = `
      import { appendEvent } from ${JSON.stringify(EVENTS_URL)};
      const nodes = Array.from({ length: 50 }, (_, i) => "pkg/module_" + i + ".py::Klass.method_" + i);
      const startAt = Number(process.env.START_AT);
      while (Date.now() < startAt) {}
      for (let i = 0; i < 500; i++) {
        appendEvent(${JSON.stringify(root)}, { source: "mcp", kind: "tool_call", tool: "t", seq: i, nodes }, { maxBytes: 1 << 30 });
      }`;
    const START_AT = String(Date.now() + 800);
    await Promise.all([0, 1, 2, 3].map(() => runNode(code, { START_AT })));
    const all = lines(eventsFile(root));
    expect(all).toHaveLength(2000);
    const perPid = new Map<number, number[]>();
    for (const l of all) {
      expect(Buffer.byteLength(l)).toBeLessThan(4096);
      const e = JSON.parse(l);
      expect(e.nodes.length).toBeGreaterThan(20);
      perPid.set(e.pid, [...(perPid.get(e.pid) ?? []), e.seq]);
    }
    expect(perPid.size).toBe(4);
    for (const seqs of perPid.values()) expect(seqs).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it("CODEMEM_EVENT_LOG=0: nothing is written, in-process listeners still hear every event", async () => {
    const root = project();
    const code = `
      import { appendEvent, onEvent } from ${JSON.stringify(EVENTS_URL)};
      let heard = 0;
      onEvent((e) => { if (e.kind === "tool_call") heard++; });
      for (let i = 0; i < 3; i++) appendEvent(${JSON.stringify(root)}, { source: "serve", kind: "tool_call", tool: "x" });
      process.stdout.write(String(heard));`;
    expect(await runNode(code, { CODEMEM_EVENT_LOG: "0" })).toBe("3");
    expect(existsSync(join(root, ".codemem"))).toBe(false);
    // The same child with logging on does write: the test above can fail.
    expect(await runNode(code, { CODEMEM_EVENT_LOG: "1" })).toBe("3");
    expect(lines(eventsFile(root))).toHaveLength(3);
  });
});

describe("rotation", () => {
  it("rotates past the cap into .1 and .2, keeping two generations", () => {
    const root = project();
    for (let i = 0; i < 200; i++) appendEvent(root, { source: "cli", kind: "build", seq: i }, { maxBytes: 2048 });
    const names = readdirSync(join(root, ".codemem")).sort();
    expect(names).toEqual([".gitignore", "events.jsonl", "events.jsonl.1", "events.jsonl.2"]);
    for (const n of names) expect(readFileSync(join(root, ".codemem", n)).length).toBeLessThanOrEqual(2048 + 200);
    const newest = lines(eventsFile(root)).map((l) => JSON.parse(l).seq);
    expect(newest[newest.length - 1]).toBe(199);
  });

  it("a stale lock (older than 5 s) does not block rotation; a fresh one does", () => {
    const root = project();
    appendEvent(root, { source: "cli", kind: "build" });
    const lock = `${eventsFile(root)}.lock`;
    writeFileSync(lock, "");
    for (let i = 0; i < 50; i++) appendEvent(root, { source: "cli", kind: "build" }, { maxBytes: 1024 });
    expect(existsSync(`${eventsFile(root)}.1`)).toBe(false);
    const old = (Date.now() - 10_000) / 1000;
    utimesSync(lock, old, old);
    appendEvent(root, { source: "cli", kind: "build" }, { maxBytes: 1024 });
    expect(existsSync(`${eventsFile(root)}.1`)).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it("EventTail reads every line exactly once across rotations between its polls", () => {
    const root = project();
    const got: number[] = [];
    const tail = new EventTail(eventsFile(root), (l: string) => got.push(JSON.parse(l).seq), { intervalMs: 60_000 });
    tail.start(); // File absent yet: the tail picks it up from offset 0 when it appears.
    // ~43 lines per 4 KiB generation; polls 1–80 lines apart, so 0, 1 or 2 rotations happen between two polls.
    let seed = 7;
    let nextPoll = 0;
    for (let i = 0; i < 3000; i++) {
      appendEvent(root, { source: "daemon", kind: "tool_call", seq: i }, { maxBytes: 4096 });
      if (i === nextPoll) {
        tail.poll();
        seed = (seed * 1103515245 + 12345) % 2147483648;
        nextPoll = i + 1 + (seed % 80);
      }
    }
    tail.stop();
    expect(got).toEqual(Array.from({ length: 3000 }, (_, i) => i));
  });

  it("EventTail follows concurrent writers in other processes through rotations", async () => {
    const root = project();
    const file = eventsFile(root);
    const got: string[] = [];
    const tail = new EventTail(file, (l: string) => got.push(l), { intervalMs: 5, fromStart: true });
    tail.start();
    const code = `
      import { appendEvent } from ${JSON.stringify(EVENTS_URL)};
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      for (let i = 0; i < 1000; i++) {
        appendEvent(${JSON.stringify(root)}, { source: "mcp", kind: "tool_call", seq: i, nodes: ["a.py::f", "b.py::g"] }, { maxBytes: 64 * 1024 });
        if (i % 25 === 24) await sleep(5);
      }`;
    await Promise.all([runNode(code), runNode(code)]);
    await new Promise((r) => setTimeout(r, 100));
    tail.stop();
    expect(existsSync(`${file}.1`)).toBe(true);
    const perPid = new Map<number, number[]>();
    for (const l of got) {
      const e = JSON.parse(l);
      perPid.set(e.pid, [...(perPid.get(e.pid) ?? []), e.seq]);
    }
    expect(got).toHaveLength(2000);
    expect(perPid.size).toBe(2);
    for (const seqs of perPid.values()) expect(seqs).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it("EventTail starts at the end by default and restarts at 0 after a truncation", () => {
    const root = project();
    const file = eventsFile(root);
    appendEvent(root, { source: "cli", kind: "build", seq: -1 });
    const got: number[] = [];
    const tail = new EventTail(file, (l: string) => got.push(JSON.parse(l).seq), { intervalMs: 60_000 });
    tail.start();
    appendEvent(root, { source: "cli", kind: "build", seq: 0 });
    tail.poll();
    writeFileSync(file, "");
    appendEvent(root, { source: "cli", kind: "build", seq: 1 });
    tail.stop();
    expect(got).toEqual([0, 1]);
  });
});
