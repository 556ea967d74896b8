import { describe, expect, it } from "vitest";
import { builtProject } from "../index/fixture.js";

/**
 * A small Bash project: helper libraries of functions, and a diagnostics script of commands with no
 * function of its own (one module node).
 */
export const PROJECT = {
  "lib/log.sh": "#!/bin/bash\n# Logging helpers.\n\nlog_info() {\n  echo \"[info] $*\" >&2\n}\n\nlog_warn() {\n  echo \"[warn] $*\" >&2\n}\n\nlog_error() {\n  echo \"[error] $*\" >&2\n  return 1\n}\n",
  "lib/retry.sh": "#!/bin/bash\n# Retry a command with backoff.\n\nretry() {\n  local n=0\n  until \"$@\"; do\n    n=$((n + 1))\n    [ \"$n\" -ge 5 ] && return 1\n    sleep \"$n\"\n  done\n}\n\nwith_timeout() {\n  timeout \"$1\" \"${@:2}\"\n}\n",
  "lib/disk.sh": "#!/bin/bash\n# Disk helpers.\n\nmount_point() {\n  findmnt -n -o TARGET --target \"$1\"\n}\n\nfree_space() {\n  df --output=avail \"$1\" | tail -1\n}\n",
  "tools/doctor": "#!/bin/bash\nset -euo pipefail\nsource \"$(dirname \"$0\")/../lib/log.sh\"\n\nusage=\"Usage: doctor [--verbose]\"\n[ \"${1:-}\" = \"-h\" ] && { echo \"$usage\"; exit 0; }\n\necho \"Checking inode exhaustion on every filesystem\"\ndf -i | awk 'NR > 1 && $5+0 > 90 { print $6 }'\necho \"Checking clock skew against the NTP server\"\nchronyc tracking | grep 'System time'\necho \"Checking open file descriptors\"\nulimit -n\nlsof -n | wc -l\nlog_info \"doctor finished\"\n",
};

describe("a script without functions", () => {
  it("ranks for what its commands and messages say: its module node carries its content words", async () => {
    const { engine, root, node } = await builtProject(PROJECT);
    expect(node("tools/doctor")).toMatchObject({ type: "module", language: "bash" });
    // Words only its commands and messages hold (no comment, no definition, not its path).
    const { results } = await engine.search({ project_path: root, query: "check inode exhaustion and clock skew", limit: 5 });
    expect(results[0]).toMatchObject({ id: "tools/doctor" });
    // The node itself matches the words (lexical), not only its file's whole text.
    expect(results[0].via).toContain("lexical");
    // A library of definitions (three or more) keeps their names as its words: its code's words are its functions'.
    const lib = await engine.search({ project_path: root, query: "echo stderr", limit: 10 });
    expect(lib.results.find((r) => r.id === "lib/log.sh")?.via ?? []).not.toContain("lexical");
  });
});

/**
 * C# files of one type each (as Polly's): a guard helper of two definitions, whose other words are its
 * usings and namespace, and the component a question about the runtime's dynamic code is about.
 */
const TYPED = {
  "src/Utils/Guard.cs":
    "using System.Diagnostics.CodeAnalysis;\nusing System.Runtime.CompilerServices;\n\nnamespace Demo.Utils;\n\n[ExcludeFromCodeCoverage]\ninternal static class Guard\n{\n    public static T NotNull<T>(T value, [CallerArgumentExpression(\"value\")] string argumentName = \"\")\n        where T : class\n    {\n        if (value is null)\n        {\n            throw new ArgumentNullException(argumentName);\n        }\n\n        return value;\n    }\n}\n",
  "src/Pipeline/CompositeComponent.cs":
    "namespace Demo.Pipeline;\n\ninternal sealed class CompositeComponent\n{\n    public static object Create(object first)\n    {\n        return IsDynamicCodeSupported() ? Wrap(first) : first;\n    }\n\n    private static bool IsDynamicCodeSupported() => System.Runtime.CompilerServices.RuntimeFeature.IsDynamicCodeSupported;\n\n    private static object Wrap(object inner) => inner;\n}\n",
};

describe("a module declaring a type", () => {
  it("is no script: its usings and namespace are no words of its module node (Polly's Guard.cs for a question on the runtime's compiler services)", async () => {
    const { engine, root, node } = await builtProject(TYPED);
    expect(node("src/Utils/Guard.cs")).toMatchObject({ type: "module", language: "csharp" });
    const { results } = await engine.search({ project_path: root, query: "runtime compiler services diagnostics", limit: 10 });
    // Before, the module of Guard.cs (two definitions: a script) matched its usings at node level.
    expect(results.find((r) => r.id === "src/Utils/Guard.cs")?.via ?? []).not.toContain("lexical");
    expect(results[0].file_path).toBe("src/Pipeline/CompositeComponent.cs");
  });
});
