/**
 * C++ declarations wrapped in export, visibility and attribute macros (`class SPDLOG_API logger`,
 * `FMT_CONSTEXPR FMT_INLINE auto f()`, `void g() SPDLOG_NOEXCEPT {`): the grammars cannot know the
 * macros expand to nothing or to attributes, so the declaration around one is an ERROR and its
 * definitions are lost or named after the macro. By shape, not by a list of projects' macros.
 */

interface Tok {
  start: number;
  end: number;
  text: string;
}

/** A macro's name by convention: upper case, digits and underscores (`GTEST_API_`, `WINAPI`). */
const MACRO_WORD = /^_*[A-Z][A-Z0-9_]*$/;

/** Words after which a declaration starts (its specifiers or a template head). */
const DECL_PREFIX = new Set(["template", "static", "inline", "extern", "virtual", "explicit", "friend", "constexpr", "consteval", "constinit", "export", "typedef"]);

/** Words after a declarator's `)` that the grammar knows: a macro among them is one more. */
const AFTER_PARAMS = new Set(["const", "volatile", "override", "final", "noexcept", "throw", "try", "&", "&&", "{", ";", ":", "=", "->"]);

/** A `(` after these is no parameter list: `if (x) FOO;`. */
const NOT_DECLARATOR = new Set(["if", "while", "for", "switch", "return", "sizeof", "alignof", "decltype", "catch", "noexcept", "throw", "static_assert", "case", "defined", "alignas", "__attribute__", "__declspec"]);

const KEYWORDS = new Set([
  ...DECL_PREFIX, "class", "struct", "union", "enum", "namespace", "using", "void", "bool", "char", "short", "int", "long", "float", "double",
  "signed", "unsigned", "auto", "const", "volatile", "mutable", "register", "thread_local", "operator", "typename", "decltype", "return",
  "public", "private", "protected",
]);

const isWord = (t: Tok | undefined) => !!t && /^[A-Za-z_]/.test(t.text);

/** The source with those macros blanked to spaces (line breaks kept: every position holds). */
export function withoutDeclarationMacros(source: string): string {
  const toks = tokens(source);
  const types = typeNames(toks);
  const pairs = parenPairs(toks);
  // The first letter first: most tokens are no upper-case word, and the test runs on every one.
  const isMacro = (t: Tok | undefined) => !!t && t.text.length > 1 && upperOrUnderscore(t.text.charCodeAt(0)) && MACRO_WORD.test(t.text) && !types.has(t.text);
  // Source ranges to blank, in order and apart: each drop ends where the scan resumes after it.
  const blank: [number, number][] = [];
  let droppedTo = -1;
  const drop = (from: number, to: number) => {
    droppedTo = to;
    blank.push([toks[from].start, toks[to].end]);
  };
  for (let i = 0; i < toks.length; i++) {
    if (!isMacro(toks[i])) continue;
    // Every macro of a run (`FMT_CONSTEXPR FMT_INLINE`), with their arguments.
    let end = invocationEnd(toks, i, pairs);
    while (isMacro(toks[end + 1])) end = invocationEnd(toks, end + 1, pairs);
    const before = toks[i - 1];
    const next = toks[end + 1];
    const key = toks[attributesBefore(toks, i, pairs) - 1]?.text ?? "";
    if (/^(class|struct|union|enum)$/.test(key)) {
      // `class FOO_API Bar {`, `class [[nodiscard]] FOO_API Bar`, `class FOO_API [[nodiscard]] Bar`,
      // `enum class FOO_API E {` (not `struct FOO bar;`, C naming a struct FOO).
      const name = attributesAfter(toks, end + 1, pairs);
      if (isWord(toks[name]) && /^(\{|:|final|<)$/.test(toks[name + 1]?.text ?? "")) drop(i, end);
    } else if (atDeclarationStart(toks, i, droppedTo === i - 1)) {
      // A lone macro after a statement (`FMT_END_NAMESPACE` before `}` or the end) stands for one.
      const lone = (!next || next.text === "}") && (!before || before.text === ";" || before.text === "}");
      // `SPDLOG_TRY {`: a statement keyword's stand-in before its block.
      const block = next?.text === "{" && end === i && before && (before.text === ";" || before.text === "{" || before.text === "}");
      if (lone || block || startsDeclaration(toks, end + 1, types)) drop(i, end);
    } else if (afterParameters(toks, i, pairs)) {
      if (!next || AFTER_PARAMS.has(next.text)) drop(i, end);
    } else if (end === i && afterReturnType(before) && isWord(next) && /^(\(|::|<)$/.test(toks[end + 2]?.text ?? "")) {
      // `std::string SPDLOG_INLINE getenv(`, `void WINAPI f(`: a calling convention or attribute before the name.
      drop(i, end);
    } else if (before?.text === "," && next?.text === ">" && end > i && inTemplateHead(toks, i)) {
      // `template <typename T, FMT_ENABLE_IF(cond)>`: a constraint with its comma.
      drop(i - 1, end);
    }
    i = end;
  }
  if (!blank.length) return source;
  let out = "";
  let at = 0;
  for (const [s, e] of blank) {
    out += source.slice(at, s) + source.slice(s, e).replace(/[^\r\n]/g, " ");
    at = e;
  }
  return out + source.slice(at);
}

/** Past the `[[…]]` attributes starting at `j` (past the end when one is never closed). */
function attributesAfter(toks: Tok[], j: number, pairs: Pairs): number {
  while (toks[j]?.text === "[" && toks[j + 1]?.text === "[") {
    const close = pairs.closeOf[j];
    if (close < 0) return toks.length + 1;
    j = close + 1;
  }
  return j;
}

/** The first of the `[[…]]` attributes ending right before `i` (else `i`). */
function attributesBefore(toks: Tok[], i: number, pairs: Pairs): number {
  while (toks[i - 1]?.text === "]" && toks[i - 2]?.text === "]") {
    const open = pairs.openOf[i - 1];
    if (open < 0) return i;
    i = open;
  }
  return i;
}

/**
 * Each parenthesis's and bracket's partner by token index (-1: none), found once: a scan per macro
 * was quadratic on a file of unbalanced ones.
 */
interface Pairs {
  closeOf: Int32Array;
  openOf: Int32Array;
}

function parenPairs(toks: Tok[]): Pairs {
  const closeOf = new Int32Array(toks.length).fill(-1);
  const openOf = new Int32Array(toks.length).fill(-1);
  const parens: number[] = [];
  const brackets: number[] = [];
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k].text;
    const open = t === ")" ? parens : t === "]" ? brackets : undefined;
    if (t === "(") parens.push(k);
    else if (t === "[") brackets.push(k);
    else if (open?.length) {
      const o = open.pop()!;
      closeOf[o] = k;
      openOf[k] = o;
    }
  }
  return { closeOf, openOf };
}

/** The last token of the macro at `i`: its closing `)` when arguments follow it, else itself. */
function invocationEnd(toks: Tok[], i: number, pairs: Pairs): number {
  if (toks[i + 1]?.text !== "(") return i;
  const close = pairs.closeOf[i + 1];
  return close < 0 ? i : close;
}

/** Whether a declaration may start at `i`: after a statement, a block, a template head, an access label, a specifier or a macro just blanked. */
function atDeclarationStart(toks: Tok[], i: number, afterDropped: boolean): boolean {
  if (i === 0) return true;
  const b = toks[i - 1].text;
  if (b === ";" || b === "{" || b === "}" || b === ">" || b === "]" || DECL_PREFIX.has(b) || afterDropped) return true;
  if (b === ":") return /^(public|private|protected)$/.test(toks[i - 2]?.text ?? "");
  // `extern "C" FOO_API int f();`
  return b.startsWith('"') && toks[i - 2]?.text === "extern";
}

/**
 * Whether a declaration follows at `j` (the macro before it is then no type of its own): a keyword,
 * a qualified or templated type, a type and its declarator; not `FOO bar;` (FOO the type of bar)
 * nor `FOO bar(` (FOO the return type of bar, or a call).
 */
function startsDeclaration(toks: Tok[], j: number, types: Set<string>): boolean {
  const t = toks[j];
  if (!t) return false;
  if (t.text === "~" || t.text === "::" || t.text === "[") return true;
  if (!isWord(t)) return false;
  if (KEYWORDS.has(t.text) || types.has(t.text)) return true;
  const after = toks[j + 1]?.text ?? "";
  return after === "::" || after === "<" || after === "*" || after === "&" || after === "&&" || isWord(toks[j + 1]);
}

/** Words after which a word is no declaration's name: `return FOO bar(…)` is no declaration. */
const NOT_TYPE = new Set(["return", "else", "case", "goto", "new", "delete", "throw", "co_return", "co_yield", "co_await", "sizeof", "typedef", "using", "namespace", "class", "struct", "union", "enum", "operator", "typename", "template", "public", "private", "protected", "default"]);

/** Whether `t` may end a declaration's return type (`int`, `string`, `T>`, `char *`). */
function afterReturnType(t: Tok | undefined): boolean {
  if (!t) return false;
  if (t.text === ">" || t.text === "*" || t.text === "&" || t.text === "&&") return true;
  return isWord(t) && !NOT_TYPE.has(t.text) && !MACRO_WORD.test(t.text);
}

/** How far back a template head is looked for: heads are short, and a scan per macro to the file's start would be quadratic. */
const TEMPLATE_HEAD_TOKENS = 256;

/** Whether the token at `i` is inside `template <…>` (the unmatched `<` before it follows `template`). */
function inTemplateHead(toks: Tok[], i: number): boolean {
  let depth = 0;
  for (let k = i - 1; k >= Math.max(0, i - TEMPLATE_HEAD_TOKENS); k--) {
    const t = toks[k].text;
    if (t === ">" || t === ")") depth++;
    else if (t === "(") {
      if (depth-- === 0) return false;
    } else if (t === "<") {
      if (depth === 0) return toks[k - 1]?.text === "template";
      depth--;
    } else if (t === ";" || t === "{" || t === "}") return false;
  }
  return false;
}

/** Qualifiers a declarator's parameters may carry before a macro (`) const GTEST_LOCK_EXCLUDED_(mu)`). */
const QUALIFIERS = new Set(["const", "volatile", "override", "final", "noexcept", "&", "&&"]);

/** Whether the token at `i` follows a declarator's parameters and their qualifiers. */
function afterParameters(toks: Tok[], i: number, pairs: Pairs): boolean {
  let k = i - 1;
  while (k >= 0 && QUALIFIERS.has(toks[k].text)) k--;
  return toks[k]?.text === ")" && closesParameters(toks, pairs.openOf[k]);
}

/** Whether the parentheses opening at `k` (-1: none) are a declarator's parameters (`f(int x)`, `operator()(…)`), not a condition or a cast. */
function closesParameters(toks: Tok[], k: number): boolean {
  if (k < 0) return false;
  const b = toks[k - 1];
  if (!b) return false;
  if (b.text === ">" || b.text === ")" || b.text === "]") return true;
  // `operator=(…)`, `operator<<(…)`, `operator T*()`
  for (let o = k - 1; o >= Math.max(0, k - 8) && !/^[;{}()]$/.test(toks[o].text); o--) if (toks[o].text === "operator") return true;
  return isWord(b) && !NOT_DECLARATOR.has(b.text) && !MACRO_WORD.test(b.text);
}

/** Names the file declares as types (`struct FOO {`, `typedef … FOO;`, `using FOO =`, `template <class FOO>`): never macros. */
function typeNames(toks: Tok[]): Set<string> {
  const out = new Set<string>();
  let typedef = false;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i].text;
    const n = toks[i + 1];
    const after = toks[i + 2]?.text ?? "";
    if (/^(class|struct|union|enum|typename)$/.test(t) && isWord(n) && /^(\{|:|;|,|>|=|final|\.\.\.)$/.test(after)) out.add(n.text);
    else if (t === "using" && isWord(n) && after === "=") out.add(n.text);
    else if (t === "typedef") typedef = true;
    else if (t === ";" && typedef) {
      typedef = false;
      if (isWord(toks[i - 1])) out.add(toks[i - 1].text);
    }
  }
  return out;
}

/**
 * The source's tokens outside comments, string and character literals and preprocessor lines
 * (a directive's words are no declaration's): words, numbers, literals as one token, `::`, `->`,
 * `&&`, and other punctuation one character each.
 */
function tokens(src: string): Tok[] {
  const out: Tok[] = [];
  let lineStart = true;
  let i = 0;
  const push = (start: number, end: number) => out.push({ start, end, text: src.slice(start, end) });
  while (i < src.length) {
    const c = src[i];
    if (c === "\n") {
      lineStart = true;
      i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v") {
      i++;
      continue;
    }
    if (c === "/" && src[i + 1] === "/") {
      i = lineEnd(src, i);
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const e = src.indexOf("*/", i + 2);
      i = e === -1 ? src.length : e + 2;
      continue;
    }
    const wasLineStart = lineStart;
    lineStart = false;
    if (c === "#" && wasLineStart) {
      i = directiveEnd(src, i);
      continue;
    }
    const start = i;
    const code = src.charCodeAt(i);
    if (identStart(code)) {
      while (i < src.length && identPart(src.charCodeAt(i))) i++;
      // Raw strings: R"delim( … )delim", with any encoding prefix.
      if (src[i] === '"' && /^(u8|u|U|L)?R$/.test(src.slice(start, i))) {
        const open = src.indexOf("(", i);
        const delim = open === -1 ? "" : src.slice(i + 1, open);
        const close = open === -1 ? -1 : src.indexOf(`)${delim}"`, open);
        i = close === -1 ? src.length : close + delim.length + 2;
      } else if ((src[i] === '"' || src[i] === "'") && /^(u8|u|U|L)$/.test(src.slice(start, i))) {
        i = quoted(src, i);
      }
    } else if (digit(code) || (c === "." && digit(src.charCodeAt(i + 1)))) {
      // Digit separators (1'000) and exponents belong to the number.
      for (let k = src.charCodeAt(i); i < src.length && (identPart(k) || k === 46 || k === 39); k = src.charCodeAt(++i));
    } else if (c === '"' || c === "'") {
      i = quoted(src, i);
    } else if ((c === ":" && src[i + 1] === ":") || (c === "-" && src[i + 1] === ">") || (c === "&" && src[i + 1] === "&")) {
      i += 2;
    } else {
      i++;
    }
    push(start, i);
  }
  return out;
}

const upperOrUnderscore = (k: number) => (k >= 65 && k <= 90) || k === 95;
// Character classes by code (a regular expression per character cost most of the scan).
const digit = (k: number) => k >= 48 && k <= 57;
const identStart = (k: number) => (k >= 65 && k <= 90) || (k >= 97 && k <= 122) || k === 95;
const identPart = (k: number) => identStart(k) || digit(k);

/** The end of a string or character literal opening at `i` (at the line's end if unclosed). */
function quoted(src: string, i: number): number {
  const q = src[i];
  for (let k = i + 1; k < src.length; k++) {
    if (src[k] === "\\") k++;
    else if (src[k] === q) return k + 1;
    else if (src[k] === "\n") return k;
  }
  return src.length;
}

function lineEnd(src: string, i: number): number {
  const e = src.indexOf("\n", i);
  return e === -1 ? src.length : e;
}

/** The end of a preprocessor directive: its line and the lines its trailing backslashes continue, comments skipped. */
function directiveEnd(src: string, i: number): number {
  for (let k = i; k < src.length; k++) {
    if (src[k] === "/" && src[k + 1] === "*") {
      const e = src.indexOf("*/", k + 2);
      if (e === -1) return src.length;
      k = e + 1;
    } else if (src[k] === "/" && src[k + 1] === "/") {
      return lineEnd(src, k);
    } else if (src[k] === "\n") {
      let b = k - 1;
      if (src[b] === "\r") b--;
      if (src[b] !== "\\") return k;
    }
  }
  return src.length;
}
