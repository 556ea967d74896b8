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

export function languageForPath(p: string): LanguageSpec | undefined {
  if (p.endsWith(".d.ts")) return undefined; // declarations duplicate the implementation's symbols
  return byExt.get(path.extname(p).toLowerCase());
}

/** The extension of a source file in a known language that no registered language reads (`.m` → Objective-C). */
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
