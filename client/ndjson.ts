import type { Duplex } from "node:stream";

/** 8 MiB: far above any real request, low enough that a runaway client cannot exhaust memory. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** Receives whole messages from a transport. */
export interface MessageReader {
  onMessage(cb: (msg: unknown) => void): void;
  /** A line that is not JSON, or longer than the limit; the stream stays usable. */
  onBadMessage(cb: (reason: "too_large" | "not_json", detail: string) => void): void;
  onClose(cb: () => void): void;
}

/** Sends whole messages over a transport; returns false when the peer is gone. */
export interface MessageWriter {
  write(msg: unknown): boolean;
  close(): void;
}

/** Newline-delimited JSON over a byte stream (Unix socket, stdio). */
export function ndjsonReader(stream: Duplex | NodeJS.ReadableStream, maxBytes = MAX_MESSAGE_BYTES): MessageReader {
  let onMessage: (msg: unknown) => void = () => {};
  let onBad: (reason: "too_large" | "not_json", detail: string) => void = () => {};
  let onClose: () => void = () => {};
  let chunks: Buffer[] = [];
  let size = 0;
  // After an oversized line, drop bytes until its newline so the next message parses.
  let discarding = false;

  const line = (buf: Buffer) => {
    if (buf.length === 0) return;
    let msg: unknown;
    try {
      msg = JSON.parse(buf.toString("utf8"));
    } catch (err) {
      onBad("not_json", (err as Error).message);
      return;
    }
    onMessage(msg);
  };

  stream.on("data", (data: Buffer | string) => {
    let buf = typeof data === "string" ? Buffer.from(data) : data;
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (discarding) return;
        size += buf.length;
        if (size > maxBytes) {
          discarding = true;
          chunks = [];
          size = 0;
          onBad("too_large", `message exceeds ${maxBytes} bytes`);
          return;
        }
        if (buf.length) chunks.push(buf);
        return;
      }
      const head = buf.subarray(0, nl);
      buf = buf.subarray(nl + 1);
      if (discarding) {
        discarding = false;
        continue;
      }
      if (size + head.length > maxBytes) {
        chunks = [];
        size = 0;
        onBad("too_large", `message exceeds ${maxBytes} bytes`);
        continue;
      }
      const whole = chunks.length ? Buffer.concat([...chunks, head]) : head;
      chunks = [];
      size = 0;
      line(whole);
    }
  });
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    onClose();
  };
  stream.on("end", close);
  stream.on("close", close);
  return {
    onMessage: (cb) => void (onMessage = cb),
    onBadMessage: (cb) => void (onBad = cb),
    onClose: (cb) => void (onClose = cb),
  };
}

export function ndjsonWriter(stream: Duplex | NodeJS.WritableStream): MessageWriter {
  let gone = false;
  // A peer that died mid-request surfaces as EPIPE/ECONNRESET here: the message is simply lost.
  stream.on("error", () => {
    gone = true;
  });
  stream.on("close", () => {
    gone = true;
  });
  return {
    write(msg) {
      const s = stream as Duplex;
      if (gone || s.destroyed || s.writableEnded) return false;
      try {
        s.write(JSON.stringify(msg) + "\n");
        return true;
      } catch {
        gone = true;
        return false;
      }
    },
    close() {
      const s = stream as Duplex;
      if (!s.destroyed) s.end();
    },
  };
}
