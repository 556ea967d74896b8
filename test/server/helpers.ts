import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import path from "node:path";

export const ACCEPT = "application/json, text/event-stream";

/** One raw JSON-RPC POST to /mcp: status, headers and parsed body. */
export async function rpc(
  base: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
  fetchImpl: typeof fetch = fetch,
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetchImpl(`${base}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT, "mcp-protocol-version": "2025-06-18", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, headers: res.headers, body };
}

/** A tools/call through raw HTTP. */
export const toolCall = (base: string, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}, fetchImpl?: typeof fetch) =>
  rpc(base, "tools/call", { name, arguments: args }, headers, fetchImpl);

/** Value of one sample in Prometheus text (labels given as in the exposition, sorted by name). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

/** A self-signed certificate for localhost / 127.0.0.1, made with the system's openssl. */
export function selfSignedCert(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, "cert.pem");
  const key = path.join(dir, "key.pem");
  try {
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1", "-keyout", key, "-out", cert],
      { stdio: "pipe" },
    );
  } catch (err) {
    throw new Error(`openssl could not make a test certificate (${(err as Error).message}); install it with: apt-get install -y openssl`);
  }
  if (!fs.existsSync(cert)) throw new Error("openssl produced no certificate");
  return { cert, key };
}

/** A fetch over node:https that trusts the given CA (Node's fetch has no per-call CA option). */
export function httpsFetch(ca: string | Buffer): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    const body = init.body === undefined || init.body === null ? undefined : Buffer.from(init.body as string);
    return new Promise<Response>((resolve, reject) => {
      const req = https.request(url, { method: init.method ?? "GET", headers, ca }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
          const status = res.statusCode ?? 0;
          resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: h }));
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      init.signal?.addEventListener("abort", () => req.destroy(new Error("aborted")));
      req.end(body);
    });
  }) as typeof fetch;
}

/** The nginx binary on PATH or in the usual sbin directories. */
export function findNginx(): string | undefined {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"]) {
    const f = path.join(dir, "nginx");
    if (dir && fs.existsSync(f)) return f;
  }
  return undefined;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
