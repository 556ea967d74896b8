import { describe, expect, it } from "vitest";
import { builtFixture, builtProject } from "./fixture.js";

/**
 * Scripts without an extension, read by their `#!` line: Debian 12's /usr/bin/dpkg-realpath (dpkg 1.21.22,
 * `#!/bin/sh`) with the dpkg-error.sh it sources, and /usr/bin/py3compile and py3clean (python3-minimal
 * 3.11.2, `#! /usr/bin/python3`) with the debpython modules they import, at their installed paths, with
 * both packages' copyright files.
 */
const built = () => builtFixture("scripts-debian");

describe("scripts without an extension", () => {
  it("are indexed in the language their #! line names, with their definitions, imports and calls", async () => {
    const { result, node, edge } = await built();
    expect(result.files_indexed).toBe(9);
    expect(node("usr/bin/dpkg-realpath")).toMatchObject({ type: "module", language: "bash" });
    expect(node("usr/bin/dpkg-realpath::canonicalize")).toMatchObject({ type: "function", language: "bash", line_start: 55 });
    // . "$PKGDATADIR/sh/dpkg-error.sh", then setup_colors at file level.
    expect(edge("usr/bin/dpkg-realpath", "usr/share/dpkg/sh/dpkg-error.sh", "imports")).toBe(true);
    expect(edge("usr/bin/dpkg-realpath", "usr/share/dpkg/sh/dpkg-error.sh::setup_colors")).toBe(true);
    expect(node("usr/bin/py3compile::compile")).toMatchObject({ type: "function", language: "python", line_start: 172 });
    expect(edge("usr/bin/py3compile", "usr/share/python3/debpython/version.py", "imports")).toBe(true);
    expect(edge("usr/bin/py3compile::get_exclude_patterns_from_dir", "usr/share/python3/debpython/version.py::get_requested_versions")).toBe(true);
    expect(edge("usr/bin/py3clean", "usr/share/python3/debpython/interpreter.py", "imports")).toBe(true);
  });

  it("are not read when ignored, and are left out when their #! names no language codemem reads or they are binary", async () => {
    const { result, g } = await builtProject({
      ".gitignore": "tools/private\n",
      "tools/private": "#!/bin/sh\nhidden_fn() { :; }\n",
      "tools/report": "#!/usr/bin/perl\nsub report { 1 }\n",
      "tools/blob": Buffer.from([0x23, 0x21, 0x2f, 0x62, 0x69, 0x6e, 0x2f, 0x73, 0x68, 0x0a, 0x00, 0x01]),
      "tools/notes": "hidden_notes() { :; }\n",
      "tools/deploy": "#!/usr/bin/env -S bash -e\ndeploy_fn() { :; }\n",
    });
    expect(result.files_indexed).toBe(1);
    expect(g.nodes.filter((n: any) => n.type !== "module").map((n: any) => n.id)).toEqual(["tools/deploy::deploy_fn"]);
    expect(result.skipped.map((s: any) => s.path)).toEqual([]);
  });
});
