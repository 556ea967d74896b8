import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * C and C++ on real code: Argon2's reference implementation (from the argon2 npm package), the
 * bcrypt npm package's C++ sources and node-tree-sitter's C++ binding (the tree-sitter npm package),
 * each a few files of the original with its licence.
 */
const built = builtFixture;

describe("C (Argon2)", () => {
  it("extracts functions, typedef'd structs and enums, macros, with signatures, doc comments and line ranges", async () => {
    const { result, node } = await built("c-argon2");
    expect(result.files_indexed).toBe(6);
    expect(node("src/core.c::validate_inputs")).toMatchObject({ type: "function", language: "c", signature: "int validate_inputs(const argon2_context *context)", parent: "src/core.c" });
    expect(node("src/core.c::fill_memory_blocks_st")).toMatchObject({ docstring: "Single-threaded version for p=1 case", line_start: 260, line_end: 275 });
    // `typedef struct Argon2_Context {...} argon2_context;` is one node, by the name code uses.
    const ctx = node("include/argon2.h::argon2_context");
    expect(ctx).toMatchObject({ type: "type", signature: "typedef struct Argon2_Context" });
    expect(ctx.docstring).toMatch(/^Context: structure to hold Argon2 inputs/);
    expect(node("include/argon2.h::argon2_type")).toMatchObject({ type: "type", docstring: "Argon2 primitive type" });
    expect(node("src/core.h::CONST_CAST")).toMatchObject({ type: "function" });
    // A licence header is not the file's description.
    expect(node("src/core.c").docstring).toBe("");
  });

  it("resolves includes beside the file and through an include directory, and calls across files to the definition", async () => {
    const { edge, g } = await built("c-argon2");
    expect(edge("src/argon2.c", "src/core.h", "imports")).toBe(true); // "core.h" beside argon2.c
    expect(edge("src/argon2.c", "include/argon2.h", "imports")).toBe(true); // "argon2.h" from include/
    expect(edge("src/core.h", "include/argon2.h", "imports")).toBe(true);
    // <string.h> is no project file.
    expect(g.edges.filter((e: any) => e.type === "imports" && e.source === "src/argon2.c")).toHaveLength(2);
    // argon2.c calls validate_inputs, declared in core.h and defined in core.c: the edge reaches the definition.
    expect(edge("src/argon2.c::argon2_ctx", "src/core.c::validate_inputs")).toBe(true);
    expect(edge("src/argon2.c::argon2_ctx", "src/core.c::fill_memory_blocks")).toBe(true);
    expect(edge("src/argon2.c::argon2i_hash_raw", "src/argon2.c::argon2_hash")).toBe(true);
    // Prototypes are not nodes of their own: one node per function, where its code is.
    expect(g.nodes.filter((n: any) => n.name === "validate_inputs").map((n: any) => n.id)).toEqual(["src/core.c::validate_inputs"]);
  });
});

describe("C++ (bcrypt, node-tree-sitter)", () => {
  it("extracts classes with their methods, base classes, functions and doc comments", async () => {
    const { result, node, edge } = await built("cpp-bcrypt");
    expect(result.files_indexed).toBe(3);
    expect(node("src/bcrypt.cc::bcrypt_gensalt")).toMatchObject({ type: "function", language: "cpp", signature: "void bcrypt_gensalt(char minor, u_int8_t log_rounds, u_int8_t *seed, char *gsalt)" });
    expect(node("src/bcrypt.cc::bcrypt_gensalt").docstring).toMatch(/^Generates a salt for this version of crypt\./);
    expect(node("src/bcrypt_node.cc::SaltAsyncWorker")).toMatchObject({ type: "class", signature: "class SaltAsyncWorker : public Napi::AsyncWorker" });
    expect(node("src/bcrypt_node.cc::SaltAsyncWorker.Execute")).toMatchObject({ type: "method", parent: "src/bcrypt_node.cc::SaltAsyncWorker" });
    expect(node("src/bcrypt_node.cc::SaltAsyncWorker.~SaltAsyncWorker")).toMatchObject({ type: "method" });
    expect(node("src/node_blf.h::blf_ctx")).toMatchObject({ type: "type", docstring: "Blowfish context" });
    // A method calls a function of another file, declared in the header both include.
    expect(edge("src/bcrypt_node.cc::SaltAsyncWorker.Execute", "src/bcrypt.cc::bcrypt_gensalt")).toBe(true);
    expect(edge("src/bcrypt_node.cc::CompareSync", "src/bcrypt.cc::bcrypt")).toBe(true);
    expect(edge("src/bcrypt_node.cc", "src/node_blf.h", "imports")).toBe(true);
    // `new EncryptAsyncWorker(...)` constructs the class.
    expect(edge("src/bcrypt_node.cc::Encrypt", "src/bcrypt_node.cc::EncryptAsyncWorker")).toBe(true);
  });

  it("attaches out-of-class definitions (Tree::Init) to their class in the header, with namespaces in qualified names", async () => {
    const { node, edge } = await built("cpp-node-tree-sitter");
    expect(node("src/tree.h::node_tree_sitter.Tree")).toMatchObject({ type: "class", qualified_name: "node_tree_sitter.Tree" });
    expect(node("src/tree.cc::node_tree_sitter.Tree.Init")).toMatchObject({ type: "method", parent: "src/tree.h::node_tree_sitter.Tree", signature: "void Tree::Init(Napi::Env env, Napi::Object exports)" });
    expect(node("src/language.cc::node_tree_sitter.language_methods.UnwrapLanguage")).toMatchObject({ type: "function" });
    // `Tree::Init(env, exports)` in binding.cc reaches the definition in tree.cc through the class.
    expect(edge("src/binding.cc::node_tree_sitter.InitAll", "src/tree.cc::node_tree_sitter.Tree.Init")).toBe(true);
    expect(edge("src/tree.cc::node_tree_sitter.Tree.GetChangedRanges", "src/conversions.cc::node_tree_sitter.RangeToJS")).toBe(true);
    expect(edge("src/tree.h", "src/tree.cc::node_tree_sitter.Tree.Init", "contains")).toBe(false);
    expect(edge("src/tree.h::node_tree_sitter.Tree", "src/tree.cc::node_tree_sitter.Tree.Init", "contains")).toBe(true);
    expect(edge("src/tree.cc", "src/tree.h", "imports")).toBe(true); // "./tree.h"
  });
});

describe("Objective-C read as C, Objective-C++ as C++", () => {
  it("indexes the C functions and structs of .m and .mm files and their #imports, rather than reporting them unsupported", async () => {
    const { result, node, edge } = await builtProject({
      "Sources/Geometry.h": "typedef struct GeoPoint { double lat; double lon; } GeoPoint;\ndouble geo_distance(GeoPoint a, GeoPoint b);\n",
      "Sources/Geometry.m":
        '#import "Geometry.h"\n#import <Foundation/Foundation.h>\n\n/* Great-circle distance in metres. */\ndouble geo_distance(GeoPoint a, GeoPoint b) {\n  return haversine(a.lat, a.lon, b.lat, b.lon);\n}\n\nstatic double haversine(double a, double b, double c, double d) { return a + b + c + d; }\n\n@interface Tracker : NSObject\n- (void)start;\n@end\n\n@implementation Tracker\n- (void)start { }\n@end\n',
      "Sources/Bridge.mm": '#import "Geometry.h"\n\nnamespace bridge {\nclass Router {\npublic:\n  double route(GeoPoint a, GeoPoint b) { return geo_distance(a, b); }\n};\n}\n',
    });
    expect(result.unsupported).toEqual([]);
    expect(result.files_indexed).toBe(3);
    expect(node("Sources/Geometry.m::geo_distance")).toMatchObject({ type: "function", language: "c", docstring: "Great-circle distance in metres." });
    expect(node("Sources/Geometry.m::haversine")).toMatchObject({ type: "function" });
    expect(edge("Sources/Geometry.m::geo_distance", "Sources/Geometry.m::haversine")).toBe(true);
    expect(node("Sources/Bridge.mm::bridge.Router.route")).toMatchObject({ type: "method", language: "cpp" });
    // `#import "x.h"` is an include.
    expect(edge("Sources/Geometry.m", "Sources/Geometry.h", "imports")).toBe(true);
    expect(edge("Sources/Bridge.mm", "Sources/Geometry.h", "imports")).toBe(true);
    expect(edge("Sources/Bridge.mm::bridge.Router.route", "Sources/Geometry.m::geo_distance")).toBe(true);
  });
});

/**
 * Declarations wrapped in export, inline and noexcept macros, as spdlog (MIT) writes them (lines of
 * its async_logger.h, sinks/rotating_file_sink.h, async_logger-inl.h and details/os-inl.h, abridged)
 * and fmt's `FMT_CONSTEXPR FMT_INLINE`: the grammar cannot expand the macros, and left the class an
 * ERROR named after nothing and the methods in ERROR regions. The sink's `= {}` default is an error
 * of the grammar's own, which stays.
 */
const SPDLOG_HEADER = `#pragma once
#include <spdlog/logger.h>

namespace spdlog {

class SPDLOG_API async_logger final : public std::enable_shared_from_this<async_logger>,
                                      public logger {
public:
    std::shared_ptr<logger> clone(std::string new_name) override;

protected:
    void sink_it_(const details::log_msg &msg) override;
    void flush_() override;
};

namespace sinks {
template <typename Mutex>
class rotating_file_sink final : public base_sink<Mutex> {
public:
    rotating_file_sink(filename_t base_filename,
                       std::size_t max_size,
                       std::size_t max_files,
                       bool rotate_on_open = false,
                       const file_event_handlers &event_handlers = {});
    static filename_t calc_filename(const filename_t &filename, std::size_t index);
};
}  // namespace sinks
}  // namespace spdlog
`;

const SPDLOG_INL = `#pragma once
#include <spdlog/async_logger.h>

// send the log message to the thread pool
SPDLOG_INLINE void spdlog::async_logger::sink_it_(const details::log_msg &msg) {
    post_async_log(shared_from_this(), msg);
}

SPDLOG_INLINE std::shared_ptr<spdlog::logger> spdlog::async_logger::clone(std::string new_name) {
    auto cloned = std::make_shared<spdlog::async_logger>(*this);
    cloned->name_ = std::move(new_name);
    return cloned;
}

namespace spdlog {
namespace details {
namespace os {

SPDLOG_INLINE spdlog::log_clock::time_point now() SPDLOG_NOEXCEPT {
    return log_clock::now();
}

std::string SPDLOG_INLINE getenv(const char *field) {
    char *buf = ::getenv(field);
    return buf ? buf : std::string{};
}

FMT_CONSTEXPR FMT_INLINE auto parse_align(const char* begin) -> const char* {
    return begin;
}

}  // namespace os
}  // namespace details
}  // namespace spdlog
`;

/** googletest's (BSD-3-Clause) gtest-assertion-result.h, abridged: an export macro beside an attribute. */
const GTEST_ASSERTION_RESULT = `namespace testing {

class GTEST_API_ [[nodiscard]] AssertionResult {
 public:
  // Copy constructor.
  // Used in EXPECT_TRUE/FALSE(assertion_result).
  AssertionResult(const AssertionResult& other);

  template <typename T,
            std::enable_if_t<!std::is_convertible_v<const T&, AssertionResult>,
                             int> = 0>
  explicit AssertionResult(const T& success) : success_(success) {}

  // Returns the text streamed into this AssertionResult. Test assertions
  // use it when they fail (i.e., the predicate's outcome doesn't match the
  // assertion's expectation). When nothing has been streamed into the
  // object, returns an empty string.
  const char* message() const {
    return message_ != nullptr ? message_->c_str() : "";
  }
};

}  // namespace testing
`;

describe("C++ declarations wrapped in macros", () => {
  it("reads the class and functions behind export, inline and noexcept macros by their own names and lines", async () => {
    const { node } = await builtProject({ "include/spdlog/async_logger.h": SPDLOG_HEADER, "include/spdlog/async_logger-inl.h": SPDLOG_INL, "gtest/gtest-assertion-result.h": GTEST_ASSERTION_RESULT });
    expect(node("include/spdlog/async_logger.h::spdlog.async_logger")).toMatchObject({ type: "class", line_start: 6, line_end: 14 });
    expect(node("include/spdlog/async_logger.h::spdlog.sinks.rotating_file_sink")).toMatchObject({ type: "class", line_start: 18, line_end: 26 });
    expect(node("include/spdlog/async_logger.h::spdlog.async_logger").signature).toMatch(/^class SPDLOG_API async_logger final : public std::enable_shared_from_this<async_logger>/);
    const inl = "include/spdlog/async_logger-inl.h::";
    expect(node(`${inl}async_logger.sink_it_`)).toMatchObject({ type: "method", line_start: 5, line_end: 7, parent: "include/spdlog/async_logger.h::spdlog.async_logger", docstring: "send the log message to the thread pool" });
    expect(node(`${inl}async_logger.clone`)).toMatchObject({ type: "method", line_start: 9, line_end: 13 });
    expect(node(`${inl}spdlog.details.os.now`)).toMatchObject({ type: "function", line_start: 19, line_end: 21, signature: "spdlog::log_clock::time_point now() SPDLOG_NOEXCEPT" });
    expect(node(`${inl}spdlog.details.os.getenv`)).toMatchObject({ type: "function", line_start: 23, line_end: 26 });
    expect(node(`${inl}spdlog.details.os.parse_align`)).toMatchObject({ type: "function", line_start: 28, line_end: 30 });
    expect(node("gtest/gtest-assertion-result.h::testing.AssertionResult")).toMatchObject({ type: "class", line_start: 3, line_end: 21 });
    expect(node("gtest/gtest-assertion-result.h::testing.AssertionResult.message")).toMatchObject({ type: "method", line_start: 18, line_end: 20 });
  });
});

describe("C++ conversion operators", () => {
  it("are methods named by the type they convert to, in the class or defined outside it", async () => {
    const { node } = await builtProject({
      // googletest's AssertionResult (abridged), and a definition outside its class.
      "gtest/assertion.h": `namespace testing {
class AssertionResult {
 public:
  // Returns true if and only if the assertion succeeded.
  explicit operator bool() const { return success_; }  // NOLINT
  operator const char*() const;
 private:
  bool success_;
};
}  // namespace testing
`,
      "gtest/assertion.cc": `#include "assertion.h"
namespace testing {
// The failure message, or "" when it succeeded.
AssertionResult::operator const char*() const {
  return success_ ? "" : "failed";
}
}  // namespace testing
`,
    });
    expect(node("gtest/assertion.h::testing.AssertionResult.operator bool")).toMatchObject({ type: "method", name: "operator bool", line_start: 5, line_end: 5, docstring: "Returns true if and only if the assertion succeeded." });
    expect(node("gtest/assertion.cc::testing.AssertionResult.operator const char*")).toMatchObject({ type: "method", name: "operator const char*", line_start: 4, line_end: 6, docstring: 'The failure message, or "" when it succeeded.' });
  });
});
