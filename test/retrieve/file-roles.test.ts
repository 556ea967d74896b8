import { describe, expect, it } from "vitest";
import { builtProject } from "../index/fixture.js";

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
});
