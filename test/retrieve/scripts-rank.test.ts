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
