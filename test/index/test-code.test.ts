import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stopDaemon } from "../../dist/client/rpc.js";
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
  // Gradle source sets of tests other than src/test: their helpers are named like any code.
  ["Kotlin", "okhttp/src/jvmTest/kotlin/okhttp3/FakeRoutePlanner.kt", true],
  ["Kotlin", "okhttp/src/commonTest/kotlin/okhttp3/internal/publicsuffix/ConfiguredPublicSuffixList.kt", true],
  ["Kotlin", "okhttp/src/androidUnitTest/kotlin/okhttp3/PublicSuffixTesting.android.kt", true],
  ["Kotlin", "app/src/androidTest/java/org/x/Robot.kt", true],
  ["Java", "lib/src/integrationTest/java/org/x/Db.java", true],
  ["Java", "lib/src/testFixtures/java/org/x/Fakes.java", true],
  ["Kotlin", "okhttp/src/jvmMain/kotlin/okhttp3/OkHttp.kt", false],
  ["Kotlin", "okhttp/src/commonJvmAndroid/kotlin/okhttp3/Request.kt", false],
  ["Kotlin", "src/main/kotlin/org/x/latest/Contest.kt", false],
  ["C#", "Src/Newtonsoft.Json.Tests/JsonReaderTests.cs", true],
  ["C#", "Src/Newtonsoft.Json/JsonReader.cs", false],
  ["C#", "Src/Newtonsoft.Json.Tests/Documentation/Samples/Serializer/SerializeDateFormatHandling.cs", true],
  ["C#", "src/Shop.UnitTests/Helpers/Fakes.cs", true],
  ["C#", "src/Shop.Testing/Clock.cs", false],
  ["C#", "src/Shop.FunctionalTests/Api/Fixture.cs", true],
  ["C#", "src/Shop.AcceptanceTests/Steps.cs", true],
  ["C#", "src/Polly.Specs/Helpers/Constants.cs", true],
  ["C#", "src/Shop.Specifications/Rules.cs", false],
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

  it("refuses a regular expression that cannot run in linear time (backreference, lookaround), and a glob that does not compile", () => {
    for (const bad of [`[index]\ntest_patterns = ["/(a)\\\\1/"]`, `[index]\ntest_patterns = ["/^(?!src)/"]`, `[build]\nexclude_patterns = ["[z-a].py"]`]) {
      const e = errorOf(() => resolveConfig(project(`${bad}\n`), {}, {}));
      expect(e.code, bad).toBe("CONFIG_INVALID");
    }
  });

  it("hostile patterns from a repository's codemem.toml run in linear time: the build and its answers end", async () => {
    // Backtracking takes 2^40 steps on /^(a+)+$/ against 40 a's and a `!`, and hours on the glob against 40 a's.
    const a40 = "a".repeat(40);
    const root = project(`[index]\ntest_patterns = ["/^(a+)+$/", "*a*a*a*a*a*a*a*a*a*a*a*b", "/^e2e\\\\//"]\n[build]\nexclude_patterns = ["*a*a*a*a*a*a*a*a*a*a*a*b"]\n`);
    const write = (rel: string, body: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), body);
    };
    write(`${a40}!/reserve.py`, "def reserve_units(stock, count):\n    return stock >= count\n");
    write(`src/${a40}.py`, "def restock_shelf(shelf):\n    return shelf\n");
    write("e2e/checkout.py", "def checkout_flow():\n    return reserve_units(3, 1)\n");
    try {
      const cli = path.resolve("dist/client/cli.js");
      const run = (args: string[]) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const c = spawn(process.execPath, [cli, ...args], { cwd: root });
          let stdout = "";
          let stderr = "";
          c.stdout.on("data", (d) => (stdout += String(d)));
          c.stderr.on("data", (d) => (stderr += String(d)));
          // Only a hang reaches this deadline (the build takes a second or two).
          const timer = setTimeout(() => c.kill("SIGKILL"), 60_000);
          c.on("exit", (status) => {
            clearTimeout(timer);
            resolve({ status, stdout, stderr });
          });
        });
      const b = await run(["build", root, "--json"]);
      expect(b.status, b.stderr).toBe(0);
      expect(JSON.parse(b.stdout).files_indexed).toBe(3);
      const s = await run(["search", root, "reserve units checkout flow", "--json"]);
      expect(s.status, s.stderr).toBe(0);
      const results = JSON.parse(s.stdout).results as { file_path: string; is_test: boolean }[];
      expect(results.find((r) => r.file_path === `${a40}!/reserve.py`)?.is_test).toBe(false);
      expect(results.find((r) => r.file_path === "e2e/checkout.py")?.is_test).toBe(true);
    } finally {
      await stopDaemon(root);
    }
  }, 150_000);
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
    // A report asks what its first line says: a short one too when a blank line sets its title apart (busted's fix of support-function globals).
    ["Create support function globals in parent context\n\nGlobals created in 'it' blocks stay confined to the current context/test.", false],
    ["Globals created in support functions: where are they kept?\nand which test shows it", true],
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
