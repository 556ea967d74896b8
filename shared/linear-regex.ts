import v8 from "node:v8";

/**
 * Regular expressions a project file supplies (`[index] test_patterns`) run on V8's non-backtracking
 * engine (the `l` flag): matching takes time linear in the path, so a hostile pattern such as
 * `/^(a+)+$/` cannot hold a build or an answer. That engine refuses what it cannot run in linear
 * time (backreferences, lookaround), which is then a configuration error.
 * The flag is process-wide; each thread that imports this module sets it again (harmless).
 */
v8.setFlagsFromString("--enable-experimental-regexp-engine");

function linearSupported(): boolean {
  try {
    new RegExp("a", "l");
    return true;
  } catch {
    return false; // a Node.js whose V8 lacks the engine: no regular expression from a project file runs
  }
}
const LINEAR = linearSupported();

/** `body` compiled to run in linear time; throws a SyntaxError naming why it cannot. */
export function linearRegExp(body: string): RegExp {
  if (!LINEAR) throw new SyntaxError(`this Node.js (${process.version}) has no linear-time regular expression engine`);
  return new RegExp(body, "l");
}

const SPECIAL = /[.*+?^${}()|[\]\\]/;

/**
 * A glob as a linear-time regular expression over a POSIX path: `*` and `?` within a segment, `**`
 * as a whole segment any number of segments, `[…]` (`[!…]` negated), `{a,b}`; anything else is
 * literal (`\` escapes). picomatch compiles `*a*a*…*b` to a backtracking expression that a file
 * named with 40 `a`s holds for hours; this one cannot.
 */
export function globRegExp(glob: string): RegExp {
  return linearRegExp(`^${globBody(glob, 0, false).body}$`);
}

/** The regex of `glob` from `i` up to its end (or, inside braces, up to the `,` or `}` that ends the branch). */
function globBody(glob: string, i: number, inBraces: boolean): { body: string; end: number } {
  let out = "";
  while (i < glob.length) {
    const c = glob[i];
    if (inBraces && (c === "," || c === "}")) break;
    if (c === "\\" && i + 1 < glob.length) {
      out += escapeChar(glob[i + 1]);
      i += 2;
    } else if (c === "*") {
      let j = i;
      while (glob[j] === "*") j++;
      const wholeSegment = j - i >= 2 && (i === 0 || glob[i - 1] === "/") && (j === glob.length || glob[j] === "/");
      if (!wholeSegment) out += "[^/]*";
      else if (j === glob.length) out = i === 0 ? ".*" : `${out.slice(0, -1)}(?:/.*)?`; // `a/**`: a and all below it
      else {
        out += "(?:[^/]*/)*"; // `**/`: zero or more directories
        j++;
      }
      i = j;
    } else if (c === "?") {
      out += "[^/]";
      i++;
    } else if (c === "[") {
      const cls = globClass(glob, i);
      out += cls.body;
      i = cls.end;
    } else if (c === "{") {
      const alt = globBraces(glob, i);
      out += alt.body;
      i = alt.end;
    } else {
      out += escapeChar(c);
      i++;
    }
  }
  return { body: out, end: i };
}

/** `[…]` from `i`; a `[` without its `]` is literal. */
function globClass(glob: string, i: number): { body: string; end: number } {
  let j = i + 1;
  const negated = glob[j] === "!" || glob[j] === "^";
  if (negated) j++;
  const start = j;
  if (glob[j] === "]") j++; // a leading ] is a member
  while (j < glob.length && glob[j] !== "]") j++;
  if (j >= glob.length) return { body: "\\[", end: i + 1 };
  const members = glob.slice(start, j).replace(/[\\[\]^]/g, (m) => `\\${m}`);
  return { body: `[${negated ? "^/" : ""}${members}]`, end: j + 1 };
}

/** `{a,b,…}` from `i`, branches globs themselves; braces without a comma or a closing `}` are literal. */
function globBraces(glob: string, i: number): { body: string; end: number } {
  const branches: string[] = [];
  let j = i + 1;
  for (;;) {
    const b = globBody(glob, j, true);
    branches.push(b.body);
    j = b.end;
    if (glob[j] === ",") j++;
    else break;
  }
  if (glob[j] !== "}" || branches.length < 2) return { body: "\\{", end: i + 1 };
  return { body: `(?:${branches.join("|")})`, end: j + 1 };
}

function escapeChar(c: string): string {
  return SPECIAL.test(c) ? `\\${c}` : c;
}
