/**
 * The activity stream `.codemem/events.jsonl` (DESIGN.md §6, docs/events.md).
 *
 * Each event is one line written by ONE write(2) on a descriptor opened with O_APPEND. Linux
 * appends such a write at the current end of file under the inode lock, so lines from several
 * processes never interleave; we also keep every line under 4 KiB (PIPE_BUF), the size up to which
 * appends are atomic in practice on every local filesystem, by truncating node and file lists.
 * Not for NFS, where O_APPEND is emulated by the client.
 */
import fs from "node:fs";
import path from "node:path";
import { resolveProcessSettings } from "./config.js";
import { stateDirs } from "./paths.js";
import { ensureOwnDir, openOwnAppend } from "./own-files.js";

export type EventSource = "daemon" | "cli" | "mcp" | "hook" | "watch" | "serve";
export type EventKind = "tool_call" | "watch_batch" | "hook" | "build" | "decay" | "reinforce" | "export" | (string & {});

/** Fields a caller chooses; appendEvent adds the rest. */
interface EventFields {
  source: EventSource;
  kind: EventKind;
  tool?: string;
  /** Graph node ids involved; at most 50. */
  nodes?: string[];
  /** Project-relative files involved; at most 50. */
  files?: string[];
  ms?: number;
  ok?: boolean;
  [extra: string]: unknown;
}

export interface CodememEvent extends EventFields {
  v: 1;
  /** ISO 8601 time of the event. */
  ts: string;
  pid: number;
  /** Present when lists or fields were cut to fit the line limit. */
  truncated?: true;
}

/** What a caller passes: the event without the fields appendEvent fills in (v, pid; ts if omitted). */
export interface EventInput extends EventFields {
  ts?: string;
}

export interface AppendOptions {
  /** Rotate when the file exceeds this many bytes (default 8 MiB). */
  maxBytes?: number;
  /** Rotated generations kept: events.jsonl.1 … .N (default 2). */
  generations?: number;
}

export const EVENT_LIMITS = Object.freeze({
  maxListItems: 50,
  /** Bytes per line including the newline; ≤ PIPE_BUF (4096). */
  maxLineBytes: 4000,
  maxStringChars: 512,
  maxFileBytes: 8 * 1024 * 1024,
  generations: 2,
  lockStaleMs: 5000,
});

type Listener = (event: CodememEvent) => void;
const listeners = new Set<Listener>();

/** Subscribes to every event this process publishes (file writing on or off); returns unsubscribe. */
export function onEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function clip(s: string): string {
  return s.length > EVENT_LIMITS.maxStringChars ? s.slice(0, EVENT_LIMITS.maxStringChars) : s;
}

/** Builds the complete event and its line, cutting lists, then extra fields, until it fits. */
function serialize(input: EventInput): { event: CodememEvent; line: string } {
  let truncated = false;
  const list = (xs: string[] | undefined): string[] | undefined => {
    if (!xs) return undefined;
    const cut = xs.slice(0, EVENT_LIMITS.maxListItems).map((x) => clip(String(x)));
    if (cut.length < xs.length || cut.some((x, i) => x !== xs[i])) truncated = true;
    return cut;
  };
  const { ts, source, kind, nodes, files, ...rest } = input;
  const event: CodememEvent = {
    v: 1,
    ts: ts ?? new Date().toISOString(),
    pid: process.pid,
    source,
    kind,
    ...rest,
  };
  const n = list(nodes);
  const f = list(files);
  if (n) event.nodes = n;
  if (f) event.files = f;

  let line = JSON.stringify(truncated ? { ...event, truncated: true } : event);
  while (Buffer.byteLength(line) + 1 > EVENT_LIMITS.maxLineBytes) {
    truncated = true;
    const nl = event.nodes?.length ?? 0;
    const fl = event.files?.length ?? 0;
    if (nl > 0 || fl > 0) {
      if (nl >= fl) event.nodes = event.nodes!.slice(0, Math.floor(nl / 2));
      else event.files = event.files!.slice(0, Math.floor(fl / 2));
    } else {
      // Lists are empty and it still does not fit: keep only the documented core fields.
      for (const key of Object.keys(event)) {
        if (!["v", "ts", "pid", "source", "kind", "tool", "ms", "ok", "nodes", "files"].includes(key)) delete event[key];
      }
      if (typeof event.tool === "string") event.tool = event.tool.slice(0, 200);
      event.kind = String(event.kind).slice(0, 200);
    }
    line = JSON.stringify({ ...event, truncated: true });
  }
  if (truncated) event.truncated = true;
  return { event, line: line + "\n" };
}

/**
 * Publishes an event: to in-process listeners always, and to `<root>/.codemem/events.jsonl` unless
 * `CODEMEM_EVENT_LOG=0` in this process. Never throws for I/O: activity logging must not fail work.
 */
export function appendEvent(root: string, input: EventInput, opts: AppendOptions = {}): CodememEvent {
  const { event, line } = serialize(input);
  if (resolveProcessSettings().eventLog) {
    try {
      writeLine(stateDirs(root).eventsFile, line, opts);
    } catch {
      // A read-only or vanished project loses its activity log, not the operation that produced it.
    }
  }
  for (const l of listeners) {
    try {
      l(event);
    } catch {
      // One broken listener must not starve the others.
    }
  }
  return event;
}

function writeLine(file: string, line: string, opts: AppendOptions): void {
  const buf = Buffer.from(line);
  // A hook may write the first line of a project's .codemem/; a linked events.jsonl is never appended to.
  const fd = openOwnAppend(file);
  let size: number;
  try {
    // One write(2) of the whole line: the atomicity the format depends on.
    const written = fs.writeSync(fd, buf, 0, buf.length);
    if (written !== buf.length) throw new Error(`short append to ${file}: ${written}/${buf.length} bytes`);
    size = fs.fstatSync(fd).size;
  } finally {
    fs.closeSync(fd);
  }
  if (size > (opts.maxBytes ?? EVENT_LIMITS.maxFileBytes)) rotate(file, opts);
}

/** Renames events.jsonl → .1 → .2 … under an O_EXCL lock; losers of the lock race skip. */
function rotate(file: string, opts: AppendOptions): void {
  const lock = `${file}.lock`;
  const generations = Math.max(1, opts.generations ?? EVENT_LIMITS.generations);
  if (!takeLock(lock)) return;
  try {
    // Another process may have rotated between our write and our lock.
    let size: number;
    try {
      size = fs.statSync(file).size;
    } catch {
      return;
    }
    if (size <= (opts.maxBytes ?? EVENT_LIMITS.maxFileBytes)) return;
    for (let g = generations - 1; g >= 1; g--) {
      try {
        fs.renameSync(`${file}.${g}`, `${file}.${g + 1}`);
      } catch {
        // That generation does not exist yet.
      }
    }
    fs.renameSync(file, `${file}.1`);
  } finally {
    try {
      fs.unlinkSync(lock);
    } catch {
      // Already removed as stale by another process.
    }
  }
}

function takeLock(lock: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.closeSync(fs.openSync(lock, "wx"));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") return false;
      try {
        // A lock older than 5 s belongs to a process that died mid-rotation.
        if (Date.now() - fs.statSync(lock).mtimeMs <= EVENT_LIMITS.lockStaleMs) return false;
        fs.unlinkSync(lock);
      } catch {
        // Released meanwhile: try again.
      }
    }
  }
  return false;
}

interface Reading {
  fd: number;
  ino: number;
  offset: number;
  partial: string;
}

/**
 * Follows an events file by offset across rotations. It holds the descriptor of the file it reads,
 * so a rotation (detected as a new inode at the path) never strands unread lines: it reads the old
 * file to its end, then every newer generation in order, then the new file from offset 0. The old
 * descriptor stays open and drained for a grace period, for a writer that opened it just before
 * the rename. A size shrink with the same inode (truncation) restarts at offset 0.
 */
export class EventTail {
  private cur: Reading | null = null;
  private retired: { r: Reading; until: number }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private watcher: fs.FSWatcher | null = null;
  private readonly intervalMs: number;
  private readonly fromStart: boolean;
  private readonly generations: number;
  private polling = false;

  constructor(
    private readonly file: string,
    private readonly onLine: (line: string) => void,
    opts: { fromStart?: boolean; intervalMs?: number; generations?: number } = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 200;
    this.fromStart = opts.fromStart ?? false;
    this.generations = opts.generations ?? EVENT_LIMITS.generations;
  }

  /** Starts following: from the current end of the file unless `fromStart`. */
  start(): void {
    if (this.timer) return;
    const fd = this.openAt(this.file);
    if (fd) {
      this.cur = { ...fd, offset: this.fromStart ? 0 : fs.fstatSync(fd.fd).size, partial: "" };
    }
    this.timer = setInterval(() => this.poll(), this.intervalMs);
    try {
      ensureOwnDir(path.dirname(this.file));
      this.watcher = fs.watch(path.dirname(this.file), () => this.poll());
      this.watcher.on("error", () => undefined);
    } catch {
      // Polling alone still works.
    }
  }

  /** Reads what is left, then stops and releases every descriptor. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watcher?.close();
    this.watcher = null;
    this.poll();
    for (const { r } of this.retired) fs.closeSync(r.fd);
    this.retired = [];
    if (this.cur) fs.closeSync(this.cur.fd);
    this.cur = null;
  }

  /** Reads everything available now; also called by the timer and the directory watcher. */
  poll(): void {
    if (this.polling) return;
    this.polling = true;
    try {
      this.step();
    } finally {
      this.polling = false;
    }
  }

  private step(): void {
    const now = Date.now();
    this.retired = this.retired.filter(({ r, until }) => {
      this.drain(r);
      if (now < until) return true;
      fs.closeSync(r.fd);
      return false;
    });
    if (!this.cur) {
      const fd = this.openAt(this.file);
      if (!fd) return;
      this.cur = { ...fd, offset: 0, partial: "" };
    }
    for (let guard = 0; guard < 100; guard++) {
      const cur: Reading = this.cur!;
      this.drain(cur);
      const st = statIno(this.file);
      if (!st) return; // Between the rename and the next writer's create.
      if (st.ino === cur.ino) {
        if (st.size < cur.offset) {
          cur.offset = 0;
          cur.partial = "";
          this.drain(cur);
        }
        return;
      }
      // Rotated: move to the generation that follows ours (or the oldest left, if ours is gone).
      const chain = [];
      for (let g = this.generations; g >= 1; g--) chain.push(`${this.file}.${g}`);
      chain.push(this.file);
      const inos = chain.map((p) => statIno(p)?.ino);
      const at = inos.indexOf(cur.ino);
      const nextPath = at >= 0 ? chain[at + 1] : chain.find((_, i) => inos[i] !== undefined);
      if (!nextPath) return;
      const next = this.openAt(nextPath);
      if (!next) continue;
      if (next.ino === cur.ino) {
        fs.closeSync(next.fd);
        continue;
      }
      this.retired.push({ r: cur, until: now + 1000 });
      this.cur = { ...next, offset: 0, partial: "" };
    }
  }

  private openAt(p: string): { fd: number; ino: number } | null {
    try {
      const fd = fs.openSync(p, "r");
      return { fd, ino: fs.fstatSync(fd).ino };
    } catch {
      return null;
    }
  }

  private drain(r: Reading): void {
    const buf = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = fs.readSync(r.fd, buf, 0, buf.length, r.offset);
      if (n <= 0) return;
      // Only complete lines are consumed; a line being written stays unread until its newline lands.
      const chunk = buf.subarray(0, n);
      const lastNl = chunk.lastIndexOf(0x0a);
      if (lastNl < 0) {
        if (n < buf.length) return;
        r.partial += chunk.toString("utf8");
        r.offset += n;
        continue;
      }
      const text = r.partial + chunk.subarray(0, lastNl).toString("utf8");
      r.partial = "";
      r.offset += lastNl + 1;
      for (const line of text.split("\n")) {
        if (line !== "") {
          try {
            this.onLine(line);
          } catch {
            // The consumer's failure must not stop the tail.
          }
        }
      }
    }
  }
}

function statIno(p: string): { ino: number; size: number } | null {
  try {
    const st = fs.statSync(p);
    return { ino: st.ino, size: st.size };
  } catch {
    return null;
  }
}
