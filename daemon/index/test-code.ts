import { regexBody } from "../../shared/config.js";
import { linearRegExp } from "../../shared/linear-regex.js";
import { contentWords } from "./text.js";
import { compileExcludes } from "./walk.js";

/**
 * Test code and test data by the conventions of each language we read: directories (`test/`,
 * `tests/`, `__tests__/`, `testdata/`, `spec/`, `fixtures/`, `idle_test/`, …) and file names
 * (`*_test.go`, `test_*.py`, `conftest.py`, `*.test.ts`, `*.spec.js`, `*Test.java`, `*Tests.cs`,
 * `*_spec.rb`, `*Test.php`, `test_*.c`, `*_unittest.cc`, …). Paths are project-relative, POSIX.
 */
const CONVENTION = new RegExp(
  [
    // Directories anywhere in the path; `*_test(s)`/`*-tests` too (CPython's idlelib/idle_test), and
    // .NET's test projects (`Newtonsoft.Json.Tests/`, `App.UnitTests/`, `Shop.FunctionalTests/`, `Polly.Specs/`).
    String.raw`(^|/)(tests?|testdata|test_?data|__tests__|__mocks__|__fixtures__|specs?|fixtures?|[\w.]+[_-]tests?|[\w.]+\.\w*(Tests?|Specs?))/`,
    // Gradle's source sets of tests beside `src/test/`: Kotlin Multiplatform's `src/jvmTest/`,
    // `src/commonTest/`, Android's `src/androidTest/`, `src/androidUnitTest/`, `src/integrationTest/`,
    // and the fixtures shared by them (`src/testFixtures/`). Their helpers are no `*Test.kt`.
    String.raw`(^|/)src/([a-z][A-Za-z0-9]*Tests?|testFixtures)/`,
    // Go, Python, Ruby, C/C++, shell, …: foo_test.go, foo_test.py, foo_test.rb, foo_test.cc, foo_unittest.cc.
    // Not Elixir's `.ex` (its tests are `_test.exs`; ExUnit's own doc_test.ex is library code).
    String.raw`_(unit)?test\.(?!ex$)[^./]+$`,
    // Test support of C/C++ and Go projects: testutil.h, testharness.cc, test_util.go, testhelpers.go.
    String.raw`(^|/)test_?(utils?|harness|helpers?)\.[^./]+$`,
    // Zig keeps a package's tests in test.zig.
    String.raw`(^|/)tests?\.zig$`,
    // Python, Ruby, C/C++: test_foo.py, test_foo.rb, test_foo.c; pytest's conftest.py.
    String.raw`(^|/)test_[^/]*\.(py|rb|c|cc|cpp|cxx)$`,
    String.raw`(^|/)conftest\.py$`,
    // JavaScript/TypeScript (and any language using the form): foo.test.ts, foo.spec.jsx, foo_spec.rb.
    String.raw`[._](test|spec)\.(?!ex$)[^./]+$`,
    // JVM, .NET, Swift, PHP classes: FooTest.java, FooTests.cs, FooTest.kt, FooTests.swift, FooTest.php.
    String.raw`Tests?\.(java|kt|kts|cs|swift|php|scala|groovy)$`,
  ].join("|"),
);

/** Test code by the built-in conventions alone (what a project without `[index] test_patterns` gets). */
export function isTestPath(file: string): boolean {
  return CONVENTION.test(file);
}

/** Decides, for a project-relative path, whether it is test code. */
export type TestClassifier = (file: string) => boolean;

/**
 * The one classifier of test code: the conventions plus a project's `[index] test_patterns`.
 * Names and globs read as in `[build] exclude_patterns` (a bare name marks a file or directory
 * anywhere, so everything under it; a glob matches paths), `/…/` is a regular expression, run in
 * linear time (a repository's codemem.toml is anyone's: `/^(a+)+$/` must not hold a build).
 * Answers are memoised per path: ranking asks for every candidate of every question.
 */
export function testClassifier(patterns: readonly string[] = []): TestClassifier {
  const regexes = patterns.flatMap((p) => {
    const body = regexBody(p);
    return body === undefined ? [] : [linearRegExp(body)];
  });
  const globs = patterns.filter((p) => regexBody(p) === undefined);
  const excluded = globs.length ? compileExcludes(globs) : undefined;
  // A glob marks a path when it would exclude the path or one of its directories.
  const byGlob = (file: string) => {
    if (!excluded) return false;
    for (let i = file.indexOf("/"); i >= 0; i = file.indexOf("/", i + 1)) if (excluded(file.slice(0, i), true)) return true;
    return excluded(file, false);
  };
  const memo = new Map<string, boolean>();
  return (file) => {
    let v = memo.get(file);
    if (v === undefined) {
      v = CONVENTION.test(file) || regexes.some((r) => r.test(file)) || byGlob(file);
      memo.set(file, v);
    }
    return v;
  };
}

// A test file's name by convention, and the name of the code it tests (group 1 or 2).
const TEST_NAME = [
  /^test_(.+)\.[^.]+$/, // Python, Ruby, C: test_models.py
  /^(.+)_(?:unit)?test\.[^.]+$/, // Go, Python, C++: models_test.go, models_unittest.cc
  /^(.+)[._](?:test|spec)\.[^.]+$/, // JavaScript, TypeScript, Ruby: models.test.ts, models.spec.js, models_spec.rb
  /^(.+)Tests?\.(?:java|kt|kts|cs|swift|php|scala|groovy)$/, // ModelsTest.java, ModelsTests.cs
];

/** The name of the code a test file is named after (`tests/test_models.py` → `models`); undefined when the name says no test. */
export function testedName(file: string): string | undefined {
  const base = file.slice(file.lastIndexOf("/") + 1);
  for (const re of TEST_NAME) {
    const m = re.exec(base);
    if (m) return m[1];
  }
  return undefined;
}

/** A code file's name without its extension (`requests/models.py` → `models`), what a test of it is named after. */
export function codeName(file: string): string {
  const base = file.slice(file.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Distinct content words beyond which a question of several lines is a pasted report (retriever.ts' TERMS). */
const REPORT_WORDS = 24;

/**
 * Whether a question asks about tests themselves ("the test for …", "where is X tested", "unit
 * tests of", "test case", "spec for", "fixture"): then tests keep their rank (search's and query's
 * one rule). A report (several lines, more than REPORT_WORDS distinct words, or a title line set apart
 * from a body by a blank line: a pasted issue or commit message) asks what its first line says: the tests its body speaks of ("Adds a regression test",
 * "we ran the tests") were done, not sought.
 */
export function seeksTests(question: string): boolean {
  return /\b(tests?|tested|testing|unit[ -]tests?|test ?cases?|test ?suites?|specs?|fixtures?|conftest)\b/i.test(askedText(question));
}

/** A title line, a blank line and a body: the shape of a commit message or an issue, whatever its length. */
const TITLED = /^[^\n]+\n[ \t]*\n\s*\S/;

/** What a question asks for: a report's first line (see seeksTests), else the whole question. */
export function askedText(question: string): string {
  const text = question.trim();
  const nl = text.indexOf("\n");
  const report = nl >= 0 && (TITLED.test(text) || new Set(contentWords(text)).size > REPORT_WORDS);
  return report ? text.slice(0, nl) : text;
}
