import fs from "node:fs";
import path from "node:path";
import { leadsOutside } from "../../shared/paths.js";

/**
 * Module aliases of a TypeScript or JavaScript project, from the root's tsconfig.json or
 * jsconfig.json (following `extends`): `baseUrl` and `paths`, project-relative.
 */
export interface TsPaths {
  /** Directory non-relative specifiers are also looked up in ("" = the project root); undefined without `baseUrl`. */
  baseUrl?: string;
  /** `"@/*": ["src/*"]` as prefix "@/", suffix "", targets ["src/*"] (project-relative); `exact` for a pattern without `*`. */
  paths: { prefix: string; suffix: string; exact: boolean; targets: string[] }[];
}

interface CompilerOptions {
  baseUrl?: string;
  paths?: Record<string, string[]>;
}

/** The files that declare a TypeScript or JavaScript project's module aliases. */
export const TS_CONFIG_NAMES = ["tsconfig.json", "jsconfig.json"];

/**
 * The aliases each TypeScript or JavaScript file is compiled with: those of the nearest
 * tsconfig.json or jsconfig.json at or above its directory (a monorepo's packages have their own).
 */
export class TsConfigs {
  /** Project-relative directory → the directory of its nearest config ("" = root), or null. */
  private readonly configDirOf = new Map<string, string | null>();
  private readonly pathsOf = new Map<string, TsPaths | undefined>();

  constructor(private readonly root: string) {}

  forFile(file: string): TsPaths | undefined {
    const dir = this.nearest(path.posix.dirname(file));
    if (dir === null) return undefined;
    if (!this.pathsOf.has(dir)) this.pathsOf.set(dir, readTsPaths(this.root, dir));
    return this.pathsOf.get(dir);
  }

  /** The aliases of every config the TypeScript and JavaScript files among `files` use, by config directory: what a build resolves with. */
  summary(files: string[]): string {
    const used: Record<string, TsPaths | undefined> = {};
    for (const f of files) {
      if (!/\.(m|c)?[jt]sx?$/.test(f)) continue;
      const dir = this.nearest(path.posix.dirname(f));
      if (dir !== null && !(dir in used)) used[dir] = this.forFile(f);
    }
    return JSON.stringify(Object.fromEntries(Object.entries(used).filter(([, p]) => p !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))));
  }

  private nearest(dir: string): string | null {
    const key = dir === "." ? "" : dir;
    let hit = this.configDirOf.get(key);
    if (hit === undefined) {
      hit = TS_CONFIG_NAMES.some((n) => fs.existsSync(path.join(this.root, key, n))) ? key : key === "" ? null : this.nearest(path.posix.dirname(key));
      this.configDirOf.set(key, hit);
    }
    return hit;
  }
}

/** The aliases of the config in `dir` (project-relative, "" = root), or undefined when there are none (or no readable config). */
export function readTsPaths(root: string, dir = ""): TsPaths | undefined {
  for (const name of TS_CONFIG_NAMES) {
    const file = path.join(root, dir, name);
    if (!fs.existsSync(file)) continue;
    const found: { baseUrl?: string; paths?: Record<string, string[]>; pathsDir?: string } = {};
    collect(root, file, found, 0);
    if (!found.paths && found.baseUrl === undefined) return undefined;
    const pathsBase = found.baseUrl ?? found.pathsDir ?? "";
    const paths = Object.entries(found.paths ?? {}).flatMap(([pattern, targets]) => {
      if (!Array.isArray(targets) || (pattern.match(/\*/g) ?? []).length > 1) return [];
      const star = pattern.indexOf("*");
      return [
        {
          prefix: star < 0 ? pattern : pattern.slice(0, star),
          suffix: star < 0 ? "" : pattern.slice(star + 1),
          targets: targets.filter((t) => typeof t === "string").map((t) => path.posix.normalize(path.posix.join(pathsBase, t))),
          exact: star < 0,
        },
      ];
    });
    // Longest prefix first, as TypeScript matches.
    paths.sort((a, b) => b.prefix.length - a.prefix.length);
    return { baseUrl: found.baseUrl, paths };
  }
  return undefined;
}

/** Project-relative module bases a non-relative specifier may name (without extension), best first. */
export function aliasBases(spec: string, p: TsPaths | undefined): string[] {
  if (!p) return [];
  const out: string[] = [];
  for (const { prefix, suffix, exact, targets } of p.paths) {
    if (exact) {
      if (spec === prefix) out.push(...targets);
      continue;
    }
    if (spec.length < prefix.length + suffix.length || !spec.startsWith(prefix) || !spec.endsWith(suffix)) continue;
    const matched = spec.slice(prefix.length, spec.length - suffix.length);
    out.push(...targets.map((t) => t.replace("*", matched)));
    break;
  }
  if (p.baseUrl !== undefined) out.push(path.posix.normalize(path.posix.join(p.baseUrl, spec)));
  return out.filter((b) => !leadsOutside(b));
}

/** Reads one config and the ones it extends (relative paths only), the nearest settings winning. */
function collect(root: string, file: string, found: { baseUrl?: string; paths?: Record<string, string[]>; pathsDir?: string }, depth: number): void {
  if (depth > 5) return;
  let doc: { extends?: unknown; compilerOptions?: CompilerOptions };
  try {
    doc = JSON.parse(stripJsonComments(fs.readFileSync(file, "utf8")));
  } catch {
    return; // unreadable or not JSON: no aliases from it
  }
  const dir = path.posix.relative(root.split(path.sep).join("/"), path.dirname(file).split(path.sep).join("/"));
  const opts = doc.compilerOptions ?? {};
  if (found.baseUrl === undefined && typeof opts.baseUrl === "string") found.baseUrl = path.posix.normalize(path.posix.join(dir, opts.baseUrl)).replace(/^\.$/, "");
  if (!found.paths && opts.paths && typeof opts.paths === "object") {
    found.paths = opts.paths;
    found.pathsDir = dir;
  }
  for (const ext of typeof doc.extends === "string" ? [doc.extends] : Array.isArray(doc.extends) ? doc.extends : []) {
    if (typeof ext !== "string" || !ext.startsWith(".")) continue; // a package's config: not ours to read
    const next = path.resolve(path.dirname(file), ext.endsWith(".json") ? ext : `${ext}.json`);
    if (next.startsWith(root + path.sep)) collect(root, next, found, depth + 1);
  }
}

/** tsconfig files are JSON with comments and trailing commas: both removed, strings untouched. */
export function stripJsonComments(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      out += text.slice(start, i + 1);
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === "," && /^\s*(\/\/[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*[}\]]/.test(text.slice(i + 1, i + 400))) {
      // a trailing comma: dropped
    } else out += c;
  }
  return out;
}
