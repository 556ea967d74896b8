import { isTestPath, type TestClassifier } from "./test-code.js";

/**
 * What a file is to its project, recorded at index time (meta `file_roles`, source files left out):
 * the project's own source, a copy of it made by a generator (an amalgamated single header), code of
 * another project bundled in (or the platform's types copied for older targets), a benchmark, a
 * build script, or an example of its use. Tests are told apart by the test classifier
 * (test-code.ts). Ranking demotes the copies (retriever.ts, ROLE_FACTOR); answers name the role
 * beside the file.
 */
export type FileRole = "source" | "generated-copy" | "vendored" | "bench" | "build-script" | "example";

/**
 * Directories of code bundled from other projects (`vendor/` and `node_modules/` are never indexed at all),
 * and a release of one unpacked under its versioned name (yaml-cpp's `test/gtest-1.11.0/`, `zlib-1.3.1/`).
 */
const VENDORED = /(^|\/)(third[_-]?party|3rd[_-]?party|deps|extern|external|vendored|_vendor|bundled|[A-Za-z][\w+]*-v?\d+(\.\d+)+)\//i;
/**
 * Python libraries bundled into a package's `packages/` directory (requests' `requests/packages/urllib3/`
 * and `requests/packages/chardet/`): a directory inside it holds another project. The package's own
 * `packages/__init__.py` (the import shim) is its source; a monorepo's `packages/` sits at the root.
 */
const VENDORED_PY = /[^/]+\/packages\/[^/]+\/(.+\/)?[^/]+\.pyi?$/;
/**
 * The scripts and styles of a documentation site (jazzy's `docs/js/`, Sphinx's `_static/`, mkdocs'
 * `assets/`) and a Dash docset: the generator's theme and the libraries it ships (jQuery, lunr,
 * typeahead), not the project's code.
 */
const DOC_SITE = /(^|\/)(docs?|documentation|site|_site)\/(.+\/)?(js|javascripts?|css|assets|_static|static)\/|\.docset\//i;
/**
 * Code that shows the project in use rather than being it: example programs and demo apps
 * (`examples/`, Alamofire's `Example/`, `samples/`, `demo/`), documentation's snippets (Polly's
 * `src/Snippets/`, `docs/`). Not a singular `doc/`: Go's `go/doc` and `cmd/doc` are packages.
 */
const EXAMPLE = /(^|\/)(examples?|samples?|demos?|snippets|docs|documentation)\//i;
/** Benchmarks: a `bench/` or `benchmarks/` directory, or a file named for one (`parse_bench.go`, `bench_json.py`). */
const BENCH = /(^|\/)(benches|bench|benchmarks?)\/|(^|\/)bench(mark)?s?[_.-][^/]*$|[_.-]bench(mark)?s?\.\w+$/i;
/**
 * Build scripts by name: Cargo's build.rs, setuptools, SCons, Zig, Rake, Gradle's Kotlin scripts
 * (`build.gradle.kts`, `settings.gradle.kts`, convention plugins `*.gradle.kts`), SwiftPM's
 * `Package.swift`, Mix's `mix.exs`, Mill's `build.sc`, bundler and JavaScript tool configs, a `build.lua`,
 * and .NET's `AssemblyInfo.cs` (the assembly's attributes: version, friends, forwarded types; what an SDK
 * project's file generates).
 */
const BUILD_SCRIPT = /(^|\/)((Global|Shared)?AssemblyInfo\.cs|build\.rs|setup\.py|conanfile\.py|SConstruct|SConscript|build\.zig|Rakefile|noxfile\.py|[^/]+\.gradle\.kts|Package(@swift-[\d.]+)?\.swift|mix\.exs|build\.sc|(gulpfile|gruntfile|(webpack|rollup|vite|esbuild|jest|babel|karma|eslint|prettier|postcss|tailwind|tsup|vitest|playwright|rspack)\.config)\.[cm]?[jt]s|build\.(lua|sh|py|js|ts|ps1)|configure(\.py)?)$/i;
/**
 * Hidden files and directories (`.travis.sh`, `.github/scripts/`, `.circleci/`): continuous integration
 * and tooling, never what the project ships.
 */
const HIDDEN = /(^|\/)\.[^/.][^/]*(\/|$)/;
/** Names of generated copies: an amalgamation, a single-header distribution. */
const COPY_NAME = /(^|\/)single_include\/|amalgamat/i;
/** A header comment saying the file is made from others (comments that say "DO NOT EDIT" on their first lines are skipped as generated before this). */
const COPY_MARK = /amalgamat|single[- ]header (version|distribution)|generated (from|by)|auto-?generated|do not edit/i;

/** A comment line starting a licence header. */
const LICENCE = /^[ \t]*(\/\/|\/?\*|#|--)[ \t]*Copyright\b/gim;
/** Licence headers this many lines after the previous one start another file's text. */
const LICENCE_GAP = 50;
/**
 * Three files' licence headers make a file joined from others (fmt's fused `gmock-gtest-all.cc`,
 * Catch's single `catch.hpp`); two may be a file with one borrowed part (jq's `jv_dtoa.c`, its own).
 */
const JOINED_LICENCES = 3;

/** Whether a file's first lines (4 KB) say it was generated from other files, or its licence headers show it joins three or more. */
export function hasCopyMark(source: string): boolean {
  return COPY_MARK.test(source.slice(0, 4096)) || joinedLicences(source) >= JOINED_LICENCES;
}

/** How many files' licence headers a source holds: Copyright comment lines LICENCE_GAP lines or more after the previous one. */
function joinedLicences(source: string): number {
  let headers = 0;
  let lastLine = -Infinity;
  let line = 0;
  let at = 0;
  for (const m of source.matchAll(LICENCE)) {
    for (let i = source.indexOf("\n", at); i !== -1 && i < m.index; i = source.indexOf("\n", i + 1)) line++;
    at = m.index;
    if (line - lastLine >= LICENCE_GAP) headers++;
    lastLine = line;
  }
  return headers;
}

/**
 * The platform's own namespaces, per language: a project's file declared in one copies the platform's
 * types for targets that lack them (Polly's `src/LegacySupport/NullableAttributes.cs`, `namespace
 * System.Diagnostics.CodeAnalysis`: a polyfill of .NET's attributes for older frameworks). The
 * platform's own sources sit under a directory of the namespace's name (dotnet/runtime's
 * `System.Private.CoreLib/src/System/`): no copy there. Java's `java.*` and Kotlin's `kotlin.*` are
 * forbidden to other code.
 */
const PLATFORM_NAMESPACE: Record<string, { namespace: RegExp; home: RegExp }> = {
  csharp: { namespace: /^System(\.|$)/, home: /(^|\/)System(\.[^/]*)?\// },
};

/** Whether a file of `language` declared in `namespace` is a polyfill of the platform's types (PLATFORM_NAMESPACE). */
export function isPlatformCopy(path: string, language: string, namespace: string | undefined): boolean {
  const p = PLATFORM_NAMESPACE[language];
  return !!p && !!namespace && p.namespace.test(namespace) && !p.home.test(path);
}

/** A file's role by its path and header alone (`platformCopy`: isPlatformCopy). */
export function roleByPath(path: string, copyMark: boolean, platformCopy = false): FileRole {
  if (COPY_NAME.test(path) || copyMark) return "generated-copy";
  if (VENDORED.test(path) || VENDORED_PY.test(path) || DOC_SITE.test(path) || platformCopy) return "vendored";
  if (BENCH.test(path)) return "bench";
  if (BUILD_SCRIPT.test(path) || HIDDEN.test(path)) return "build-script";
  if (EXAMPLE.test(path)) return "example";
  return "source";
}

/** A copy holds at least this share of another file's definitions, of at least two other files. */
const COPY_SHARE = 0.6;
const COPY_MIN_DEFS = 2;
const COMMON_NAME_FILES = 50;
/** The shell's language id. */
const SHELL = "bash";
/**
 * Shell scripts are a project's tooling (builds, CI, releases: jq's `compile-ios.sh`, a `script/test`)
 * when another language's source files outnumber them this many times; in a project mostly of shell
 * (nvm, bats) they are its source.
 */
const SHELL_MINORITY = 2;

/** What a file's role is judged from: its path, its header's mark, its namespace, its definitions by kind and qualified name. */
export interface RoleFacts {
  path: string;
  copyMark: boolean;
  /** Declared in the platform's namespace (isPlatformCopy). */
  platformCopy?: boolean;
  defs: string[];
  /** The file's language (the registry's id), when known. */
  language?: string;
}

/** A file's role facts from its extract. */
export function roleFacts(ex: { path: string; language: string; packageName?: string; copyMark?: boolean; defs: { kind: string; qualifiedName: string }[] }): RoleFacts {
  const platformCopy = isPlatformCopy(ex.path, ex.language, ex.packageName);
  return { path: ex.path, copyMark: !!ex.copyMark, ...(platformCopy ? { platformCopy } : {}), defs: ex.defs.map((d) => `${d.kind}:${d.qualifiedName}`), language: ex.language };
}

/**
 * Roles of every file, the non-source ones only. Content tells an amalgamation the path does not:
 * a file that holds most of the definitions of two or more other files (by name and kind) copies them.
 */
export function fileRoles(files: RoleFacts[], isTest: TestClassifier = isTestPath): Record<string, FileRole> {
  return new FileRoles(files, isTest).roles();
}

/**
 * File roles kept up to date file by file (a build's warm state): an edit judges again only the
 * files that share a definition with the files it changed, as a definition held by more than
 * COMMON_NAME_FILES files is no evidence either way; the result equals fileRoles of the whole tree.
 */
export class FileRoles {
  private readonly byPath = new Map<string, FileRole>();
  private readonly defsOf = new Map<string, Set<string>>();
  private readonly holders = new Map<string, Set<string>>();
  private readonly judged = new Map<string, FileRole>();
  /** Languages of the files, and how many source files (by path, not tests) each language has. */
  private readonly languageOf = new Map<string, string>();
  private readonly sources = new Map<string, number>();
  /** Files judged by the last update (or the construction): what it cost. */
  lastJudged = 0;

  /**
   * `isTest`: test code is never what a file copies. A test that stubs two functions of a shell
   * library (nvm's tests redefine `nvm_download`, `nvm_has`) holds a subset of its definitions: the
   * library is what the stubs stand in for, not a copy of them.
   */
  constructor(files: RoleFacts[], readonly isTest: TestClassifier = isTestPath) {
    this.update(files, []);
  }

  /** Takes the facts of changed (or added) files and the removal of others. */
  update(facts: RoleFacts[], removed: string[]): void {
    // One version of a file: the last given.
    const changed = [...new Map(facts.map((f) => [f.path, f])).values()];
    const before = new Map<string, number>();
    const note = (d: string) => before.has(d) || before.set(d, this.holders.get(d)?.size ?? 0);
    const shellTooling = this.shellTooling();
    for (const path of [...removed, ...changed.map((f) => f.path)]) {
      for (const d of this.defsOf.get(path) ?? []) {
        note(d);
        this.holders.get(d)!.delete(path);
      }
      this.count(path, -1);
      this.defsOf.delete(path);
      this.byPath.delete(path);
      this.languageOf.delete(path);
      this.judged.delete(path);
    }
    for (const f of changed) {
      const mine = new Set(f.defs);
      this.defsOf.set(f.path, mine);
      this.byPath.set(f.path, roleByPath(f.path, f.copyMark, f.platformCopy));
      if (f.language) this.languageOf.set(f.path, f.language);
      this.count(f.path, 1);
      for (const d of mine) {
        note(d);
        const held = this.holders.get(d);
        if (held) held.add(f.path);
        else this.holders.set(d, new Set([f.path]));
      }
    }
    const again = new Set(changed.map((f) => f.path));
    // The shell's share moved across SHELL_MINORITY: every shell script's role moves with it.
    if (this.shellTooling() !== shellTooling) for (const [p, l] of this.languageOf) if (l === SHELL) again.add(p);
    for (const [d, n] of before) {
      const held = this.holders.get(d)!;
      // A definition that counts (held by few files) before or after: its holders' shares moved.
      if (n <= COMMON_NAME_FILES || held.size <= COMMON_NAME_FILES) for (const p of held) again.add(p);
      if (held.size === 0) this.holders.delete(d);
    }
    for (const p of again) {
      const role = this.judge(p);
      if (role === "source") this.judged.delete(p);
      else this.judged.set(p, role);
    }
    this.lastJudged = again.size;
  }

  /** The non-source roles. */
  roles(): Record<string, FileRole> {
    return Object.fromEntries(this.judged);
  }

  /** Counts a file in its language's source files (or takes it back), when its path makes it source and no test. */
  private count(path: string, sign: 1 | -1): void {
    const language = this.languageOf.get(path);
    if (!language || this.byPath.get(path) !== "source" || this.isTest(path)) return;
    this.sources.set(language, (this.sources.get(language) ?? 0) + sign);
  }

  /** Whether the project's shell scripts are its tooling (SHELL_MINORITY). */
  private shellTooling(): boolean {
    const shell = this.sources.get(SHELL) ?? 0;
    let other = 0;
    for (const [l, n] of this.sources) if (l !== SHELL && n > other) other = n;
    return shell > 0 && other >= SHELL_MINORITY * shell;
  }

  private judge(path: string): FileRole {
    const role = this.byPath.get(path)!;
    const mine = this.defsOf.get(path)!;
    if (role === "source" && this.languageOf.get(path) === SHELL && !this.isTest(path) && this.shellTooling()) return "build-script";
    if (role !== "source" || mine.size < COPY_MIN_DEFS * 2) return role;
    // The definitions this one repeats, per other file (tests excepted: see the constructor).
    const shared = new Map<string, string[]>();
    for (const d of mine) {
      const held = this.holders.get(d)!;
      if (held.size > COMMON_NAME_FILES) continue; // `main`, `new`: no evidence of a copy
      for (const p of held) if (p !== path && !this.isTest(p)) push(shared, p, d);
    }
    const covers = (other: string, defs: string[]) => {
      const total = this.defsOf.get(other)!.size;
      return total >= COPY_MIN_DEFS && total < mine.size && defs.length / total >= COPY_SHARE;
    };
    const originals = new Set([...shared].filter(([other, defs]) => covers(other, defs)).map(([other]) => other));
    // An amalgamation joins files that define different things; plugins that each define the same
    // hooks (bats' formatters all define `bats_tap_stream_*`) are no copies of one another. What an
    // original gives counts only where no other original defines it too.
    let copied = 0;
    for (const other of originals) {
      const own = shared.get(other)!.filter((d) => ![...this.holders.get(d)!].some((h) => h !== other && originals.has(h)));
      if (covers(other, own)) copied++;
    }
    return copied >= 2 ? "generated-copy" : "source";
  }
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
