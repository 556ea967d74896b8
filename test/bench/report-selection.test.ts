import { describe, expect, it } from "vitest";
import { languageForPath } from "../../dist/daemon/index/languages/registry.js";
// @ts-expect-error plain JS module shared with scripts/make-report-questions.mjs
import { headerLanguageOf, isTestOrOther, questionLanguage, reportOf } from "../../scripts/report-selection.mjs";

const languageOf = (f: string) => languageForPath(f)?.id;

/** The rule that makes report questions from fix commits (issue 39): paths from the projects it reads. */
describe("report questions' selection rule", () => {
  it("leaves out tests by each language's convention", () => {
    for (const p of [
      "tests/test_utils.py", "tests/testing/helpers.py", "test/app.router.js", "source/core/index.test.ts",
      "context_test.go", "binding/testdata/x.go", "src/jq_test.c", "test.c", "test/gtest-all.cc",
      "gson/src/test/java/com/google/gson/GsonTest.java", "okhttp/src/jvmTest/kotlin/okhttp3/CallTest.kt",
      "okhttp-testing-support/src/main/kotlin/okhttp3/TestUtil.kt", "container-tests/src/x.kt",
      "tests/stream.rs", "spec/faraday/connection_spec.rb", "tests/ClientTest.php", "test/RestSharp.Tests/X.cs",
      "src/Polly.Specs/Retry/RetrySpecs.cs", "Tests/TestHelpers.swift", "shared/src/test/scala/scopt/ImmutableParserSpec.scala",
      "spec/core_spec.lua",
    ]) expect(isTestOrOther(p), p).toBe(true);
  });

  it("leaves out docs, examples, benchmarks, fuzzers, vendored code and build scripts", () => {
    for (const p of [
      "docs/conf.py", "examples/auth/index.js", "benchmarks/middleware.js", "fuzz/jv_parse_fuzzer.c",
      "include/spdlog/fmt/bundled/format.h", "vendor/x.go", "scripts/release.sh", "setup.py",
      "build.gradle.kts", "build-logic/src/main/kotlin/Osgi.kt", "build.rs", "Package.swift", "Package@swift-5.9.swift",
    ]) expect(isTestOrOther(p), p).toBe(true);
  });

  it("keeps the shipped source", () => {
    for (const p of [
      "requests/models.py", "lib/response.js", "source/core/index.ts", "context.go", "src/jv.c", "hiredis.h",
      "include/fmt/format.h", "include/spdlog/fmt/bin_to_hex.h", "gson/src/main/java/com/google/gson/Gson.java",
      "okhttp/src/commonJvmAndroid/kotlin/okhttp3/Dispatcher.kt", "mockwebserver/src/main/kotlin/mockwebserver3/MockWebServer.kt",
      "src/de.rs", "lib/sinatra/base.rb", "rack-protection/lib/rack/protection/json_csrf.rb", "src/Client.php", "nvm.sh",
      "libexec/bats-core/bats-exec-test", "src/RestSharp/RestClient.cs", "src/Polly.Core/Retry/RetryHelper.cs",
      "Source/Core/Session.swift", "shared/src/main/scala/scopt/OptionParser.scala", "busted/core.lua", "src/latest.py", "src/flask/testing.py",
    ]) expect(isTestOrOther(p), p).toBe(false);
  });

  it("gives a question the language of its gold files, a C header the project's C-family language", () => {
    expect(questionLanguage(["okhttp/src/x/A.kt", "okhttp/src/x/B.java", "okhttp/src/x/C.kt"], languageOf, () => "cpp")).toBe("kotlin");
    expect(questionLanguage(["hiredis.h", "net.c"], languageOf, () => "cpp")).toBe("c");
    expect(questionLanguage(["include/fmt/format.h"], languageOf, () => "cpp")).toBe("cpp");
    expect(questionLanguage(["read.h"], languageOf, () => "c")).toBe("c");
    expect(headerLanguageOf(["a.c", "b.c", "a.h", "x.cc"], languageOf)).toBe("c");
    expect(headerLanguageOf(["src/format.cc", "include/fmt/a.h", "include/fmt/b.h", "support/x.c"], languageOf)).toBe("cpp");
  });

  it("takes a long message that speaks of a defect, not a release, docs or tests", () => {
    const body = "The pool kept the connection after the call was canceled, so the next request on it failed. ".repeat(3);
    expect(reportOf("Fix connection leak on cancel", `${body}\n\nSigned-off-by: A <a@b.c>`)).toBe(`Fix connection leak on cancel\n\n${body.trim()}`);
    expect(reportOf("Fix connection leak on cancel", "too short")).toBeUndefined();
    expect(reportOf("Release 2.3.1", body)).toBeUndefined();
    expect(reportOf("Fix typo in docs", body)).toBeUndefined();
    expect(reportOf("Add retry option", "Callers asked for a way to retry idempotent requests a few times. ".repeat(5))).toBeUndefined();
  });
});
