// The mechanical rule that makes report questions from fix commits (issue 39), apart from git so a test
// can check it: which commit messages are reports of a defect, which changed files are the fix's source
// (not its tests, docs, examples, benchmarks, vendored code or build scripts), and the language of a
// question. Source extensions come from the language registry (a build of daemon/ must exist), so a
// language added there is asked about without a change here.

export const MIN_BODY = 250;
export const BUGGY = /\b(fix|fixes|fixed|fixing|bug|error|errors|exception|traceback|fail|fails|failed|failing|failure|crash|crashes|hang|hangs|leak|broken|wrong|incorrect|regression|raises?|panics?|segfault|TypeError|ValueError|AttributeError|KeyError|NullPointerException)\b/i;
export const NOT_A_FIX = /^(v?\d+\.\d+|bump|release|update project files)|\bdocs?\b|documentation|typo|\btests?\b|\bspec\b/i;
export const TRAILER = /^(Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|PR-URL|Reviewed-By|Change-Id):.*$/gim;

// A directory of tests, whatever the language's convention: test/, tests/, spec/ (Ruby, Lua), testdata/
// (Go), src/test/ (Maven), src/jvmTest/ (Kotlin multiplatform), RestSharp.Tests/ and Polly.Specs/ (C#),
// container-tests/ and okhttp-testing-support/ (Gradle modules).
const TEST_DIR = /^(tests?|testing|testsuite|testdata|__tests__|specs?)$|(^|[-_.])(tests?|testing|specs?)([-_.]|$)/i;
const TEST_DIR_CAMEL = /[a-z](Tests?|Specs?)$/;
// Not the shipped code: docs, examples, benchmarks, fuzzers, vendored or bundled copies of other projects,
// scripts, Gradle's build logic.
const OTHER_DIR = /^(docs?|documentation|examples?|samples?|demos?|benchmarks?|bench|fuzz|fuzzing|vendor|vendored|third_party|thirdparty|3rdparty|bundled|node_modules|scripts|artwork|build-logic|buildSrc)$/i;
// A test by its name: test.c / test.sh, test_x.py, x_test.go / x_test.c, x_spec.rb / x_spec.lua, x.test.ts, x.spec.js,
// XTest.java / XTest.kt / XTests.cs / XSpec.scala / XTest.php, XTestCase.php.
const TEST_FILE = /^tests?\.[^.]+$|^test_|[._-](test|tests|spec|specs)\.[^.]+$|[a-z0-9](Test|Tests|Spec|Specs|TestCase)\.[^.]+$/;
// Build and packaging scripts written in a source language (Cargo's build.rs, Gradle's .kts, SwiftPM's
// manifest, Mill's build.sc, Mix's mix.exs, Zig's build.zig, Cabal's Setup.hs, JavaScript tool configs).
const BUILD_FILE = /^(setup|conftest|noxfile|fabfile)\.py$|^build\.rs$|\.gradle\.kts$|^Package(@[^/]*)?\.swift$|^(Rakefile|Gemfile)(\.rb)?$|^build\.(sc|zig)$|^mix\.exs$|^Setup\.l?hs$|^(gulpfile|gruntfile|(webpack|rollup|vite|esbuild|jest|babel|karma|eslint|prettier|postcss|tailwind|tsup|vitest|playwright|rspack)\.config)\.[cm]?[jt]s$/i;

/** Whether a path changed by a fix is not the fix's source: a test, docs, an example, a benchmark, vendored code, a build script. */
export function isTestOrOther(p) {
  const parts = p.split("/");
  const base = parts.pop();
  return parts.some((d) => TEST_DIR.test(d) || TEST_DIR_CAMEL.test(d) || OTHER_DIR.test(d)) || TEST_FILE.test(base) || BUILD_FILE.test(base);
}

const C_FAMILY = new Set(["c", "cpp"]);

/**
 * The language of a question: the language most of its gold files are in (ties: the first gold file's).
 * `.h` is read as C++ by the registry, but in a C project it is C: a header counts as the other C-family
 * gold files' language, or with none, as `headerLanguage()` says (the project's, from its tree).
 */
export function questionLanguage(gold, languageOf, headerLanguage) {
  const langs = gold.map((f) => languageOf(f));
  const headers = gold.map((f) => f.toLowerCase().endsWith(".h"));
  const own = langs.filter((l, i) => !headers[i] && C_FAMILY.has(l));
  const header = headers.some(Boolean) ? (own[0] ?? headerLanguage()) : undefined;
  const resolved = langs.map((l, i) => (headers[i] ? header : l));
  const count = new Map();
  for (const l of resolved) count.set(l, (count.get(l) ?? 0) + 1);
  return resolved.reduce((best, l) => (count.get(l) > count.get(best) ? l : best), resolved[0]);
}

/** The C-family language of a project from its file names: C when it has more .c files than C++ sources. */
export function headerLanguageOf(files, languageOf) {
  let c = 0;
  let cpp = 0;
  for (const f of files) {
    if (f.toLowerCase().endsWith(".h")) continue;
    const l = languageOf(f);
    if (l === "c") c++;
    else if (l === "cpp") cpp++;
  }
  return c > cpp ? "c" : "cpp";
}

/** A commit message as a report: trailers dropped; undefined when the commit is not a report of a defect. */
export function reportOf(subject, rawBody) {
  const body = (rawBody ?? "").replace(TRAILER, "").trim();
  if (body.length < MIN_BODY || !BUGGY.test(`${subject}\n${body}`) || NOT_A_FIX.test(subject)) return undefined;
  return `${subject}\n\n${body}`;
}
