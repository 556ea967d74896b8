import fs from "node:fs";
import net from "node:net";
import { ndjsonReader, ndjsonWriter, type MessageReader, type MessageWriter } from "../client/ndjson.js";
import { asCodememError, CodememError } from "../shared/errors.js";
import { log } from "../shared/log.js";

/**
 * The daemon's RPC surface. Protocol: newline-delimited JSON, one object per line.
 *   request: {"id": n, "op": "<operation or tool name>", "input": {...}, "client": {"pid": n, "source": "cli"}}
 *   reply:   {"id": n, "ok": true, "result": ...} | {"id": n, "ok": false, "error": {"code", "message"}}
 * Requests on one connection run concurrently; replies carry the request's id and may come out of order.
 */
export type RequestId = number | string | null;

export interface ClientInfo {
  pid?: number;
  source?: string;
}

export type Reply = { id: RequestId; ok: true; result: unknown } | { id: RequestId; ok: false; error: { code: string; message: string; details?: Record<string, unknown> } };

/** Operations the server answers itself, without the engine. */
export const ADMIN_OPS = ["ping", "status", "shutdown", "cancel_build"] as const;

export interface AdminHooks {
  ping(): Record<string, unknown>;
  status(): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Called after the shutdown reply has been written. */
  shutdown(): void;
  /** Stops the asking client's build, running or queued (`codemem build` interrupted by Ctrl-C). */
  cancelBuild(client: ClientInfo): { cancelled: boolean };
}

/** The request's `client` as sent, its fields kept only when of their type (a pid names whose build a cancel stops). */
function clientOf(raw: unknown): ClientInfo {
  const c = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  return { pid: Number.isSafeInteger(c.pid) ? (c.pid as number) : undefined, source: typeof c.source === "string" ? c.source : undefined };
}

export type RequestHandler = (op: string, input: unknown, client: ClientInfo) => Promise<unknown>;

export interface ServerCounters {
  connections: number;
  connections_total: number;
  requests: number;
  errors: number;
  in_flight: number;
}

/** Serves one message stream (a socket connection, or any reader/writer pair). */
export class DaemonServer {
  private server?: net.Server;
  private readonly conns = new Set<net.Socket>();
  private readonly inFlight = new Set<Promise<void>>();
  private closing = false;
  private counters = { connections_total: 0, requests: 0, errors: 0 };
  /** When the last client left or the last request ended (performance.now()). */
  private lastActivity = performance.now();

  constructor(
    private readonly handler: RequestHandler,
    private readonly admin: AdminHooks,
  ) {}

  counts(): ServerCounters {
    return { connections: this.conns.size, ...this.counters, in_flight: this.inFlight.size };
  }

  /** Milliseconds without a connected client or a running request; 0 while one is there. */
  idleMs(): number {
    return this.conns.size || this.inFlight.size ? 0 : performance.now() - this.lastActivity;
  }

  /** Listens on a Unix socket; the caller has removed any stale socket file. */
  listen(socketPath: string): Promise<void> {
    const server = net.createServer((sock) => this.accept(sock));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => {
        server.off("error", reject);
        server.on("error", (err) => log.error("socket server error", { error: err.message }));
        try {
          fs.chmodSync(socketPath, 0o600); // only the owner may talk to the daemon
        } catch {
          // best effort: the directory is private anyway
        }
        resolve();
      });
    });
  }

  private accept(sock: net.Socket): void {
    if (this.closing) {
      sock.destroy();
      return;
    }
    this.conns.add(sock);
    this.counters.connections_total++;
    sock.on("error", () => {}); // ECONNRESET/EPIPE from a vanished client: nothing to do
    sock.on("close", () => {
      this.conns.delete(sock);
      this.lastActivity = performance.now();
    });
    this.serve(ndjsonReader(sock), ndjsonWriter(sock));
  }

  /** Attaches the protocol to any transport. */
  serve(reader: MessageReader, writer: MessageWriter): void {
    reader.onBadMessage((reason, detail) => {
      this.counters.errors++;
      writer.write({ id: null, ok: false, error: { code: "INVALID_ARGUMENT", message: reason === "too_large" ? `Request rejected: ${detail}; send smaller inputs.` : `Request is not valid JSON (${detail}); send one JSON object per line.` } } satisfies Reply);
    });
    reader.onMessage((msg) => {
      const p = this.handle(msg).then((reply) => {
        writer.write(reply);
      });
      this.inFlight.add(p);
      void p.finally(() => {
        this.inFlight.delete(p);
        this.lastActivity = performance.now();
      });
    });
  }

  private async handle(msg: unknown): Promise<Reply> {
    const started = performance.now();
    const m = (msg && typeof msg === "object" ? msg : {}) as { id?: unknown; op?: unknown; input?: unknown; client?: unknown };
    const id: RequestId = typeof m.id === "number" || typeof m.id === "string" ? m.id : null;
    const client = clientOf(m.client);
    const op = typeof m.op === "string" ? m.op : "";
    this.counters.requests++;
    try {
      if (!msg || typeof msg !== "object" || Array.isArray(msg)) throw new CodememError("INVALID_ARGUMENT", 'A request must be a JSON object {"id", "op", "input"}.');
      if (!op) throw new CodememError("INVALID_ARGUMENT", 'Request has no "op"; name an operation (e.g. "stats") or a tool (e.g. "codemem_stats").');
      let result: unknown;
      if (op === "ping") result = this.admin.ping();
      else if (op === "status") result = { ...(await this.admin.status()), server: this.counts() };
      else if (op === "cancel_build") result = this.admin.cancelBuild(client);
      else if (op === "shutdown") {
        result = { stopping: true };
        setImmediate(() => this.admin.shutdown());
      } else {
        if (this.closing) throw new CodememError("DAEMON_UNAVAILABLE", "The daemon is shutting down; retry and a new one will start.");
        result = await this.handler(op, m.input ?? {}, client);
      }
      log.debug("request", { op, id, source: client.source, client_pid: client.pid, ms: round(performance.now() - started), ok: true });
      return { id, ok: true, result };
    } catch (err) {
      const e = asCodememError(err);
      this.counters.errors++;
      if (e.code === "INTERNAL") log.error("request failed", { op, id, source: client.source, error: e.message, stack: (err as Error)?.stack });
      else log.debug("request", { op, id, source: client.source, ms: round(performance.now() - started), ok: false, code: e.code });
      return { id, ok: false, error: e.toJSON() };
    }
  }

  /**
   * Stops accepting, lets in-flight requests finish for up to `graceMs`, then closes every
   * connection. Resolves true when nothing was cut off.
   */
  /**
   * Stops listening, lets requests under way finish (up to `graceMs`), then closes connections.
   * `spare`: a socket path that now belongs to another daemon (ours was removed and the path
   * reused). Node unlinks a Unix server's path when it closes, whoever's file is there by then, so
   * that file is hard-linked aside first and put back at once (the unlink happens inside close()).
   */
  async close(graceMs: number, spare?: string): Promise<boolean> {
    this.closing = true;
    const aside = spare ? keepAside(spare) : undefined;
    const closed = this.server ? new Promise<void>((r) => this.server!.close(() => r())) : Promise.resolve();
    aside?.();
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      Promise.allSettled([...this.inFlight]).then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
    ]);
    clearTimeout(timer);
    if (!drained) log.warn("shutdown: requests still running after grace period", { in_flight: this.inFlight.size, grace_ms: graceMs });
    for (const s of this.conns) s.end();
    // Give replies a moment to flush, then cut whatever is left.
    await new Promise((r) => setTimeout(r, 20));
    for (const s of this.conns) s.destroy();
    await closed;
    return drained;
  }
}

/** Hard-links `file` aside; the function returned puts it back (nothing if it was not there). */
function keepAside(file: string): (() => void) | undefined {
  const aside = `${file}.keep-${process.pid}`;
  try {
    fs.linkSync(file, aside);
  } catch {
    return undefined;
  }
  return () => {
    try {
      fs.renameSync(aside, file);
    } catch (err) {
      fs.rmSync(aside, { force: true });
      log.warn("shutdown: could not put the other daemon's socket back", { file, error: (err as Error).message });
    }
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
