import net from "node:net";
import os from "node:os";
import { CodememError } from "./errors.js";

/** Binds on every interface: Host may name any address of this machine. */
const WILDCARDS = new Set(["0.0.0.0", "::", ""]);
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];
const DNS_NAME = /^[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

/** A name as compared: lower case, no IPv6 brackets, no trailing dot. */
function normal(name: string): string {
  return name.trim().toLowerCase().replace(/^\[(.+)\]$/, "$1").replace(/\.$/, "");
}

/** The name part of a Host header (`[::1]:8000` → `::1`, `example.org:80` → `example.org`); undefined when malformed. */
function hostOf(header: string): string | undefined {
  const h = header.trim();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end > 0 && /^(:\d*)?$/.test(h.slice(end + 1)) ? normal(h.slice(0, end + 1)) : undefined;
  }
  const parts = h.split(":");
  if (parts.length > 2 || (parts.length === 2 && !/^\d*$/.test(parts[1]!))) return undefined;
  return parts[0] ? normal(parts[0]) : undefined;
}

/** True for an address a bind keeps to this machine (loopback), false for a wildcard or a network address. */
export function isLoopbackBind(host: string): boolean {
  const h = normal(host);
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * The names a server answers to in the Host header: loopback, the address it is bound to (every
 * address of this machine and its hostname for a wildcard bind), and the names its user passes.
 * Anything else is a DNS-rebinding page (evil.example resolving to us) or a misrouted request.
 */
export class HostNames {
  private readonly names = new Set<string>(LOOPBACK_NAMES);

  /** `extra`: the user's own names for the server (`--allow-host`), checked here. */
  constructor(bound: string, extra: readonly string[] = []) {
    const b = normal(bound);
    if (WILDCARDS.has(b)) {
      if (b) this.names.add(b); // the URL the server prints for itself
      for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) this.names.add(normal(a.address.replace(/%.*$/, "")));
      this.names.add(normal(os.hostname()));
    } else this.names.add(b);
    for (const e of extra) {
      const n = normal(e);
      if (net.isIP(n) === 0 && !DNS_NAME.test(n)) {
        throw new CodememError("INVALID_ARGUMENT", `--allow-host "${e}" is not a host name or address; pass the bare name clients use (e.g. codemem.example.org), without scheme or port.`, { value: e });
      }
      this.names.add(n);
    }
  }

  /** Whether a request's Host header names this server. */
  allows(header: string | undefined): boolean {
    const name = header === undefined ? undefined : hostOf(header);
    return name !== undefined && this.names.has(name);
  }

  /** Whether a browser's Origin (absent from other clients) is a page served under one of these names. */
  allowsOrigin(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    try {
      const o = new URL(origin);
      return (o.protocol === "http:" || o.protocol === "https:") && this.allows(o.host);
    } catch {
      return false; // "null" (sandboxed frames, file:) and garbage
    }
  }

  /**
   * Whether a WebSocket upgrade may proceed: Host names this server, and a browser's Origin (clients
   * other than browsers send none) is this very server, so another site's page cannot open it.
   */
  allowsUpgrade(hostHeader: string | undefined, origin: string | undefined): boolean {
    if (!this.allows(hostHeader)) return false;
    if (origin === undefined || origin === "") return true;
    try {
      const o = new URL(origin);
      return (o.protocol === "http:" || o.protocol === "https:") && o.host === hostHeader!.trim().toLowerCase();
    } catch {
      return false; // "null" (sandboxed frames, file:) and garbage
    }
  }
}
