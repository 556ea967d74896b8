/**
 * Extensions of source code in languages the built-in graph does not read, by language name: files
 * with them are counted and reported ("42 .erl files: Erlang is not indexed") rather than passed
 * over in silence. An extension a registered language claims is read, whatever this table says.
 * Only source code: images, data and documents are not "unsupported", just not code.
 */
export const UNSUPPORTED_SOURCE: Record<string, string> = {
  ".zsh": "Shell",
  ".erl": "Erlang",
  ".hrl": "Erlang",
  ".lhs": "Haskell",
  ".fs": "F#",
  ".fsx": "F#",
  ".vb": "Visual Basic",
  ".pl": "Perl",
  ".pm": "Perl",
  ".r": "R",
  ".jl": "Julia",
  ".clj": "Clojure",
  ".cljs": "Clojure",
  ".ml": "OCaml",
  ".mli": "OCaml",
  ".nim": "Nim",
  ".cr": "Crystal",
  ".groovy": "Groovy",
  ".f90": "Fortran",
  ".f95": "Fortran",
  ".f03": "Fortran",
  ".adb": "Ada",
  ".ads": "Ada",
  ".cob": "COBOL",
  ".cbl": "COBOL",
  ".pas": "Pascal",
  ".vue": "Vue",
  ".svelte": "Svelte",
  ".sol": "Solidity",
  ".elm": "Elm",
  ".rkt": "Racket",
  ".lisp": "Common Lisp",
  ".scm": "Scheme",
  ".tcl": "Tcl",
  ".ps1": "PowerShell",
  ".cu": "CUDA",
  ".asm": "Assembly",
  ".s": "Assembly",
};

/** Files of one unsupported language's extension found in a project. */
export interface UnsupportedCount {
  extension: string;
  language: string;
  files: number;
}

/** Counts by extension as reported: most files first. */
export function unsupportedList(counts: Record<string, number>): UnsupportedCount[] {
  return Object.entries(counts)
    .filter(([ext]) => UNSUPPORTED_SOURCE[ext])
    .map(([extension, files]) => ({ extension, language: UNSUPPORTED_SOURCE[extension], files }))
    .sort((a, b) => b.files - a.files || (a.extension < b.extension ? -1 : 1));
}


/** The counts an index's meta holds (`unsupported`, JSON by extension). */
export function unsupportedCounts(text: string | undefined): Record<string, number> {
  try {
    const o = JSON.parse(text ?? "{}");
    return o && typeof o === "object" && !Array.isArray(o) ? o : {};
  } catch {
    return {};
  }
}

/** What an index's meta says of unsupported files, as reported. */
export function unsupportedOf(meta: Record<string, string | undefined>): UnsupportedCount[] {
  return unsupportedList(unsupportedCounts(meta.unsupported));
}
