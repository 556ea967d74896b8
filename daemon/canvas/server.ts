/**
 * The live canvas (`codemem serve`): an HTTP server for the page, the graph view and the drawing
 * library, plus a WebSocket `/events` that pushes every activity event. Events come from two
 * paths: a tail of `.codemem/events.jsonl` (every process) and this process's in-process bus
 * (so its own activity shows even with CODEMEM_EVENT_LOG=0); an event both deliver is sent once.
 */
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { WebSocketServer, WebSocket } from "ws";
import { EventTail, onEvent, type CodememEvent } from "../../shared/events.js";
import { asCodememError } from "../../shared/errors.js";
import { HostNames } from "../../shared/hostnames.js";
import { log } from "../../shared/log.js";
import { stateDirs } from "../../shared/paths.js";
import { loadView, type LoadedView, type ViewEdge } from "./graph-view.js";
import { SynapseStore } from "../synapse/store.js";

export const CANVAS_DEFAULTS = Object.freeze({ host: "127.0.0.1", port: 7777 });

export interface CanvasOptions {
  /** 0 picks a free port; default 7777, or a free port when 7777 is taken. */
  port?: number;
  host?: string;
  /** Further names clients reach the canvas by (`--allow-host`); loopback and the bound address are always allowed. */
  allowHosts?: string[];
}

export interface CanvasHandle {
  url: string;
  close(): Promise<void>;
}

/** Messages on `/events`, server to page. */
export type CanvasMessage =
  | { type: "hello"; pid: number }
  | { type: "backlog"; events: CodememEvent[] }
  | { type: "event"; event: CodememEvent; targets: string[] }
  | { type: "graph" };

const here = path.dirname(fileURLToPath(import.meta.url));
// tsc does not copy non-TS files: from dist/daemon/canvas the page lives in the source tree.
const STATIC_DIR = [path.join(here, "static"), path.resolve(here, "../../../daemon/canvas/static")].find((d) =>
  fs.existsSync(path.join(d, "index.html")),
);

const STATIC: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/index.html": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/style.css": { file: "style.css", type: "text/css; charset=utf-8" },
};

/** Browser bundles served under /lib/, resolved from node_modules (no CDN: the canvas works offline). */
function libraryFiles(): Record<string, string> {
  const req = createRequire(import.meta.url);
  const fcose = req.resolve("cytoscape-fcose/cytoscape-fcose.js");
  const coseBase = createRequire(fcose).resolve("cose-base/cose-base.js");
  const layoutBase = createRequire(coseBase).resolve("layout-base/layout-base.js");
  return {
    "/lib/cytoscape.min.js": req.resolve("cytoscape/dist/cytoscape.min.js"),
    "/lib/layout-base.js": layoutBase,
    "/lib/cose-base.js": coseBase,
    "/lib/cytoscape-fcose.js": fcose,
  };
}

const BACKLOG = 50;
/** Strongest learned links drawn of each kind (session synapses, git co-change). */
const LEARNED_LINKS = 150;
const SEEN_KEYS = 4096;
/** A client this far behind is skipped for an event rather than buffered without bound. */
const MAX_BUFFERED = 4 * 1024 * 1024;

/** Starts the canvas for a project root; resolves once listening. */
export async function startCanvas(root: string, opts: CanvasOptions = {}): Promise<CanvasHandle> {
  if (!STATIC_DIR) throw new Error(`canvas page not found next to ${here}; reinstall codemem (daemon/canvas/static is missing).`);
  const host = opts.host ?? CANVAS_DEFAULTS.host;
  const names = new HostNames(host, opts.allowHosts);
  const dirs = stateDirs(root);
  const libs = libraryFiles();

  // The view is rebuilt when graph.json changes on disk (stat per use; a build rewrites it atomically).
  let cached: { key: string; loaded: LoadedView } | null = null;
  const currentView = (): LoadedView => {
    const st = fs.statSync(dirs.graphFile, { throwIfNoEntry: false });
    const key = st ? `${st.ino}:${st.mtimeMs}:${st.size}` : "missing";
    if (cached?.key !== key) cached = { key, loaded: loadView(dirs.graphFile) };
    return cached.loaded;
  };

  // Learned links are read fresh for each /graph (the store changes with every answer); the store is
  // opened on first use, and an unreadable one draws none (the synapse tools report it).
  let synapses: SynapseStore | undefined;
  const learned = (loaded: LoadedView): ViewEdge[] => {
    try {
      if (!synapses && !fs.existsSync(dirs.synapseDb)) return [];
      synapses ??= SynapseStore.open(dirs.synapseDb);
      return [...loaded.learned(synapses.strongest(LEARNED_LINKS), "synapse"), ...loaded.learned(synapses.strongestCoChange(LEARNED_LINKS), "cochange")];
    } catch (err) {
      log.warn("canvas: learned links unavailable", { error: (err as Error).message });
      return [];
    }
  };

  const server = http.createServer((req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      sendJson(res, 500, asCodememError(err).toJSON());
    }
  });
  const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (!names.allows(req.headers.host)) {
      return sendJson(res, 403, { code: "FORBIDDEN_HOST", message: `Host ${JSON.stringify(req.headers.host ?? "")} is not a name of this canvas; open it by its address, or start it with --allow-host <name>.` });
    }
    if (req.method !== "GET" && req.method !== "HEAD") return sendJson(res, 405, { code: "METHOD_NOT_ALLOWED", message: "GET only" });
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    const page = STATIC[pathname];
    if (page) return sendFile(res, path.join(STATIC_DIR, page.file), page.type);
    const lib = libs[pathname];
    if (lib) return sendFile(res, lib, "text/javascript; charset=utf-8");
    if (pathname === "/graph") {
      let loaded: LoadedView;
      try {
        loaded = currentView();
      } catch (err) {
        const e = asCodememError(err);
        return sendJson(res, e.code === "GRAPH_MISSING" ? 404 : 500, e.toJSON());
      }
      return sendJson(res, 200, { ...loaded.view, edges: [...loaded.view.edges, ...learned(loaded)] });
    }
    sendJson(res, 404, { code: "NOT_FOUND", message: `no such path ${pathname}` });
  };

  const wss = new WebSocketServer({
    server,
    path: "/events",
    // A page on another site must not read this project's activity through the user's browser.
    verifyClient: ({ req, origin }: { req: http.IncomingMessage; origin: string }, done: (ok: boolean, status?: number, reason?: string) => void) =>
      names.allowsUpgrade(req.headers.host, origin) ? done(true) : done(false, 403, "FORBIDDEN_HOST: foreign Host or Origin"),
  });
  const backlog: CodememEvent[] = [];
  wss.on("connection", (ws) => {
    send(ws, { type: "hello", pid: process.pid });
    if (backlog.length) send(ws, { type: "backlog", events: backlog });
  });
  const broadcast = (msg: CanvasMessage): void => {
    const data = JSON.stringify(msg);
    for (const ws of wss.clients) {
      if (ws.readyState === WebSocket.OPEN && ws.bufferedAmount < MAX_BUFFERED) ws.send(data);
    }
  };

  const seen = new Set<string>();
  const deliver = (event: CodememEvent): void => {
    const key = `${event.pid}|${event.ts}|${event.kind}`;
    if (seen.has(key)) return;
    seen.add(key);
    // A Set iterates in insertion order: dropping the first key forgets the oldest.
    if (seen.size > SEEN_KEYS) seen.delete(seen.values().next().value!);
    backlog.push(event);
    if (backlog.length > BACKLOG) backlog.shift();
    if (event.kind === "build" || event.kind === "history") {
      cached = null;
      broadcast({ type: "graph" });
    }
    let targets: string[] = [];
    if (event.nodes?.length || event.files?.length) {
      try {
        targets = currentView().targetsOf(event.nodes, event.files);
      } catch {
        // No graph yet: the event still shows in the activity log.
      }
    }
    broadcast({ type: "event", event, targets });
  };

  const unsubscribe = onEvent(deliver);
  const tail = new EventTail(dirs.eventsFile, (line) => {
    let event: CodememEvent;
    try {
      event = JSON.parse(line) as CodememEvent;
    } catch {
      return;
    }
    if (event && event.v === 1 && typeof event.kind === "string") deliver(event);
  });
  tail.start();

  try {
    await listen(server, opts.port ?? CANVAS_DEFAULTS.port, host, opts.port === undefined);
  } catch (err) {
    unsubscribe();
    tail.stop();
    wss.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const url = `http://${displayHost(host)}:${port}/`;
  log.info("canvas listening", { url, root });

  let closed: Promise<void> | null = null;
  return {
    url,
    close() {
      closed ??= (async () => {
        unsubscribe();
        tail.stop();
        for (const ws of wss.clients) ws.terminate();
        await new Promise<void>((resolve) => wss.close(() => resolve()));
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        synapses?.close();
      })();
      return closed;
    },
  };
}

function listen(server: http.Server, port: number, host: string, fallback: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (fallback && err.code === "EADDRINUSE" && port !== 0) {
        log.info("canvas port busy, using a free one", { port });
        listen(server, 0, host, false).then(resolve, reject);
      } else {
        reject(
          err.code === "EADDRINUSE"
            ? new Error(`port ${port} on ${host} is in use; pass another port, or 0 for a free one.`)
            : err,
        );
      }
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
}

function displayHost(host: string): string {
  if (host === "0.0.0.0" || host === "::") return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

function send(ws: WebSocket, msg: CanvasMessage): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

function sendFile(res: http.ServerResponse, file: string, type: string): void {
  fs.readFile(file, (err, data) => {
    if (err) return sendJson(res, 404, { code: "NOT_FOUND", message: `missing ${path.basename(file)}` });
    res.writeHead(200, { "content-type": type, "cache-control": "no-store" });
    res.end(data);
  });
}
