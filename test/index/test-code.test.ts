import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../dist/shared/config.js";
import { isTestPath, seeksTests, testClassifier } from "../../dist/daemon/index/test-code.js";
import { makeProject } from "../helpers.js";

/** Paths of real projects' layouts, by language, and whether they are test code. */
const PATHS: [string, string, boolean][] = [
  ["Go", "net/http/server_test.go", true],
  ["Go", "net/http/testdata/file", true],
  ["Go", "net/http/server.go", false],
  ["Go", "net/http/httptest/server.go", false], // a package for tests, not a test
  ["Python", "tests/test_sessions.py", true],
  ["Python", "requests/test_utils.py", true],
  ["Python", "lib/http/client_test.py", true],
  ["Python", "conftest.py", true],
  ["Python", "idlelib/idle_test/test_config.py", true],
  ["Python", "unittest/loader.py", false],
  ["Python", "requests/sessions.py", false],
  ["TypeScript", "src/operators/debounce.test.ts", true],
  ["TypeScript", "src/operators/debounce.spec.ts", true],
  ["TypeScript", "src/__tests__/parse.ts", true],
  ["TypeScript", "src/internal/testing/TestScheduler.ts", false],
  ["TypeScript", "src/operators/debounce.ts", false],
  ["JavaScript", "lib/router.test.js", true],
  ["JavaScript", "components/Button.spec.jsx", true],
  ["JavaScript", "test/app.router.js", true],
  ["JavaScript", "lib/router.js", false],
  ["Java", "src/test/java/org/x/ParserTest.java", true],
  ["Java", "src/main/java/org/x/ParserTests.java", true],
  ["Java", "src/main/java/org/x/Parser.java", false],
  ["Java", "src/main/java/org/x/Contest.java", false],
  ["Kotlin", "android/src/main/GestureTest.kt", true],
  ["Kotlin", "android/src/main/GestureHandler.kt", false],
  ["C#", "Src/Newtonsoft.Json.Tests/JsonReaderTests.cs", true],
  ["C#", "Src/Newtonsoft.Json/JsonReader.cs", false],
  ["C#", "Src/Newtonsoft.Json.Tests/Documentation/Samples/Serializer/SerializeDateFormatHandling.cs", true],
  ["C#", "src/Shop.UnitTests/Helpers/Fakes.cs", true],
  ["C#", "src/Shop.Testing/Clock.cs", false],
  ["Elixir", "test/ex_unit/doc_test_test.exs", true],
  ["Elixir", "lib/ex_unit/doc_test.ex", false], // ExUnit's DocTest: library code
  ["Zig", "lib/std/json/test.zig", true],
  ["Zig", "lib/std/json/static.zig", false],
  ["Ruby", "spec/rack/request_spec.rb", true],
  ["Ruby", "lib/rack/request_spec.rb", true],
  ["Ruby", "lib/rack/request_test.rb", true],
  ["Ruby", "lib/rack/request.rb", false],
  ["PHP", "tests/Monolog/LoggerTest.php", true],
  ["PHP", "src/Monolog/Handler/StreamHandlerTest.php", true],
  ["PHP", "src/Monolog/Logger.php", false],
  ["C", "tests/test_argon2.c", true],
  ["C", "src/test_core.c", true],
  ["C", "src/core_test.c", true],
  ["C", "src/core.c", false],
  ["C++", "db/db_test.cc", true],
  ["C++", "util/cache_unittest.cc", true],
  ["C++", "db/db_impl.cc", false],
  ["C++", "util/testharness.cc", true],
  ["C++", "util/testutil.h", true],
  ["Go", "src/testing/testing.go", false], // the testing package itself
  ["Swift", "Sources/Parser/ParserTests.swift", true],
  ["Shell", "test/helpers.bash", true],
  ["Shell", "lib/bats-core/test_functions.bash", false], // bats' own library, not a test
  ["fixtures", "test/fixtures/trees/go/strings/strings.go", true],
  ["fixtures", "fixtures/data.json", true],
];

describe("test code by each language's conventions", () => {
  it.each(PATHS)("%s: %s → %s", (_lang, file, want) => {
    expect(isTestPath(file)).toBe(want);
    expect(testClassifier()(file)).toBe(want);
  });
});

describe("[index] test_patterns", () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()!();
  });
  const project = (toml: string) => {
    const p = makeProject({ "codemem.toml": toml });
    cleanups.push(p.cleanup);
    return p.root;
  };
  const errorOf = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      return err as { code?: string; message: string };
    }
    throw new Error("expected an error");
  };

  it("adds names, globs and /regex/ to the conventions, which stay", () => {
    const root = project(`[index]\ntest_patterns = ["integration", "*_check.py", "qa/**", "/(^|\\\\/)it\\\\//"]\n`);
    const patterns = resolveConfig(root, {}, {}).index.testPatterns;
    expect(patterns).toEqual(["integration", "*_check.py", "qa/**", "/(^|\\/)it\\//"]);
    const isTest = testClassifier(patterns);
    for (const f of ["integration/db.py", "src/integration/db.go", "lib/parser_check.py", "qa/smoke/run.ts", "src/it/java/org/x/Db.java", "pkg/x_test.go"]) expect(isTest(f), f).toBe(true);
    for (const f of ["src/integrations.py", "lib/parser.py", "src/qa.ts", "src/item/x.java"]) expect(isTest(f), f).toBe(false);
    expect(resolveConfig(project(""), {}, {}).index.testPatterns).toEqual([]);
  });

  it("refuses a value that is not an array of strings, or a regular expression that does not compile", () => {
    for (const bad of [`test_patterns = "tests"`, `test_patterns = [1]`, `test_patterns = ["/([a-z/"]`]) {
      const root = project(`[index]\n${bad}\n`);
      const e = errorOf(() => resolveConfig(root, {}, {}));
      expect(e.code, bad).toBe("CONFIG_INVALID");
      expect(e.message, bad).toContain(path.join(root, "codemem.toml"));
      expect(e.message, bad).toContain("test_patterns");
    }
    expect(errorOf(() => resolveConfig(project(`index = 3\n`), {}, {})).code).toBe("CONFIG_INVALID");
  });
});

describe("questions about tests", () => {
  it.each([
    ["where is Ring.Move tested", true],
    ["the test for errors.Unwrap", true],
    ["unit tests of the session adapter", true],
    ["which test case covers an empty ring", true],
    ["spec for the router", true],
    ["the fixture that builds a mock request", true],
    ["How does a ring move forward by n elements?", false],
    ["How does unittest's loader discover modules?", false],
    ["Where is the latest contest result stored?", false],
  ])("%s → %s", (q, want) => expect(seeksTests(q)).toBe(want));
});

/** Test code a fixture holds on purpose: the Swift test target's `@testable import` is the fixture's one module import. */
const MEANT = new Set(["swift-capacitor-camera/ios/Tests/CameraPluginTests/CameraPluginTests.swift"]);

it("the fixture trees of the other tests hold no test code but what they mean to", () => {
  const trees = path.resolve("test/fixtures/trees");
  for (const tree of fs.readdirSync(trees).filter((t) => t !== "go-tests")) {
    const walk = (rel: string): string[] =>
      fs.readdirSync(path.join(trees, tree, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(`${rel}${e.name}/`) : [`${rel}${e.name}`]));
    expect(walk("").filter((f) => isTestPath(f) && !MEANT.has(`${tree}/${f}`)), tree).toEqual([]);
  }
});
