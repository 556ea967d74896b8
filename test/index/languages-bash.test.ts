import { describe, expect, it } from "vitest";
import { builtFixture } from "./fixture.js";

/**
 * Shell on real code: bats-core 1.13.0 from the npm package bats (lib/bats-core/*.bash, install.sh, uninstall.sh, and libexec/bats-core/bats-exec-file given a .sh extension: codemem reads shell by extension),
 * with its licence.
 */
const built = () => builtFixture("bash-bats");

describe("Shell (bats-core)", () => {
  it("extracts functions in both forms with signatures, comments and line ranges", async () => {
    const { result, node, g } = await built();
    expect(result.files_indexed).toBe(11);
    expect(result.unsupported).toEqual([]);
    expect(node("lib/bats-core/formatter.bash::bats_parse_internal_extended_tap")).toMatchObject({ type: "function", language: "bash", signature: "function bats_parse_internal_extended_tap()", line_start: 26, line_end: 134 });
    expect(node("lib/bats-core/formatter.bash::bats_parse_internal_extended_tap").docstring).toMatch(/^reads \(extended\) bats tap streams from stdin/);
    expect(node("libexec/bats-core/bats-exec-file.sh::bats_run_setup_file")).toMatchObject({ signature: "bats_run_setup_file()", parent: "libexec/bats-core/bats-exec-file.sh" });
    // A shellcheck directive is no documentation.
    expect(node("libexec/bats-core/bats-exec-file.sh::bats_file_exit_trap").docstring).not.toMatch(/shellcheck/);
    expect(g.nodes.filter((n: any) => n.language === "bash" && n.type === "function").length).toBeGreaterThan(60);
  });

  it("resolves source of a path built from variables to the file, and calls into sourced files", async () => {
    const { edge } = await built();
    // source "$BATS_ROOT/$BATS_LIBDIR/bats-core/common.bash"
    expect(edge("libexec/bats-core/bats-exec-file.sh", "lib/bats-core/common.bash", "imports")).toBe(true);
    expect(edge("libexec/bats-core/bats-exec-file.sh::bats_run_tests_in_parallel", "lib/bats-core/semaphore.bash::bats_semaphore_setup")).toBe(true);
    expect(edge("lib/bats-core/tracing.bash::bats_print_stack_trace", "lib/bats-core/common.bash::bats_quote_code")).toBe(true);
  });

  it("reads a file whose double-quoted eval strings hold a nested expansion (`\\${#${array}[@]}`)", async () => {
    const { node } = await built();
    // @vscode/tree-sitter-wasm's grammar read all of common.bash as one ERROR from there: its functions after it were lost.
    for (const f of ["bats_append_arrays_as_args", "bats_format_file_line_reference", "bats_approx_realpath"]) {
      expect(node(`lib/bats-core/common.bash::${f}`)).toMatchObject({ type: "function", parent: "lib/bats-core/common.bash" });
    }
  });

  it("answers a question about it", async () => {
    const { engine, root } = await built();
    const r = await engine.search({ project_path: root, query: "run tests in parallel with a semaphore", limit: 5 });
    expect(r.results.map((x: any) => x.file_path)).toContain("lib/bats-core/semaphore.bash");
  });
});
