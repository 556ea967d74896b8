import path from "node:path";
import type { ProjectView } from "./languages/language.js";
import type { TsPaths } from "./ts-paths.js";

/** Separators of declared module names: Python/Java/Kotlin dots, PHP backslashes, Rust/C++ `::`, paths. */
const DECL_SEPARATORS = /\.|\\|::|\//;

/**
 * The project's indexed files, as import resolution sees them: paths, directories, path suffixes and
 * declared module names, per language family. Every answer it gives through a view is recorded as a
 * dependency key; `add` and `remove` return the keys whose answers they changed, so the resolver can
 * re-resolve exactly the files that asked.
 */
export class ProjectFiles {
  private readonly files = new Map<string, { family: string; packageName?: string }>();
  private readonly byDir = new Map<string, string[]>();
  private readonly bySuffix = new Map<string, Set<string>>();
  private readonly dirBySuffix = new Map<string, Set<string>>();
  private readonly byDecl = new Map<string, Set<string>>();
  private readonly byDeclSuffix = new Map<string, Set<string>>();

  constructor(private readonly aliases: (file: string) => TsPaths | undefined = () => undefined) {}

  /** Registers a file; answers the dependency keys whose answers changed. */
  add(file: string, family: string, packageName: string | undefined): string[] {
    this.files.set(file, { family, packageName });
    const dir = dirOf(file);
    const list = this.byDir.get(`${family}\0${dir}`);
    const firstInDir = !list;
    if (list) list.splice(sortedIndex(list, file), 0, file);
    else this.byDir.set(`${family}\0${dir}`, [file]);
    for (const s of pathSuffixes(file)) addTo(this.bySuffix, `${family}\0${s}`, file);
    if (firstInDir) for (const s of pathSuffixes(dir)) addTo(this.dirBySuffix, `${family}\0${s}`, dir);
    if (packageName) {
      addTo(this.byDecl, `${family}\0${packageName}`, file);
      for (const s of declSuffixes(packageName)) addTo(this.byDeclSuffix, `${family}\0${s}`, file);
    }
    return fileKeys(file, family, packageName, firstInDir);
  }

  /** Unregisters a file; answers the dependency keys whose answers changed. */
  remove(file: string): string[] {
    const f = this.files.get(file);
    if (!f) return [];
    this.files.delete(file);
    const { family, packageName } = f;
    const dir = dirOf(file);
    const list = this.byDir.get(`${family}\0${dir}`)!;
    list.splice(list.indexOf(file), 1);
    const lastInDir = list.length === 0;
    if (lastInDir) this.byDir.delete(`${family}\0${dir}`);
    for (const s of pathSuffixes(file)) removeFrom(this.bySuffix, `${family}\0${s}`, file);
    if (lastInDir) for (const s of pathSuffixes(dir)) removeFrom(this.dirBySuffix, `${family}\0${s}`, dir);
    if (packageName) {
      removeFrom(this.byDecl, `${family}\0${packageName}`, file);
      for (const s of declSuffixes(packageName)) removeFrom(this.byDeclSuffix, `${family}\0${s}`, file);
    }
    return fileKeys(file, family, packageName, lastInDir);
  }

  /** Files of a family directly in a directory, sorted (not recorded: for the resolver's own package scopes). */
  filesIn(family: string, dir: string): readonly string[] {
    return this.byDir.get(`${family}\0${dir}`) ?? [];
  }

  /** The questions of one language family, each recorded through `record` before it is answered. */
  view(family: string, record: (key: string) => void): ProjectView {
    const sorted = (s: Set<string> | undefined) => (s ? [...s].sort() : []);
    return {
      has: (p) => {
        record(`ph:${p}`);
        return this.files.get(p)?.family === family;
      },
      filesIn: (dir) => {
        record(`pd:${family}\0${dir}`);
        return [...this.filesIn(family, dir)];
      },
      filesEndingWith: (suffix) => {
        record(`ps:${family}\0${suffix}`);
        return sorted(this.bySuffix.get(`${family}\0${suffix}`));
      },
      dirsEndingWith: (suffix) => {
        record(`pD:${family}\0${suffix}`);
        return sorted(this.dirBySuffix.get(`${family}\0${suffix}`));
      },
      declaring: (name, opts) => {
        if (!name) return [];
        record(`${opts?.suffix ? "pC" : "pc"}:${family}\0${name}`);
        return sorted((opts?.suffix ? this.byDeclSuffix : this.byDecl).get(`${family}\0${name}`));
      },
      // Aliases change only with a tsconfig edit, which re-resolves every file.
      pathAliases: (file) => this.aliases(file),
    };
  }
}

/** Keys whose answers change when `file` appears or disappears. */
function fileKeys(file: string, family: string, packageName: string | undefined, dirChanged: boolean): string[] {
  const dir = dirOf(file);
  const keys = [`ph:${file}`, `pd:${family}\0${dir}`, ...pathSuffixes(file).map((s) => `ps:${family}\0${s}`)];
  if (dirChanged) keys.push(...pathSuffixes(dir).map((s) => `pD:${family}\0${s}`));
  if (packageName) keys.push(`pc:${family}\0${packageName}`, ...declSuffixes(packageName).map((s) => `pC:${family}\0${s}`));
  return keys;
}

function dirOf(file: string): string {
  const d = path.posix.dirname(file);
  return d === "." ? "" : d;
}

/** `a/b/c` → `a/b/c`, `b/c`, `c`. */
function pathSuffixes(p: string): string[] {
  if (!p) return [];
  const parts = p.split("/");
  return parts.map((_, i) => parts.slice(i).join("/"));
}

/** `a.b.c` → `a.b.c`, `b.c`, `c` (with the name's own separators). */
function declSuffixes(name: string): string[] {
  const out = [name];
  let rest = name;
  for (let m = DECL_SEPARATORS.exec(rest); m; m = DECL_SEPARATORS.exec(rest)) {
    rest = rest.slice(m.index + m[0].length);
    if (rest) out.push(rest);
  }
  return out;
}

function addTo(m: Map<string, Set<string>>, key: string, value: string): void {
  const s = m.get(key);
  if (s) s.add(value);
  else m.set(key, new Set([value]));
}

function removeFrom(m: Map<string, Set<string>>, key: string, value: string): void {
  const s = m.get(key);
  if (!s) return;
  s.delete(value);
  if (s.size === 0) m.delete(key);
}

function sortedIndex(list: string[], v: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
