import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { CodememError } from "../shared/errors.js";

/** A group's id: numeric as given, or looked up by name in /etc/group. */
export function groupId(group: string): number {
  if (/^\d+$/.test(group)) return Number(group);
  let text = "";
  try {
    text = fs.readFileSync("/etc/group", "utf8");
  } catch {
    // no group file: only numeric ids then
  }
  for (const line of text.split("\n")) {
    const [name, , gid] = line.split(":");
    if (name === group && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  throw new CodememError("CONFIG_INVALID", `--socket-group "${group}" is not a group in /etc/group; pass an existing group name or its numeric id.`, { value: group });
}

/** Whether something answers on the socket file. */
function answering(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(file);
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

/**
 * Listens on a Unix socket only its owner may open (mode 0600), or its owner and `group` (0660):
 * the operating system, not a header, then decides who reaches the server. The socket is created
 * under a umask that leaves it owner-only from the first instant; a stale socket file is replaced.
 */
export async function listenUnix(server: net.Server, file: string, group?: string): Promise<void> {
  if (!path.isAbsolute(file)) throw new CodememError("PATH_RELATIVE", `--socket "${file}" is relative; pass an absolute path (e.g. /run/codemem/mcp.sock).`, { value: file });
  const gid = group === undefined ? undefined : groupId(group);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st && !st.isSocket()) throw new CodememError("CONFIG_INVALID", `--socket ${file} exists and is not a socket; remove it or choose another path.`, { file });
  if (st) {
    if (await answering(file)) throw new CodememError("INVALID_ARGUMENT", `another server listens on ${file}; stop it or choose another --socket.`, { file });
    fs.unlinkSync(file);
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new CodememError("INVALID_ARGUMENT", `cannot listen on ${file} (${err.code ?? err.message}); check that its directory exists and is yours, and that the path is under 108 bytes.`, { file })),
    );
    // The bind happens inside listen() for a path, so the umask covers exactly that file's creation.
    const old = process.umask(0o177);
    try {
      server.listen(file, () => resolve());
    } finally {
      process.umask(old);
    }
  });
  if (gid !== undefined) fs.chownSync(file, -1, gid);
  fs.chmodSync(file, gid === undefined ? 0o600 : 0o660);
}
