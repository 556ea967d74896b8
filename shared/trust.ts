import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CodememError } from "./errors.js";
import { userDir, writeFileAtomic } from "./paths.js";

/**
 * Workspace trust, as direnv's `allow`: a project file that can point credentials at a host
 * (codemem.toml, .codemem/store.json) is honoured only while its exact content is the one the user
 * trusted. The record lives in the user's config dir, one small file per trusted file, so
 * concurrent builds of different projects never write the same file.
 */
type Env = Record<string, string | undefined>;

/** `$XDG_CONFIG_HOME/codemem/trusted` (default `~/.config/codemem/trusted`); undefined without HOME. */
export function trustDir(env: Env): string | undefined {
  const base = userDir("config", env);
  return base ? path.join(base, "trusted") : undefined;
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Where the trust record of one file (by absolute path) lives. */
export function trustRecordPath(file: string, env: Env): string | undefined {
  const dir = trustDir(env);
  return dir ? path.join(dir, `${sha256(file).slice(0, 32)}.json`) : undefined;
}

/** Whether `content` is what the user trusted for `file`. */
export function isTrusted(file: string, content: string | Buffer, env: Env): boolean {
  const rec = trustRecordPath(file, env);
  if (!rec) return false;
  try {
    const r = JSON.parse(fs.readFileSync(rec, "utf8")) as { file?: unknown; sha256?: unknown };
    return r.file === file && r.sha256 === sha256(content);
  } catch {
    return false; // none, or unreadable: not trusted
  }
}

/** Records `content` of `file` as trusted (no write when already recorded). */
export function trustContent(file: string, content: string | Buffer, env: Env): string {
  const rec = trustRecordPath(file, env);
  if (!rec) throw new CodememError("CONFIG_INVALID", `Cannot record trust for ${file}: neither XDG_CONFIG_HOME nor HOME is set; set one of them.`, { file });
  if (isTrusted(file, content, env)) return rec;
  fs.mkdirSync(path.dirname(rec), { recursive: true, mode: 0o700 });
  writeFileAtomic(rec, JSON.stringify({ file, sha256: sha256(content), trusted_at: new Date().toISOString() }) + "\n");
  return rec;
}

/** Forgets the trust of `file`; true when there was a record. */
export function revokeTrust(file: string, env: Env): boolean {
  const rec = trustRecordPath(file, env);
  if (!rec || !fs.existsSync(rec)) return false;
  fs.rmSync(rec, { force: true });
  return true;
}
