import fs from "node:fs";
import path from "node:path";
import type { LanguageId } from "../types.js";
import { bash } from "./bash.js";
import { c, cpp } from "./c.js";
import { csharp } from "./csharp.js";
import { dart } from "./dart.js";
import { elixir } from "./elixir.js";
import { go } from "./go.js";
import { haskell } from "./haskell.js";
import { java } from "./java.js";
import { kotlin } from "./kotlin.js";
import { lua } from "./lua.js";
import type { LanguageSpec } from "./language.js";
import { php } from "./php.js";
import { python } from "./python.js";
import { ruby } from "./ruby.js";
import { rust } from "./rust.js";
import { scala } from "./scala.js";
import { swift } from "./swift.js";
import { UNSUPPORTED_SOURCE } from "./unsupported.js";
import { javascript, tsx, typescript } from "./typescript.js";
import { zig } from "./zig.js";

/** Every language the built-in graph backend understands. Adding one is adding a file and a line here. */
export const LANGUAGES: LanguageSpec[] = [python, typescript, tsx, javascript, go, rust, java, c, cpp, ruby, php, csharp, kotlin, swift, scala, lua, dart, bash, zig, elixir, haskell];

const byExt = new Map<string, LanguageSpec>();
for (const l of LANGUAGES) for (const e of l.extensions) byExt.set(e, l);
const byInterpreter = new Map<string, LanguageSpec>();
for (const l of LANGUAGES) for (const i of l.interpreters ?? []) byInterpreter.set(i, l);

export function languageForPath(p: string): LanguageSpec | undefined {
  if (p.endsWith(".d.ts")) return undefined; // declarations duplicate the implementation's symbols
  return byExt.get(path.extname(p).toLowerCase());
}

/** Whether a file's language is told by its `#!` line rather than its name: it has no extension (`bin/deploy`). */
export function isScriptName(p: string): boolean {
  const base = path.posix.basename(p);
  return !base.startsWith(".") && path.extname(base) === "";
}

/**
 * The language a `#!` line names: `#!/bin/bash`, `#!/usr/bin/env python3`, `#!/usr/bin/env -S node --flag`
 * (env's options and `VAR=value` skipped; a version suffix dropped: `python3.11`, `lua5.4`).
 */
export function languageOfShebang(line: string): LanguageSpec | undefined {
  const m = line.match(/^#!\s*(\S+)(.*)$/);
  if (!m) return undefined;
  let cmd = path.posix.basename(m[1]);
  if (cmd === "env") cmd = path.posix.basename(m[2].trim().split(/\s+/).find((w) => w && !w.startsWith("-") && !w.includes("=")) ?? "");
  return byInterpreter.get(cmd.replace(/[\d.]+$/, ""));
}

/** The language of a script without an extension, from its first line (256 bytes read; none for a binary file). */
export function languageOfScript(abs: string): LanguageSpec | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(abs, "r");
    const buf = Buffer.alloc(256);
    const head = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0));
    if (head[0] !== 0x23 || head[1] !== 0x21 || head.includes(0)) return undefined; // "#!", no NUL
    return languageOfShebang(head.toString("utf8").split("\n", 1)[0].trimEnd());
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The extension of a source file in a known language that no registered language reads (`.erl` → Erlang). */
export function unsupportedExtension(p: string): string | undefined {
  if (languageForPath(p)) return undefined;
  const ext = path.extname(p).toLowerCase();
  return UNSUPPORTED_SOURCE[ext] ? ext : undefined;
}

export function languageById(id: LanguageId): LanguageSpec {
  const l = LANGUAGES.find((x) => x.id === id);
  if (!l) throw new Error(`unknown language ${id}`);
  return l;
}
