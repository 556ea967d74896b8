/**
 * The line-level compressor, free of the tokenizer: the PostToolUse hook imports this module only,
 * because loading o200k costs ~300 ms in a cold process. `compress.ts` adds exact token counts.
 */

/** What kind of output is being compressed; "auto" guesses from the text. */
export type OutputKind = "shell" | "test" | "build" | "read" | "auto";

export interface CompressOptions {
  kind?: OutputKind;
  /** Exit status of the command; non-zero widens the context kept around errors. */
  exitCode?: number;
  /** Soft budget for the compressed text; error lines are kept even beyond it. */
  maxTokens?: number;
}

export interface CompressResult {
  text: string;
  original_tokens: number;
  tokens: number;
  dropped_lines: number;
  kept: "all" | "compressed";
}

/** Outputs under this many tokens pass through untouched. */
export const PASSTHROUGH_TOKENS = 400;
const DEFAULT_MAX_TOKENS = 2000;
// o200k averages ~3.5-4.5 chars per token on logs; 4 is only used where counting is too slow.
const CHARS_PER_TOKEN = 4;

// Always kept verbatim (the list, plus compiler "error[E0308]" forms that it already covers).
const ERROR_RE = /error|Error|ERROR|FAIL|panic|Traceback|Exception|npm ERR!|fatal:|✗|✘|×/;
const WARNING_RE = /\bwarn(ing)?\b|\bWARN\b|warning\[/i;
// Summary lines test runners, compilers and package managers print at the end.
const SUMMARY_RE = new RegExp(
  [
    /^\s*(Test Files|Tests?|Test Suites|Suites?|Snapshots|Duration|Time|Ran \d+ tests?|OK\b|FAILED\b|PASSED\b)/.source,
    /^\s*(BUILD|Build)\s+(SUCCESS|FAILED|succeeded|failed)/.source,
    /\b\d+ (passed|failed|skipped|errors?|warnings?|pending|todo)\b/.source,
    /^=+ .* =+$/.source,
    /\bexit (code|status)\b|exited with|Process completed/i.source,
    /^\s*(added|removed|changed|up to date|audited) \d*/.source,
    /\bfound \d+ vulnerabilit/.source,
    /^\s*Finished\b|^\s*Done in\b|^make(\[\d+\])?: \*\*\*/.source,
    /^npm (error|warn)\b/.source,
    /^ok\s+\S+\s+[\d.]+s$|^(PASS|FAIL|ok)\s*$/.source,
  ].join("|"),
);
// file:line (gcc, tsc --pretty, rustc "--> src/main.rs:3:21", node stacks) or tsc's file(line,col).
const LOCATOR_RE = /[\w./\\-]+\.[A-Za-z]{1,6}(:\d+(:\d+)?|\(\d+,\d+\))/;
// Lines a compiler or runner prints under an error: carets, code excerpts, expected/found, frames.
const CONTEXT_RE = /^\s*[|^~>]|^\s*\d+\s*[|│]|expected|found|received|actual|\bat\s|File ".*", line \d+|-->|^\s*[-+] /i;
// Lines that continue a diagnostic: indented, diff +/-, pointers, locators.
const STRUCTURED_RE = /^\s+\S|^[-+] |^\s*[❯→>|^~]|^\s*\d+\s*[|│]|^\s*(at|File|-->|help|note)\b/;
const SEPARATOR_RE = /^\s*[⎯_=─━-]{5,}|^\s*(FAIL|PASS|ok|FAILED|ERROR)\b/;
// Headers that say where the reader is: git commits and diffs, ls -R directories.
const LANDMARK_RE = /^commit [0-9a-f]{7,40}\b|^diff --git |^@@ .* @@|^[.\w/-]*\/[\w./-]*:$|^\.:$/;
// pytest prefixes every line of an assertion explanation with "E".
const PYTEST_DETAIL_RE = /^E\s+\S/;
const FRAME_RE = /^\s*at\s|^\s*File ".*", line \d+/;
const VENDOR_FRAME_RE = /node_modules|node:internal|site-packages|\/rustc\/|<anonymous>/;

// Failing test names, per runner. Each captures the name that later lines may repeat.
const FAILING_NAME_RES: RegExp[] = [
  /^\s*(?:FAIL|×|✗|✘)\s+(.+?)(?:\s+\d+ms)?\s*$/, // vitest/jest: "FAIL test/a.test.ts > suite > name", "× name 3ms"
  /^FAILED\s+(\S+)/, // pytest: "FAILED tests/test_a.py::test_x - AssertionError"
  /^\s*(\S+::\S+)\s+FAILED/, // pytest -v: "test_a.py::test_x FAILED"
  /^--- FAIL: (\S+)/, // go test
  /^(?:FAIL|ERROR): (\S+) \(/, // unittest: "FAIL: test_x (mod.Class.test_x)"
  /^\s*(\S+) \(\S+\) \.\.\. (?:FAIL|ERROR)/, // unittest -v: "test_x (mod.Class) ... FAIL"
  /^test (\S+) \.\.\. FAILED/, // cargo test
];

const ANSI_RE = /\x1b\[[0-9;?]*[A-Za-z]/g;

function plain(line: string): string {
  const noAnsi = line.replace(ANSI_RE, "");
  // A progress bar redraws with \r: what a terminal shows is the last segment.
  const cr = noAnsi.lastIndexOf("\r");
  return cr >= 0 && cr < noAnsi.length - 1 ? noAnsi.slice(cr + 1) : noAnsi.replace(/\r$/, "");
}

/** Shape of a line for grouping "similar" lines: first word with digits and paths generalised. */
function signature(p: string): string {
  const indent = Math.min(8, p.length - p.trimStart().length);
  const words = p.trim().split(/\s+/);
  const w0 = words[0] ?? "";
  let head: string;
  if (w0 === "") head = "";
  else if (/^[-dlcbps][-rwxsStT]{9}[.@+]?$/.test(w0)) head = "PERM"; // ls -l
  else if (w0.includes("/") || /\.\w{1,5}$/.test(w0)) head = "PATH"; // find, git --stat, file lists
  else if (/^[\[(#=*.|]/.test(w0)) head = w0[0]; // progress bars, tables
  else head = w0.replace(/\d+/g, "0");
  // A second word keeps "npm http fetch" apart from "npm info run", yet "Compiling a" ~ "Compiling b".
  const w1 = words.length > 1 && /^[a-z]+$/.test(words[1]) && head.length <= 4 ? ` ${words[1]}` : "";
  return `${indent}|${head}${w1}`;
}

function detectKind(text: string): Exclude<OutputKind, "auto"> {
  const sample = text.split("\n", 400);
  const codeLike = sample.filter((l) => /[;{}]\s*$|^\s*(\/\/|\*|#|def |function |import |export )/.test(l)).length;
  if (codeLike > sample.length * 0.3) return "read";
  if (/\b(vitest|jest|pytest|unittest|Test Files|Tests:|passed|PASS |FAIL )\b/.test(text)) return "test";
  if (/\b(Compiling|error TS\d+|gcc|make:|cargo|tsc|webpack|Building)\b/.test(text)) return "build";
  return "shell";
}

interface Plan {
  text: string;
  dropped: number;
}

function truncateExample(s: string): string {
  const t = s.trim().replace(/'/g, "’");
  return t.length > 60 ? `${t.slice(0, 57)}...` : t;
}

/**
 * The line-level plan, without counting tokens: which lines stay, which runs collapse.
 * Budget is in characters; every kept line is an input line, so the output only shrinks.
 */
function plan(text: string, kind: Exclude<OutputKind, "auto">, failed: boolean, budgetChars: number): Plan {
  const lines = text.split("\n");
  const n = lines.length;
  const plains = lines.map(plain);
  const keep = new Uint8Array(n); // 1 = must keep (never dropped)

  const head = kind === "read" ? 20 : 5;
  const tail = kind === "read" ? 10 : 12;
  // Source code says "error" often; there only the line itself and a couple after it matter.
  const contextAfter = kind === "read" ? 2 : failed ? 30 : 20;

  const failingNames = new Set<string>();
  for (const p of plains) {
    for (const re of FAILING_NAME_RES) {
      const m = re.exec(p);
      if (m && m[1] && m[1].trim().length >= 4) failingNames.add(m[1].trim());
    }
  }
  // Runners repeat the last segment of the name ("suite > name"): match that too.
  const names = [...failingNames];
  for (const name of names) {
    const last = name.split(/\s+[>›]\s+|::/).pop()?.trim();
    if (last && last.length >= 6 && last !== name) failingNames.add(last);
  }

  for (let i = 0; i < n; i++) {
    const p = plains[i];
    const raw = lines[i];
    if (i < head || i >= n - tail) keep[i] = 1;
    if (ERROR_RE.test(raw) || ERROR_RE.test(p)) {
      keep[i] = 1;
      // What a compiler or runner prints under the error: carets, code, expected/found, the
      // assertion diff, the frames. One blank line is crossed when structured lines follow.
      let frames = 0;
      for (let j = i + 1; j < n && j <= i + contextAfter + frames; j++) {
        const q = plains[j];
        if (q.trim() === "") {
          const next = plains[j + 1] ?? "";
          if (next.trim() === "" || !STRUCTURED_RE.test(next)) break;
          keep[j] = 1;
          continue;
        }
        if (SEPARATOR_RE.test(q)) break;
        if (FRAME_RE.test(q)) {
          if (VENDOR_FRAME_RE.test(q)) continue; // runner internals: droppable noise
          if (frames < 8) frames++;
        } else if (!STRUCTURED_RE.test(q) && !CONTEXT_RE.test(q) && !LOCATOR_RE.test(q) && j > i + 3) {
          break;
        }
        keep[j] = 1;
      }
    } else if (WARNING_RE.test(p) || SUMMARY_RE.test(p) || PYTEST_DETAIL_RE.test(p) || (kind !== "read" && LANDMARK_RE.test(p))) {
      keep[i] = 1;
    } else if (kind !== "read" && LOCATOR_RE.test(p) && !FRAME_RE.test(p) && /:\s|\(\d+,\d+\)|-->/.test(p)) {
      keep[i] = 1; // "src/a.c:12:5: note: ..." style diagnostics
    }
    if (!keep[i] && failingNames.size > 0) {
      for (const name of failingNames) {
        if (p.includes(name)) {
          keep[i] = 1;
          break;
        }
      }
    }
  }

  // Render: kept lines verbatim; each gap of droppable lines collapses by similarity, and a
  // gap still too long keeps only its ends.
  type Item = { line: string; count: number }; // count = input lines this item stands for
  const out: string[] = [];
  let dropped = 0;
  const gaps: { start: number; items: Item[] }[] = [];
  let i = 0;
  while (i < n) {
    if (keep[i]) {
      out.push(lines[i]);
      i++;
      continue;
    }
    let j = i;
    while (j < n && !keep[j]) j++;
    const items: Item[] = [];
    let k = i;
    while (k < j) {
      const sig = signature(plains[k]);
      let m = k + 1;
      while (m < j && signature(plains[m]) === sig) m++;
      const run = m - k;
      const runChars = lines.slice(k, m).reduce((a, l) => a + l.length + 1, 0);
      const marker = `… ${run} similar lines omitted (e.g. '${truncateExample(plains[k])}')`;
      if (run >= 3 && marker.length + 1 < runChars) {
        items.push({ line: marker, count: run });
        dropped += run;
      } else {
        for (let t = k; t < m; t++) items.push({ line: plains[t] === lines[t] ? lines[t] : plains[t], count: 1 });
      }
      k = m;
    }
    gaps.push({ start: out.length, items });
    out.push(""); // placeholder, filled below once the budget is known
    i = j;
  }

  // Budget: kept lines are fixed; the gaps share what is left, shortest gaps first.
  const fixedChars = out.reduce((a, l) => a + l.length + 1, 0);
  let left = Math.max(0, budgetChars - fixedChars);
  const order = gaps.map((g, idx) => ({ idx, chars: g.items.reduce((a, it) => a + it.line.length + 1, 0) }));
  order.sort((a, b) => a.chars - b.chars);
  const rendered = new Map<number, string>();
  for (const { idx, chars } of order) {
    const g = gaps[idx];
    if (chars <= left && g.items.length <= 12) {
      rendered.set(idx, g.items.map((it) => it.line).join("\n"));
      left -= chars;
      continue;
    }
    // Keep the ends of the gap (they sit next to kept lines and give context), omit the middle.
    const ends = g.items.length > 6 ? 3 : Math.floor(g.items.length / 2);
    const firsts = g.items.slice(0, ends);
    const lasts = g.items.slice(g.items.length - ends);
    const middle = g.items.slice(ends, g.items.length - ends);
    const middleLines = middle.reduce((a, it) => a + it.count, 0);
    const parts = [...firsts.map((it) => it.line)];
    if (middleLines > 0) parts.push(`… ${middleLines} lines omitted`);
    parts.push(...lasts.map((it) => it.line));
    const text2 = parts.join("\n");
    dropped += middle.reduce((a, it) => a + (it.count === 1 ? 1 : 0), 0); // markers were counted when made
    rendered.set(idx, text2);
    left = Math.max(0, left - text2.length - 1);
  }
  for (let idx = 0; idx < gaps.length; idx++) out[gaps[idx].start] = rendered.get(idx) ?? "";
  return { text: out.join("\n"), dropped };
}

function resolveKind(text: string, kind: OutputKind | undefined): Exclude<OutputKind, "auto"> {
  return !kind || kind === "auto" ? detectKind(text) : kind;
}

/**
 * Compression without a tokenizer, for the hook's hot path (loading o200k costs ~300 ms cold).
 * Gating and budget use ~4 chars per token; the result is never longer in characters.
 */
export function compressFast(text: string, opts: CompressOptions = {}): { text: string; dropped_lines: number; kept: "all" | "compressed" } {
  if (text.length < PASSTHROUGH_TOKENS * CHARS_PER_TOKEN) return { text, dropped_lines: 0, kept: "all" };
  return compressLines(text, opts);
}

/** The plan without the small-output gate; compressOutput gates on exact tokens itself. */
export function compressLines(text: string, opts: CompressOptions): { text: string; dropped_lines: number; kept: "all" | "compressed" } {
  const budgetChars = (opts.maxTokens ?? DEFAULT_MAX_TOKENS) * CHARS_PER_TOKEN;
  const failed = opts.exitCode !== undefined && opts.exitCode !== 0;
  const p = plan(text, resolveKind(text, opts.kind), failed, budgetChars);
  // Not worth it unless it saves a tenth: the marker lines cost the reader attention too.
  if (p.dropped === 0 || p.text.length >= text.length * 0.9) return { text, dropped_lines: 0, kept: "all" };
  return { text: p.text, dropped_lines: p.dropped, kept: "compressed" };
}

