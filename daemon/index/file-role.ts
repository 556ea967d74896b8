/**
 * What a file is to its project, recorded at index time (meta `file_roles`, source files left out):
 * the project's own source, a copy of it made by a generator (an amalgamated single header), code of
 * another project bundled in, a benchmark, or a build script. Tests are told apart by the test
 * classifier (test-code.ts). Ranking demotes the copies (retriever.ts, ROLE_FACTOR); answers name
 * the role beside the file.
 */
export type FileRole = "source" | "generated-copy" | "vendored" | "bench" | "build-script";

/** Directories of code bundled from other projects (`vendor/` and `node_modules/` are never indexed at all). */
const VENDORED = /(^|\/)(third[_-]?party|3rd[_-]?party|deps|extern|external|vendored|bundled)\//i;
/** Benchmarks: a `bench/` or `benchmarks/` directory, or a file named for one (`parse_bench.go`, `bench_json.py`). */
const BENCH = /(^|\/)(benches|bench|benchmarks?)\/|(^|\/)bench(mark)?s?[_.-][^/]*$|[_.-]bench(mark)?s?\.\w+$/i;
/** Build scripts by name: Cargo's build.rs, setuptools, SCons, Zig, Rake, bundler configs, a `build.lua`. */
const BUILD_SCRIPT = /(^|\/)(build\.rs|setup\.py|conanfile\.py|SConstruct|SConscript|build\.zig|Rakefile|noxfile\.py|(gulpfile|gruntfile|webpack\.config|rollup\.config|vite\.config|esbuild\.config)\.[cm]?[jt]s|build\.(lua|sh|py|js|ts|ps1)|configure(\.py)?)$/i;
/** Names of generated copies: an amalgamation, a single-header distribution. */
const COPY_NAME = /(^|\/)single_include\/|amalgamat/i;
/** A header comment saying the file is made from others (comments that say "DO NOT EDIT" on their first lines are skipped as generated before this). */
const COPY_MARK = /amalgamat|single[- ]header (version|distribution)|generated (from|by)|auto-?generated|do not edit/i;

/** Whether a file's first lines (4 KB) say it was generated from other files. */
export function hasCopyMark(source: string): boolean {
  return COPY_MARK.test(source.slice(0, 4096));
}

/** A file's role by its path and header alone. */
export function roleByPath(path: string, copyMark: boolean): FileRole {
  if (COPY_NAME.test(path) || copyMark) return "generated-copy";
  if (VENDORED.test(path)) return "vendored";
  if (BENCH.test(path)) return "bench";
  if (BUILD_SCRIPT.test(path)) return "build-script";
  return "source";
}

/** A copy holds at least this share of another file's definitions, of at least two other files. */
const COPY_SHARE = 0.6;
const COPY_MIN_DEFS = 2;
const COMMON_NAME_FILES = 50;

/**
 * Roles of every file, the non-source ones only. Content tells an amalgamation the path does not:
 * a file that holds most of the definitions of two or more other files (by name and kind) copies them.
 */
export function fileRoles(files: { path: string; copyMark: boolean; defs: string[] }[]): Record<string, FileRole> {
  const roles: Record<string, FileRole> = {};
  for (const f of files) {
    const role = roleByPath(f.path, f.copyMark);
    if (role !== "source") roles[f.path] = role;
  }
  const holders = new Map<string, string[]>();
  const sizes = new Map<string, number>();
  for (const f of files) {
    const mine = new Set(f.defs);
    sizes.set(f.path, mine.size);
    for (const d of mine) {
      const l = holders.get(d);
      if (l) l.push(f.path);
      else holders.set(d, [f.path]);
    }
  }
  for (const f of files) {
    const size = sizes.get(f.path)!;
    if (roles[f.path] || size < COPY_MIN_DEFS * 2) continue;
    // Files whose definitions this one repeats, counted per other file.
    const shared = new Map<string, number>();
    for (const d of new Set(f.defs)) {
      const held = holders.get(d)!;
      if (held.length > COMMON_NAME_FILES) continue; // `main`, `new`: no evidence of a copy
      for (const p of held) if (p !== f.path) shared.set(p, (shared.get(p) ?? 0) + 1);
    }
    let copied = 0;
    for (const [other, n] of shared) {
      const total = sizes.get(other)!;
      if (total >= COPY_MIN_DEFS && total < size && n / total >= COPY_SHARE) copied++;
    }
    if (copied >= 2) roles[f.path] = "generated-copy";
  }
  return roles;
}
