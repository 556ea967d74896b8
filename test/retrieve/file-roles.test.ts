import { createRequire } from "node:module";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { buildIndex, type BuildCache } from "../../dist/daemon/index/build.js";
import { FileRoles, fileRoles, roleByPath } from "../../dist/daemon/index/file-role.js";
import { createEmbedder } from "../../dist/daemon/index/embed/select.js";
import { resolveConfig } from "../../dist/shared/config.js";
import { makeProject, touchLater } from "../helpers.js";
import { builtProject } from "../index/fixture.js";

const require = createRequire(import.meta.url);
const Database = require("better-sqlite3");

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** The roles the index records (meta `file_roles`). */
function recordedRoles(root: string): Record<string, string> {
  const db = new Database(path.join(root, "codegraph-out/codemem_db/index.db"), { readonly: true });
  try {
    return JSON.parse(db.prepare("SELECT value FROM meta WHERE key = 'file_roles'").pluck().get() as string);
  } finally {
    db.close();
  }
}

const PARSER = `namespace jsonlite {
// Parses JSON text into values.
class Parser {
public:
  // Parses a JSON array: values between brackets, separated by commas.
  int parse_array(const char *text) { return parse_value(text + 1); }
  // Parses one JSON value of any kind.
  int parse_value(const char *text) { return text[0] == '[' ? parse_array(text) : 0; }
  int parse_object(const char *text) { return parse_value(text); }
};
}
`;
const WRITER = `namespace jsonlite {
// Writes values as JSON text.
class Writer {
public:
  // Writes a string with its quotes and escapes.
  int write_escaped(const char *s) { return s[0]; }
  int write_value(int v) { return write_escaped("x") + v; }
  int write_array(int n) { return write_value(n); }
};
}
`;

/** A JSON library with an amalgamated header that copies both sources (no name or comment says so), bundled zlib code and a benchmark. */
const PROJECT = {
  "src/parser.cpp": PARSER,
  "src/writer.cpp": WRITER,
  "include/jsonlite_all.hpp": `#pragma once\n${PARSER}\n${WRITER}`,
  "third_party/miniz/inflate.c": "/* Inflates a deflated JSON array stream. */\nint inflate_array(const char *in) { return in[0]; }\n",
  "bench/parse_bench.cpp": "// Benchmark: parse a JSON array a million times.\nint bench_parse_array() { return 1; }\n",
  "src/main.cpp": "int main() { jsonlite::Parser p; return p.parse_array(\"[1]\"); }\n",
};

describe("file roles", () => {
  it("tell copies, vendored code and benchmarks at index time; they rank below the source and answers name them", async () => {
    const { engine, root } = await builtProject(PROJECT);
    const { results } = await engine.search({ project_path: root, query: "parse a JSON array", limit: 20 });
    const at = (file: string) => results.findIndex((r) => r.file_path === file && r.name === "parse_array");
    expect(at("src/parser.cpp")).toBeGreaterThanOrEqual(0);
    expect(at("include/jsonlite_all.hpp")).toBeGreaterThan(at("src/parser.cpp"));
    const role = (file: string) => results.find((r) => r.file_path === file)?.role;
    expect(role("src/parser.cpp")).toBeUndefined();
    expect(role("include/jsonlite_all.hpp")).toBe("generated-copy");
    expect(role("third_party/miniz/inflate.c")).toBe("vendored");
    expect(role("bench/parse_bench.cpp")).toBe("bench");
    // The project's own parse_array leads; the vendored and benchmark namesakes follow it.
    expect(results[0]).toMatchObject({ file_path: "src/parser.cpp" });

    // Answers name the role where they list a file.
    const answer = await engine.query({ project_path: root, question: "how is a JSON array parsed? show the amalgamated header too" });
    expect(answer.context).toMatch(/### include\/jsonlite_all\.hpp:\d+-\d+ .*\[generated-copy\]/);
    expect(answer.context).not.toMatch(/### src\/parser\.cpp:\d+-\d+ .*\[/);
  });

  it("a shell library whose functions tests stub is the project's source, not a copy of the stubs (nvm.sh)", async () => {
    // nvm's shape: one big library of functions; tests source it and redefine a few of them as stubs.
    const lib = ["download", "has", "ls_remote", "install", "use", "alias"].map((f) => `# ${f} a node version.\nnvm_${f}() {\n  echo "${f} $1"\n}\n`).join("\n");
    const stub = (fns: string[]) => `#!/bin/sh\n. ../../nvm.sh\n${fns.map((f) => `nvm_${f}() {\n  echo stubbed\n}\n`).join("")}nvm_install 18 || exit 1\n`;
    const { engine, root } = await builtProject({
      "nvm.sh": lib,
      "test/fast/install with a stubbed download": stub(["download", "has"]),
      "test/fast/ls-remote without curl": stub(["download", "ls_remote"]),
    });
    expect(recordedRoles(root)["nvm.sh"]).toBeUndefined();
    const { results } = await engine.search({ project_path: root, query: "nvm_download fails to download a version", limit: 5, group_by: "file" });
    expect(results[0]).toMatchObject({ file_path: "nvm.sh" });
    expect(results[0].role).toBeUndefined();
  });

  it("formatters that each define the same hooks are source, not copies of one another (bats' formatters)", async () => {
    const hooks = ["plan", "begin", "ok", "not_ok", "skipped", "comment"];
    const formatter = (name: string, own: string[]) =>
      `#!/usr/bin/env bash\n# Formats a TAP stream as ${name}.\n${[...own, ...hooks.map((h) => `bats_tap_stream_${h}`)].map((f) => `${f}() {\n  printf '%s\\n' "${name} $*"\n}\n`).join("")}`;
    const { engine, root } = await builtProject({
      "libexec/bats-format-tap": formatter("tap", []),
      "libexec/bats-format-tap13": formatter("tap13", ["add_yaml_entry"]),
      "libexec/bats-format-junit": formatter("junit", ["xml_escape", "suite_header", "suite_footer", "print_test_case"]),
      "libexec/bats-format-pretty": formatter("pretty", ["set_color", "clear_color", "move_up", "move_down", "summary", "update_screen_width"]),
    });
    expect(recordedRoles(root)).toEqual({});
    const { results } = await engine.search({ project_path: root, query: "xml_escape breaks the junit suite_header", limit: 5, group_by: "file" });
    expect(results[0]).toMatchObject({ file_path: "libexec/bats-format-junit" });
    expect(results[0].role).toBeUndefined();
  });

  it("a demo app and a documentation site's scripts rank below the library's source unless asked for (Alamofire's Example/ and docs/js/)", async () => {
    const headers = `/// An order-preserving collection of HTTP headers: \`HTTPHeaders(["Host": "example.com"])\`.\npublic struct HTTPHeaders {\n    private var headers: [String: String] = [:]\n    /// Adds a header, replacing one of the same name.\n    public mutating func add(name: String, value: String) { headers[name] = value }\n}\n`;
    const demo = `import Alamofire\n/// Shows the HTTP headers of a response.\nclass DetailViewController {\n    var headers = HTTPHeaders()\n    func showHeaders(name: String, value: String) { headers.add(name: name, value: value) }\n}\n`;
    const site = `// Shows HTTP headers of a documented item and adds a header link.\nfunction showHeaders(name, value) { return name + value; }\nfunction addHeaderLink(name) { return name; }\n`;
    const { engine, root } = await builtProject({
      "Source/HTTPHeaders.swift": headers,
      "Example/Source/DetailViewController.swift": demo,
      "docs/js/jazzy.js": site,
      "docs/docsets/Lib.docset/Contents/Resources/Documents/js/jazzy.js": site,
    });
    expect(recordedRoles(root)).toEqual({
      "Example/Source/DetailViewController.swift": "example",
      "docs/js/jazzy.js": "vendored",
      "docs/docsets/Lib.docset/Contents/Resources/Documents/js/jazzy.js": "vendored",
    });
    const files = async (query: string) => (await engine.search({ project_path: root, query, limit: 5, group_by: "file" })).results.map((r) => [r.file_path, r.role]);
    const asked = "remove the explicit call of the empty initializer when headers add a name and value";
    expect((await files(asked))[0]).toEqual(["Source/HTTPHeaders.swift", undefined]);
    // The word asks for the example.
    expect(await files("the example that shows headers")).toContainEqual(["Example/Source/DetailViewController.swift", "example"]);
  });

  it("an incremental build judges again only the files its edits can move, and records the roles a full build of the same tree does", async () => {
    // Unrelated files: what an edit of the JSON library need not judge again.
    const others = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`tools/t${i}.cpp`, `// Tool ${i}.\nint tool_${i}_run(int x) { return x + ${i}; }\nint tool_${i}_stop(int x) { return x - ${i}; }\n`]));
    const warm = makeProject({ ...PROJECT, ...others });
    const full = makeProject({ ...PROJECT, ...others });
    cleanups.push(warm.cleanup, full.cleanup);
    const cfg = resolveConfig(warm.root);
    const embedder = await createEmbedder(cfg);
    const cache: { value?: BuildCache } = {};
    await buildIndex(cfg, { embedder, cache });
    expect(recordedRoles(warm.root)["include/jsonlite_all.hpp"]).toBe("generated-copy");
    const files = Object.keys(PROJECT).length + Object.keys(others).length;

    const edits: [string, string | undefined][][] = [
      // The writer is rewritten: the header copies only the parser now, so it is the project's own source (it did not change).
      [["src/writer.cpp", "namespace jsonlite {\nclass Emitter {\npublic:\n  int emit(int v) { return v; }\n};\n}\n"]],
      // A new single header copies the parser and a new printer; the benchmark goes.
      [
        ["src/printer.cpp", "namespace jsonlite {\nclass Printer {\npublic:\n  int print_one(int v) { return v; }\n  int print_two(int v) { return v; }\n};\n}\n"],
        ["include/jsonlite_one.hpp", `#pragma once\n${PARSER}\nnamespace jsonlite {\nclass Printer {\npublic:\n  int print_one(int v) { return v; }\n  int print_two(int v) { return v; }\n};\n}\n`],
        ["bench/parse_bench.cpp", undefined],
      ],
    ];
    const seen: Record<string, string>[] = [recordedRoles(warm.root)];
    for (const batch of edits) {
      for (const p of [warm, full]) {
        for (const [rel, body] of batch) {
          if (body === undefined) p.remove(rel);
          else {
            p.write(rel, body);
            touchLater(path.join(p.root, rel));
          }
        }
      }
      await buildIndex(cfg, { embedder, cache });
      expect(cache.value?.roles?.lastJudged).toBeGreaterThan(0);
      expect(cache.value!.roles!.lastJudged).toBeLessThan(files);
      await buildIndex(resolveConfig(full.root), { embedder, force: true });
      expect(recordedRoles(warm.root)).toEqual(recordedRoles(full.root));
      seen.push(recordedRoles(warm.root));
    }
    // The edits did move roles: the first header became source, the new one a copy, the benchmark gone.
    expect(seen[1]["include/jsonlite_all.hpp"]).toBeUndefined();
    expect(seen[2]["include/jsonlite_one.hpp"]).toBe("generated-copy");
    expect(seen[2]["bench/parse_bench.cpp"]).toBeUndefined();
  });

  it("roles kept warm through random edits, additions and removals equal the roles judged from the whole tree each time", () => {
    // A fixed-seed generator: the same sequence on every run.
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    // Small files of definitions from a small pool (copies happen), most holding `main`: as files
    // come and go its holders cross the common-name bound (50) both ways.
    const factsOf = (p: string) => ({ path: p, copyMark: rand(20) === 0, defs: [...Array.from({ length: 1 + rand(5) }, () => `function:f${rand(30)}`), ...(rand(20) < 16 ? ["function:main"] : [])] });
    const tree = new Map<string, { path: string; copyMark: boolean; defs: string[] }>();
    for (let i = 0; i < 55; i++) tree.set(`src/m${i}.c`, factsOf(`src/m${i}.c`));
    const warm = new FileRoles([...tree.values()]);
    const mains = () => [...tree.values()].filter((f) => f.defs.includes("function:main")).length;
    let moved = 0;
    let crossed = 0;
    for (let step = 0; step < 300; step++) {
      const changed = Array.from({ length: 1 + rand(3) }, () => factsOf(`src/m${rand(62)}.c`));
      const paths = [...tree.keys()];
      const removed = Array.from({ length: rand(2) }, () => paths[rand(paths.length)]);
      const before = { roles: JSON.stringify(fileRoles([...tree.values()])), common: mains() > 50 };
      for (const p of removed) tree.delete(p);
      for (const f of changed) tree.set(f.path, f);
      warm.update(changed, removed.filter((p) => !changed.some((f) => f.path === p)));
      const full = fileRoles([...tree.values()]);
      expect(warm.roles()).toEqual(full);
      if (JSON.stringify(full) !== before.roles) moved++;
      if (before.common !== mains() > 50) crossed++;
    }
    // The edits moved roles often, and `main` crossed the bound: the comparison saw both.
    expect(moved).toBeGreaterThan(30);
    expect(crossed).toBeGreaterThan(5);
  });

  it("Gradle's Kotlin scripts, SwiftPM's manifest and tool configs are build scripts: they rank below the code a report is about unless the question asks about the build", async () => {
    const { engine, root } = await builtProject({
      "okhttp/src/main/kotlin/okhttp3/Interceptor.kt": `package okhttp3

/** Observes, modifies and short-circuits requests going out and the responses coming back in. */
fun interface Interceptor {
  fun intercept(chain: Chain): Response

  /** The chain of interceptors a call passes through: its request, connection and timeouts. */
  interface Chain {
    fun request(): Request
    fun proceed(request: Request): Response
    fun connectTimeoutMillis(): Int
  }
}
`,
      "okhttp/build.gradle.kts": `plugins {
  kotlin("jvm")
}

// The interceptor chain's API is checked for binary compatibility against the last release.
apiValidation {
  ignoredPackages += "okhttp3.internal"
}

dependencies {
  api(libs.squareup.okio)
  testImplementation(libs.junit)
}
`,
      "build-logic/src/main/kotlin/okhttp.jvm-conventions.gradle.kts": `// Compiles every module for Java 8 and checks binary compatibility of its API.
tasks.withType<JavaCompile> { options.release.set(8) }
`,
      "Package.swift": `// swift-tools-version:5.7
import PackageDescription

// The interceptor library for Apple platforms.
let package = Package(name: "Interceptors", targets: [.target(name: "Interceptors")])
`,
    });
    const roles = recordedRoles(root);
    expect(roles["okhttp/build.gradle.kts"]).toBe("build-script");
    expect(roles["build-logic/src/main/kotlin/okhttp.jvm-conventions.gradle.kts"]).toBe("build-script");
    expect(roles["Package.swift"]).toBe("build-script");
    expect(roles["okhttp/src/main/kotlin/okhttp3/Interceptor.kt"]).toBeUndefined();

    const files = async (query: string) => [...new Set((await engine.search({ project_path: root, query, limit: 20 })).results.map((r) => r.file_path))];
    // A report about the chain's API: the interceptor's source first, the scripts that mention it after.
    expect((await files("Fix a binary-incompatible API change in the interceptor chain"))[0]).toBe("okhttp/src/main/kotlin/okhttp3/Interceptor.kt");
    // Asked about the Gradle build, its scripts are not held back.
    expect((await files("which dependencies does the Gradle build declare: okio and junit?"))[0]).toBe("okhttp/build.gradle.kts");
  });

  it("a sample's namesake of a definition the question names stays below the project's own definition; asked for a recipe, the sample leads", async () => {
    const { engine, root } = await builtProject({
      "okhttp/src/main/kotlin/okhttp3/RequestBody.kt": `package okhttp3

/** The body of a request: its content type, length and bytes. */
abstract class RequestBody {
  abstract fun contentType(): MediaType?

  /** Returns a body that compresses this one with gzip as it is written. */
  fun gzip(): RequestBody = GzipRequestBody(this)
}
`,
      "samples/guide/src/main/java/okhttp3/recipes/RequestBodyCompression.java": `package okhttp3.recipes;

/** Compresses request bodies with gzip: an interceptor adds the gzip header and gzips each request body. */
public final class RequestBodyCompression {
  /** Gzips the request body of every request and sets Content-Encoding: gzip. */
  static final class GzipRequestInterceptor implements Interceptor {
    public Response intercept(Chain chain) throws IOException {
      Request original = chain.request();
      Request compressed = original.newBuilder().header("Content-Encoding", "gzip").method(original.method(), gzip(original.body())).build();
      return chain.proceed(compressed);
    }

    /** The request body, gzipped. */
    private RequestBody gzip(final RequestBody body) {
      return body.gzip();
    }
  }
}
`,
    });
    expect(recordedRoles(root)["samples/guide/src/main/java/okhttp3/recipes/RequestBodyCompression.java"]).toBe("example");
    const files = async (query: string) => [...new Set((await engine.search({ project_path: root, query, limit: 20 })).results.map((r) => r.file_path))];
    expect((await files("Move gzip() from RequestBody to Request.Builder"))[0]).toBe("okhttp/src/main/kotlin/okhttp3/RequestBody.kt");
    expect((await files("the recipe that posts a gzip-compressed request body"))[0]).toBe("samples/guide/src/main/java/okhttp3/recipes/RequestBodyCompression.java");
  });

  it("a guessed name (a method of an unknown receiver) does not lift vendored code over the project's own", async () => {
    // spdlog's report wrote `host.c_str()`: every `c_str` of its bundled fmt copy was named (weakly) and escaped the demotion.
    const { engine, root } = await builtProject({
      "include/netlog/udp_client.h": `#pragma once
#include <string>
namespace netlog {
// Sends log lines as UDP datagrams to a host; on Windows the host name is converted to wide chars for InetPton.
class udp_client {
public:
  // Resolves the host and sends one datagram.
  int send(const std::string &host, const char *data) { return resolve(host.c_str()) + data[0]; }
  int resolve(const char *host) { return host[0]; }
};
}
`,
      "include/netlog/bundled/format.h": `#pragma once
namespace fmt {
// Converts UTF-8 text to UTF-16 wide chars, for Windows APIs taking wchar_t strings.
class utf8_to_utf16 {
public:
  // The converted wide chars as a UTF-16 C string.
  const wchar_t *c_str() const { return buffer_; }
  const wchar_t *buffer_;
};
}
`,
    });
    const q = "Fixed compile error when building on Windows with UNICODE\n\nInetPton expects wide chars with UNICODE defined: convert host.c_str() from UTF-8 into wchar_t before the UDP client resolves the host.";
    const { results } = await engine.search({ project_path: root, query: q, group_by: "file" });
    expect(results.map((r) => r.file_path)).toEqual(["include/netlog/udp_client.h", "include/netlog/bundled/format.h"]);
    expect(results[1].role).toBe("vendored");
  });
  it("examples and releases unpacked under a versioned name have roles; a report's body asks for none", async () => {
    expect(roleByPath("examples/basic.cpp", false)).toBe("example");
    expect(roleByPath("src/Snippets/Docs/Retry.cs", false)).toBe("example");
    expect(roleByPath("samples/Retries/Program.cs", false)).toBe("example");
    expect(roleByPath("test/gtest-1.11.0/googletest/src/gtest.cc", false)).toBe("vendored");
    expect(roleByPath("src/fmt-core/format.cc", false)).toBe("source");
    expect(roleByPath("include/v1.2/api.h", false)).toBe("source");
    // Polly's fix of negative retry delays: its docs' snippet and its benchmark, which the body says were added, came first.
    const { engine, root } = await builtProject({
      "src/Retry/RetryHelper.cs": `namespace Retry;

/// <summary>Computes the delay before each retry of an attempt.</summary>
internal static class RetryHelper {
    /// <summary>The delay of an attempt: constant, linear or exponential backoff, never negative.</summary>
    public static double GetRetryDelay(int attempt, double baseDelay) { return baseDelay * System.Math.Pow(2, attempt); }
}
`,
      "src/Snippets/Docs/Retry.cs": `namespace Snippets.Docs;

/// <summary>Retry snippets of the docs.</summary>
internal static class RetrySnippets {
    /// <summary>Exponential delay of large retries, as the docs show it.</summary>
    public static double ExponentialDelay(int attempt) { return Retry.RetryHelper.GetRetryDelay(attempt, 1.0); }
}
`,
      "bench/Retry.Benchmarks/RetryBenchmark.cs": `namespace Benchmarks;

/// <summary>Benchmark of exponential retry delays for large retries.</summary>
public class RetryBenchmark {
    /// <summary>Exponential delay of large retries.</summary>
    public double ExponentialDelay() { return Retry.RetryHelper.GetRetryDelay(2000, 1.0); }
}
`,
      "src/Timeout/TimeoutHelper.cs": "namespace Timeout;\n\n/// <summary>Cancels an attempt that runs past its timeout.</summary>\ninternal static class TimeoutHelper {\n    /// <summary>Whether the timeout of an attempt has passed.</summary>\n    public static bool Expired(double elapsed, double timeout) { return elapsed > timeout; }\n}\n",
      "src/Fallback/FallbackHelper.cs": "namespace Fallback;\n\n/// <summary>Gives a fallback value when an attempt fails.</summary>\ninternal static class FallbackHelper {\n    /// <summary>The fallback value of a failed attempt.</summary>\n    public static int Value(int fallback) { return fallback; }\n}\n",
    });
    const report = [
      "Fix retry delay going negative for large retries with exponential delays (#2164)",
      "",
      "- Add a repro for the issue and an assertion that the delay's value is never negative.",
      "- Fix retry delays going negative with exponential backoff after 1,024 retries.",
      "- Add a benchmark and update the docs snippet showing exponential delays of large retries.",
    ].join("\n");
    const { results } = await engine.search({ project_path: root, query: report, group_by: "file" });
    expect(results[0].file_path).toBe("src/Retry/RetryHelper.cs");
    expect(results.find((r) => r.file_path === "src/Snippets/Docs/Retry.cs")?.role).toBe("example");
    // Asked for on the first line, examples keep their rank.
    const asked = await engine.search({ project_path: root, query: "the docs snippet of exponential delays for large retries", group_by: "file" });
    expect(asked.results[0].file_path).toBe("src/Snippets/Docs/Retry.cs");
  });

  it("a C# file declared in System.* outside a System directory is a polyfill of the platform's types: vendored, below the project's source (Polly's LegacySupport/)", async () => {
    const attribute = (name: string, doc: string) => `// Licensed to the .NET Foundation under one or more agreements.
namespace System.Diagnostics.CodeAnalysis;

/// <summary>${doc}</summary>
[AttributeUsage(AttributeTargets.Method)]
internal sealed class ${name}Attribute : Attribute
{
    /// <summary>Initializes the attribute with the member ${doc.toLowerCase()}</summary>
    public ${name}Attribute(string memberSignature) { MemberSignature = memberSignature; }
    /// <summary>The signature of the dependent member.</summary>
    public string MemberSignature { get; }
}
`;
    const { engine, root } = await builtProject({
      "src/LegacySupport/DynamicDependencyAttribute.cs": attribute("DynamicDependency", "States a dependency that one member has on another, kept when trimming."),
      "src/LegacySupport/RequiresUnreferencedCodeAttribute.cs": attribute("RequiresUnreferencedCode", "Marks a member whose dependencies trimming may remove."),
      "src/Polly/Context.Dictionary.cs": `namespace Polly;

/// <summary>The context's dictionary of values keyed by string.</summary>
public partial class Context
{
    private readonly System.Collections.Generic.Dictionary<string, object> items = new();
    /// <summary>Adds a value to the context.</summary>
    public void Add(string key, object value) { items[key] = value; }
}
`,
      // The platform's own source (dotnet/runtime's layout) is no copy.
      "src/libraries/System.Private.CoreLib/src/System/Lazy.cs": "namespace System;\n\n/// <summary>Lazy initialization.</summary>\npublic class Lazy\n{\n    /// <summary>The value.</summary>\n    public object Value() { return null; }\n}\n",
    });
    const q = "Update to .NET 10 SDK\n\n- States the dependency that one member of the context's dictionary has on another, kept when trimming.";
    const { results } = await engine.search({ project_path: root, query: q, group_by: "file" });
    expect(results[0]).toMatchObject({ file_path: "src/Polly/Context.Dictionary.cs" });
    expect(results.find((r) => r.file_path === "src/LegacySupport/DynamicDependencyAttribute.cs")?.role).toBe("vendored");
    expect(recordedRoles(root)).toEqual({
      "src/LegacySupport/DynamicDependencyAttribute.cs": "vendored",
      "src/LegacySupport/RequiresUnreferencedCodeAttribute.cs": "vendored",
    });
  });

  it("a file holding three files' licence headers is a copy joined from them; two are one file with a borrowed part (fmt's fused gmock-gtest-all.cc, jq's jv_dtoa.c)", async () => {
    const licence = (who: string) => `// Copyright 2008, ${who}\n// All rights reserved.\n//\n// Redistribution and use in source and binary forms are permitted.\n`;
    const body = (fn: string) => Array.from({ length: 60 }, (_, i) => `int ${fn}_${i}(int x) { return x + ${i}; }`).join("\n") + "\n";
    const { engine, root } = await builtProject({
      "src/fused/gmock-gtest-all.cc": `${licence("Google Inc.")}// Build Google Test by compiling a single file.\n${body("gtest")}${licence("Google Inc.")}${body("gmock")}${licence("Google Inc.")}${body("matchers")}`,
      "src/dtoa.c": `${licence("David M. Gay")}${body("dtoa")}${licence("The jq authors")}${body("jvp")}`,
      "src/format.cc": "// Formats a value.\nint format_value(int x) { return x; }\n",
    });
    expect(recordedRoles(root)).toEqual({ "src/fused/gmock-gtest-all.cc": "generated-copy" });
    const { results } = await engine.search({ project_path: root, query: "gmock_3 returns its argument", group_by: "file" });
    expect(results.find((r) => r.file_path === "src/fused/gmock-gtest-all.cc")?.role).toBe("generated-copy");
  });

  it("roles by path: Go's doc packages are source; documentation, demos and build manifests are not", () => {
    const facts = (path: string) => ({ path, copyMark: false, defs: [] });
    const roles = fileRoles(["src/go/doc/comment.go", "src/cmd/doc/main.go", "docs/conf.py", "Example/Source/App.swift", "okhttp/build.gradle.kts", "Package.swift", "third_party/zlib-1.3.1/inflate.c", "lib/demo/run.rb", "src/parser.c", "src/Polly/Properties/AssemblyInfo.cs", "src/Polly/Policy.cs"].map(facts));
    expect(roles).toEqual({
      // The assembly's attributes (Polly's TypeForwardedTo list ranked first for a report on AoT compilation).
      "src/Polly/Properties/AssemblyInfo.cs": "build-script",
      "docs/conf.py": "example",
      "Example/Source/App.swift": "example",
      "okhttp/build.gradle.kts": "build-script",
      "Package.swift": "build-script",
      "third_party/zlib-1.3.1/inflate.c": "vendored",
      "lib/demo/run.rb": "example",
    });
  });
  it("a Python library bundled in a package's packages/ is vendored, below the package's own code; its import shim and a monorepo's packages/ are source (requests' packages/urllib3)", async () => {
    expect(roleByPath("requests/packages/urllib3/connectionpool.py", false)).toBe("vendored");
    expect(roleByPath("requests/packages/urllib3/contrib/pyopenssl.py", false)).toBe("vendored");
    expect(roleByPath("src/pip/_vendor/six.py", false)).toBe("vendored");
    expect(roleByPath("requests/packages/__init__.py", false)).toBe("source");
    expect(roleByPath("packages/core/src/index.ts", false)).toBe("source");
    expect(roleByPath("packages/core/lib/http.py", false)).toBe("source");
    const { engine, root } = await builtProject({
      "requests/adapters.py": `"""Transport adapters."""\n\n\nclass HTTPAdapter:\n    """The built-in HTTP adapter."""\n\n    def send(self, request, chunked=False):\n        """Sends chunked requests; reads the HTTP response of a chunked request per byte."""\n        return (request, chunked)\n`,
      "requests/packages/__init__.py": `"""Import shim for the bundled libraries."""\nimport sys\n`,
      // The bundled library matches the report better (its "buffering"): before the role, it came first.
      "requests/packages/urllib3/connectionpool.py": `"""Connection pools."""\n\n\nclass HTTPConnectionPool:\n    """A pool of connections."""\n\n    def urlopen(self, request, chunked=False):\n        """Opens a request; reads the HTTP response of a chunked request with buffering."""\n        return (request, chunked)\n`,
    });
    expect(recordedRoles(root)).toEqual({ "requests/packages/urllib3/connectionpool.py": "vendored" });
    const q = "Use buffering for HTTP responses on chunked requests\n\nFor chunked requests the response is read without buffering, one byte per recv() call on the socket; the non-chunked requests use urlopen, which reads the HTTP response with buffering.";
    const { results } = await engine.search({ project_path: root, query: q, group_by: "file" });
    expect(results[0].file_path).toBe("requests/adapters.py");
    expect(results.find((r) => r.file_path === "requests/packages/urllib3/connectionpool.py")?.role).toBe("vendored");
  });

  it("hidden files and directories are tooling (a CI setup script, .github/)", () => {
    expect(roleByPath(".travis_setup.sh", false)).toBe("build-script");
    expect(roleByPath("ci/.travis.sh", false)).toBe("build-script");
    expect(roleByPath(".github/scripts/release.py", false)).toBe("build-script");
    expect(roleByPath("src/.hidden/x.c", false)).toBe("build-script");
    expect(roleByPath("src/parser.c", false)).toBe("source");
    expect(roleByPath("../src/parser.c", false)).toBe("source");
  });

  it("shell scripts are a project's tooling when another language's source outnumbers them; a project mostly of shell keeps them as source, and an edit moving the share judges them again", async () => {
    const facts = (path: string, language: string) => ({ path, copyMark: false, defs: [], language });
    const c = Array.from({ length: 6 }, (_, i) => facts(`src/f${i}.c`, "c"));
    expect(fileRoles([...c, facts("compile-ios.sh", "bash"), facts("script/test", "bash"), facts("tests/run.sh", "bash")])).toEqual({ "compile-ios.sh": "build-script", "script/test": "build-script" });
    // nvm's shape: the shell library is the project, beside one JavaScript file.
    expect(fileRoles([facts("nvm.sh", "bash"), facts("install.sh", "bash"), facts("bash_completion", "bash"), facts("lib/versions.js", "javascript")])).toEqual({});
    // Incrementally: C files removed until shell scripts are no minority, then added back.
    const roles = new FileRoles([...c, facts("build-ios.sh", "bash"), facts("make-dist.sh", "bash")]);
    expect(roles.roles()).toEqual({ "build-ios.sh": "build-script", "make-dist.sh": "build-script" });
    roles.update([], c.slice(3).map((f) => f.path));
    expect(roles.roles()).toEqual(fileRoles([...c.slice(0, 3), facts("build-ios.sh", "bash"), facts("make-dist.sh", "bash")]));
    expect(roles.roles()).toEqual({});
    roles.update(c.slice(3), []);
    expect(roles.roles()).toEqual({ "build-ios.sh": "build-script", "make-dist.sh": "build-script" });

    // Built: a report on a regex's parse depth finds the C source, not the iOS build script.
    const { engine, root } = await builtProject({
      "src/main.c": "/* The command line: parses options and runs the program. */\n#include <stdio.h>\n/* Limits the parse depth of a regex against stack overflows in some builds. */\nint parse_regex_with_depth_limit(const char *re, int depth) { return depth > 1024 ? -1 : re[0]; }\nint main(int argc, char **argv) { return parse_regex_with_depth_limit(argv[0], argc); }\n",
      "src/jv.c": "/* Values. */\nint jv_number(int x) { return x; }\nint jv_string(int x) { return x; }\n",
      "src/util.c": "/* Utilities. */\nint util_min(int a, int b) { return a < b ? a : b; }\n",
      // Matching the report better than the C source (its words "build", "stack", "overflow"): before the role, it came first.
      "compile-ios.sh": "#!/bin/bash\n# Builds the regex library for iOS with a parse depth limit against stack overflow.\nbuild_regex() {\n  echo \"build regex with a stack limit $1\"\n}\nbuild_regex 1024\n",
    });
    expect(recordedRoles(root)).toEqual({ "compile-ios.sh": "build-script" });
    const q = "Fix stack-overflow by limit regex parse depth\n\nA regex's parse depth had no limit low enough to protect from stack overflows in some builds; a limit of 1024 gives more margin.";
    const { results } = await engine.search({ project_path: root, query: q, group_by: "file" });
    expect(results[0].file_path).toBe("src/main.c");
  });
});
