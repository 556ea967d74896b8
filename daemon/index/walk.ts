import fs from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import type { ResolvedConfig } from "../../shared/config.js";
import { globRegExp } from "../../shared/linear-regex.js";
import { CONFIG_FILE_NAME, leadsOutside } from "../../shared/paths.js";
import { isScriptName, languageForPath, languageOfScript, unsupportedExtension } from "./languages/registry.js";
import type { LanguageSpec } from "./languages/language.js";
import { TS_CONFIG_NAMES } from "./ts-paths.js";

/** Files whose edit can change what is indexed or how it resolves: a build that sees one walks the tree. */
export function isSettingsPath(rel: string): boolean {
  const base = path.posix.basename(rel);
  return rel === CONFIG_FILE_NAME || base === ".gitignore" || TS_CONFIG_NAMES.includes(base);
}

/** Directory names never indexed, wherever they appear. */
export const ALWAYS_EXCLUDED_DIRS = new Set([
  ".git", ".hg", ".svn", "node_modules", "bower_components", "vendor", "__pycache__", ".venv", "venv",
  ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".next", ".nuxt", ".svelte-kit",
  ".turbo", ".cache", ".gradle", "coverage", "site-packages", "codegraph-out", ".codemem", ".idea",
]);
/**
 * Names of build output directories: at the project root or next to a package manifest, one is left
 * out when its content says it is output (buildOutputOf); one of real source (luarocks' `build/` of
 * Lua build backends, a `bin/` of scripts) is indexed.
 */
export const BUILD_OUTPUT_DIRS = new Set(["dist", "build", "out", "target", ".build", "bin", "obj", "lib-cov"]);
const MANIFESTS = ["package.json", "Cargo.toml", "pyproject.toml", "setup.py", "pom.xml", "build.gradle", "go.mod", "tsconfig.json"];
/** Files a build system leaves in its output (CMake, Cargo's CACHEDIR.TAG, Ninja, autoconf, MSBuild, tsc). */
const BUILD_MARKERS = new Set(["CMakeCache.txt", "CMakeFiles", "CACHEDIR.TAG", ".rustc_info.json", "build.ninja", ".ninja_log", "config.status", "config.log", "tsconfig.tsbuildinfo"]);
/** Files only builds write: objects, libraries, binaries, compiled classes and bytecode, source maps, emitted declarations, bundles (`bundle.js`, `app.min.js`). */
const BUILD_ARTIFACT = /\.(o|obj|a|lib|so|dylib|dll|exe|pdb|class|jar|war|pyc|pyo|rlib|rmeta|wasm|map|tsbuildinfo|d\.ts)$|(^|\.)(min|bundle)\.js$/i;
/** Entries of an output directory read before deciding: a large tree is decided by its first ones. */
const BUILD_SCAN_ENTRIES = 2000;

/** `too_deep`: indexed, but its definitions nested deeper than MAX_DEF_DEPTH are left out. `build_output`: a directory. */
export type SkipReason = "excluded" | "gitignored" | "too_large" | "binary" | "generated" | "minified" | "unreadable" | "symlink_outside" | "too_deep" | "build_output";

/**
 * Why a directory is build output, from what it holds (a build marker, an artifact, no source file
 * at all), or undefined when it holds source and no sign of a build. Remembered by the directory's
 * mtime: the watcher asks for every path under it.
 */
export function buildOutputOf(abs: string): string | undefined {
  // Beside a tsconfig.json, JavaScript is what tsc emits.
  const emitsJs = fs.existsSync(path.join(path.dirname(abs), "tsconfig.json"));
  let mtime: number;
  try {
    mtime = fs.statSync(abs).mtimeMs;
  } catch {
    return undefined;
  }
  const known = buildOutputSeen.get(abs);
  if (known && known.mtime === mtime && known.emitsJs === emitsJs) return known.reason;
  const reason = inspectOutputDir(abs, emitsJs);
  buildOutputSeen.set(abs, { mtime, emitsJs, reason });
  return reason;
}
const buildOutputSeen = new Map<string, { mtime: number; emitsJs: boolean; reason: string | undefined }>();

function inspectOutputDir(root: string, emitsJs: boolean): string | undefined {
  const queue = [root];
  let seen = 0;
  let source = false;
  while (queue.length && seen < BUILD_SCAN_ENTRIES) {
    const dir = queue.shift()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > BUILD_SCAN_ENTRIES) break;
      if (BUILD_MARKERS.has(e.name)) return `build marker ${e.name}`;
      if (e.isDirectory()) {
        if (!ALWAYS_EXCLUDED_DIRS.has(e.name)) queue.push(path.join(dir, e.name));
      } else if (BUILD_ARTIFACT.test(e.name) || (emitsJs && /\.[cm]?js$/.test(e.name))) return `build artifact ${path.relative(root, path.join(dir, e.name)).split(path.sep).join("/")}`;
      else if (!source && e.isFile()) source = !!languageForPath(e.name) || (isScriptName(e.name) && !!languageOfScript(path.join(dir, e.name)));
    }
  }
  return source ? undefined : "no source files";
}

export interface Candidate {
  path: string; // project-relative POSIX
  abs: string;
  size: number;
  mtimeMs: number;
  language: LanguageSpec;
}

export interface Skipped {
  path: string;
  reason: SkipReason;
  detail?: string;
}

export interface Discovery {
  files: Candidate[];
  skipped: Skipped[];
  /** Source files of languages no registered language reads, by extension (neither excluded nor ignored). */
  unsupported: Record<string, number>;
}

/**
 * Compiles `[build] exclude_patterns`: bare names match a file or directory anywhere; globs match
 * paths (a glob without `/` the base name). Globs run in linear time (globRegExp): a repository's
 * codemem.toml must not hold the walk.
 */
export function compileExcludes(patterns: string[]): (rel: string, isDir: boolean) => boolean {
  const names = new Set<string>();
  const globs: ((p: string) => boolean)[] = [];
  for (const raw of patterns) {
    const p = raw.trim().replace(/^\.\//, "").replace(/\/+$/, "");
    if (!p) continue;
    if (!/[*?[\]{}!]/.test(p) && !p.includes("/")) names.add(p);
    else {
      const re = globRegExp(p);
      globs.push(p.includes("/") ? (rel) => re.test(rel) : (rel) => re.test(rel.slice(rel.lastIndexOf("/") + 1)));
      if (!p.endsWith("/**")) {
        const under = globRegExp(`${p}/**`);
        globs.push((rel) => under.test(rel));
      }
    }
  }
  return (rel, _isDir) => {
    const base = rel.slice(rel.lastIndexOf("/") + 1);
    if (names.has(base) || names.has(rel)) return true;
    return globs.some((g) => g(rel));
  };
}

/** A reusable filter for "would this path be indexed", shared by build and the watcher. */
export function makePathFilter(cfg: ResolvedConfig) {
  const excluded = compileExcludes(cfg.build.excludePatterns);
  const filter = {
    /** Left out by name: always-excluded directories and `exclude_patterns`. */
    dirNamedExcluded(rel: string): boolean {
      return ALWAYS_EXCLUDED_DIRS.has(rel.slice(rel.lastIndexOf("/") + 1)) || excluded(rel, true);
    },
    /** Why a directory named as build output (at the root, or beside a manifest) is build output by its content. */
    buildOutput(rel: string, parentAbs: string): string | undefined {
      const base = rel.slice(rel.lastIndexOf("/") + 1);
      if (!BUILD_OUTPUT_DIRS.has(base) || (rel.includes("/") && !MANIFESTS.some((m) => fs.existsSync(path.join(parentAbs, m))))) return undefined;
      return buildOutputOf(path.join(parentAbs, base));
    },
    dirExcluded(rel: string, parentAbs: string): boolean {
      return filter.dirNamedExcluded(rel) || filter.buildOutput(rel, parentAbs) !== undefined;
    },
    fileExcluded: (rel: string) => excluded(rel, false),
  };
  return filter;
}

/** Walks the project and lists the source files to index, with the reason for each file left out. */
export function discover(cfg: ResolvedConfig): Discovery {
  const root = cfg.root;
  const filter = makePathFilter(cfg);
  const files: Candidate[] = [];
  const skipped: Skipped[] = [];
  const unsupported: Record<string, number> = {};
  const rootIgnore = loadGitignore(root, "");

  const walk = (dirAbs: string, dirRel: string, ignores: { base: string; ig: Ignore }[]) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dirAbs, { withFileTypes: true });
    } catch (err) {
      skipped.push({ path: dirRel || ".", reason: "unreadable", detail: (err as NodeJS.ErrnoException).code });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const rel = dirRel ? `${dirRel}/${e.name}` : e.name;
      const abs = path.join(dirAbs, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        // Follow file links that stay inside the project; never follow directory links (loops).
        try {
          const st = fs.statSync(abs);
          const real = fs.realpathSync(abs);
          if (st.isDirectory()) continue;
          if (leadsOutside(path.relative(root, real))) {
            if (languageForPath(e.name)) skipped.push({ path: rel, reason: "symlink_outside" });
            continue;
          }
          isFile = st.isFile();
          isDir = false;
        } catch {
          continue; // dangling link
        }
      }
      if (isDir) {
        if (filter.dirNamedExcluded(rel)) continue;
        if (isIgnored(ignores, rel, true)) continue;
        const output = filter.buildOutput(rel, dirAbs);
        if (output) {
          skipped.push({ path: rel, reason: "build_output", detail: output });
          continue;
        }
        const own = loadGitignore(abs, rel);
        walk(abs, rel, own ? [...ignores, own] : ignores);
      } else if (isFile) {
        let language = languageForPath(e.name);
        if (!language && isScriptName(e.name)) {
          // Read only once the rules keep it; an excluded file without an extension is no known source file.
          if (filter.fileExcluded(rel) || isIgnored(ignores, rel, false)) continue;
          language = languageOfScript(abs);
        }
        if (!language) {
          const ext = unsupportedExtension(e.name);
          if (ext && !filter.fileExcluded(rel) && !isIgnored(ignores, rel, false)) unsupported[ext] = (unsupported[ext] ?? 0) + 1;
          continue;
        }
        if (filter.fileExcluded(rel)) {
          skipped.push({ path: rel, reason: "excluded" });
          continue;
        }
        if (isIgnored(ignores, rel, false)) {
          skipped.push({ path: rel, reason: "gitignored" });
          continue;
        }
        let st: fs.Stats;
        try {
          st = fs.statSync(abs);
        } catch (err) {
          skipped.push({ path: rel, reason: "unreadable", detail: (err as NodeJS.ErrnoException).code });
          continue;
        }
        if (st.size > cfg.build.maxFileBytes) {
          skipped.push({ path: rel, reason: "too_large", detail: `${st.size} bytes > ${cfg.build.maxFileBytes}` });
          continue;
        }
        files.push({ path: rel, abs, size: st.size, mtimeMs: st.mtimeMs, language });
      }
    }
  };
  walk(root, "", rootIgnore ? [rootIgnore] : []);
  return { files, skipped, unsupported };
}

/**
 * One path by the rules of `discover`: a source file to index, a file left out (with the reason),
 * or nothing to index (gone, not a source file, in an excluded directory). For builds that know
 * which files changed (a watch batch) and need not walk the tree.
 */
export function checkFile(cfg: ResolvedConfig, rel: string): { file: Candidate } | { skipped: Skipped } | undefined {
  const base = rel.slice(rel.lastIndexOf("/") + 1);
  let language = languageForPath(base);
  const script = !language && isScriptName(base);
  if (!language && !script) return undefined;
  const filter = makePathFilter(cfg);
  const parts = rel.split("/");
  const ignores: { base: string; ig: Ignore }[] = [];
  for (let i = 0; i < parts.length; i++) {
    const dirRel = parts.slice(0, i).join("/");
    const dirAbs = path.join(cfg.root, dirRel);
    if (i > 0 && (filter.dirExcluded(dirRel, path.dirname(dirAbs)) || isIgnored(ignores, dirRel, true))) return undefined;
    const own = loadGitignore(dirAbs, dirRel);
    if (own) ignores.push(own);
  }
  if (filter.fileExcluded(rel)) return script ? undefined : { skipped: { path: rel, reason: "excluded" } };
  if (isIgnored(ignores, rel, false)) return script ? undefined : { skipped: { path: rel, reason: "gitignored" } };
  const abs = path.join(cfg.root, rel);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(abs);
    if (st.isSymbolicLink()) {
      if (fs.statSync(abs).isDirectory()) return undefined;
      if (leadsOutside(path.relative(cfg.root, fs.realpathSync(abs)))) return { skipped: { path: rel, reason: "symlink_outside" } };
      st = fs.statSync(abs);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? undefined : { skipped: { path: rel, reason: "unreadable", detail: code } };
  }
  if (!st.isFile()) return undefined;
  language ??= languageOfScript(abs);
  if (!language) return undefined;
  if (st.size > cfg.build.maxFileBytes) return { skipped: { path: rel, reason: "too_large", detail: `${st.size} bytes > ${cfg.build.maxFileBytes}` } };
  return { file: { path: rel, abs, size: st.size, mtimeMs: st.mtimeMs, language } };
}

/** The .gitignore of one directory, as a matcher relative to that directory. */
export function loadGitignore(dirAbs: string, dirRel: string): { base: string; ig: Ignore } | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dirAbs, ".gitignore"), "utf8");
  } catch {
    return undefined;
  }
  return { base: dirRel, ig: ignore().add(text) };
}

/** Whether any .gitignore on the way down to `rel` ignores it. */
export function isIgnored(stack: { base: string; ig: Ignore }[], rel: string, isDir: boolean): boolean {
  for (const { base, ig } of stack) {
    const sub = base ? rel.slice(base.length + 1) : rel;
    if (ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

const GENERATED_MARKERS = /@generated|DO NOT EDIT|auto-?generated|generated by (protoc|the protocol buffer compiler|swagger|openapi|thrift|sqlc|mockgen|stringer)/i;
const GENERATED_NAMES = /(\.pb\.go|_pb2\.pyi?|_pb2_grpc\.py|\.pb\.(ts|js)|\.generated\.\w+|\.g\.dart|_generated\.go|\.min\.js|\.bundle\.js)$/;

/** Decides from the content whether a file is worth indexing; returns the reason when it is not. */
export function inspectContent(rel: string, buf: Buffer): { reason: SkipReason; detail: string } | undefined {
  const head = buf.subarray(0, 8192);
  if (head.includes(0)) return { reason: "binary", detail: "contains NUL bytes" };
  if (GENERATED_NAMES.test(rel)) return { reason: rel.endsWith(".min.js") ? "minified" : "generated", detail: "file name" };
  const text = head.toString("utf8");
  const firstLines = text.split("\n", 6).join("\n");
  if (GENERATED_MARKERS.test(firstLines)) return { reason: "generated", detail: "generated-code marker in header" };
  if (buf.length > 2048) {
    let lines = 1;
    let longest = 0;
    let cur = 0;
    for (let i = 0; i < buf.length; i++) {
      if (buf[i] === 10) {
        lines++;
        if (cur > longest) longest = cur;
        cur = 0;
      } else cur++;
    }
    if (cur > longest) longest = cur;
    if (buf.length / lines > 300 || longest > 5000) return { reason: "minified", detail: `average line ${Math.round(buf.length / lines)} chars, longest ${longest}` };
  }
  return undefined;
}
