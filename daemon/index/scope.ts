import type { RawDef } from "./types.js";

/**
 * What the names a definition binds stand for (parameters, locals, fields), from one file alone:
 * a call's receiver is rewritten to the type or value its first name is bound to, for the resolver
 * to evaluate across files (`resolve.ts`, `receiverValue`). Types are written `⟨T⟩`.
 */

/** A name bound at a position: by a declared type, by an assigned value, or only bound (a name the scope owns). */
export interface Binding {
  start: number;
  name: string;
  type?: string;
  value?: string;
  /** A field of the enclosing type (`this.x = …`, `self.x = …`, a constructor's parameter property). */
  field?: boolean;
}

/** Values longer than this are kept as mere bindings: a receiver is a name, a call or a `new`, not a block. */
const VALUE_CAP = 200;
const BUILTIN_COLLECTION = "[]";

/**
 * A declared type as the resolver names it: the (dotted) name, generics, pointers and optionality
 * stripped (`*gin.Engine` → `gin.Engine`, `Subscriber<T> | null` → `Subscriber`, `Optional["Foo"]` →
 * `Foo`); `[]` for collections and function types (never a type of the project's); undefined for a
 * union of several types.
 */
export function typeText(raw: string): string | undefined {
  if (!raw.trim()) return undefined;
  let t = raw.trim().replace(/^:\s*/, "").replace(/^(readonly|const|mut)\s+/, "").trim();
  t = t.replace(/^Optional\[(.*)\]$/s, "$1").replace(/^["']|["']$/g, "").trim();
  const parts = splitTop(t, "|").map((p) => p.trim()).filter((p) => p && !/^(null|undefined|None|void)$/.test(p));
  if (parts.length !== 1) return undefined;
  t = parts[0];
  if (/^\[|\[\]$|=>|^func\b|^map\[|^chan\b|^\(|^\{|\.\.\./.test(t)) return BUILTIN_COLLECTION;
  const m = t.replace(/^[*&\s]+/, "").match(/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*/);
  return m ? m[0] : undefined;
}

/** Splits at `sep` outside brackets. */
export function splitTop(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if ("<([{".includes(ch)) depth++;
    else if (">)]}".includes(ch)) depth--;
    else if (ch === sep && depth === 0) {
      out.push(s.slice(from, i));
      from = i + 1;
    }
  }
  out.push(s.slice(from));
  return out;
}

/** How much a binding says of its name: a declared type, a value, nothing. */
const rank = (b: Binding) => (b.type ? 2 : b.value !== undefined ? 1 : 0);

/** The bindings of a file's definitions (-1: the file), and how a receiver reads through them. */
export class Scopes {
  private readonly byOwner = new Map<number, Binding[]>();
  /** The same bindings by owner and name, in the order added: a lookup reads a name's bindings, not all of a large function's. */
  private readonly byName = new Map<number, Map<string, Binding[]>>();

  constructor(
    private readonly defs: RawDef[],
    private readonly selfNames: string[],
    private readonly isType: (d: RawDef) => boolean,
  ) {}

  add(owner: number, b: Binding): void {
    if (b.value !== undefined && b.value.length > VALUE_CAP) b = { ...b, value: undefined };
    let list = this.byOwner.get(owner);
    if (!list) this.byOwner.set(owner, (list = []));
    list.push(b);
    let names = this.byName.get(owner);
    if (!names) this.byName.set(owner, (names = new Map()));
    const same = names.get(b.name);
    if (same) same.push(b);
    else names.set(b.name, [b]);
  }

  /** Fields go to the type declaring them: `this.x`/`self.x` in a method to the method's type, a class body's typed names to the class. */
  collectFields(): void {
    const isType = this.isType;
    for (const [owner, list] of this.byOwner) {
      if (owner < 0) continue;
      let type = owner;
      const inType = isType(this.defs[owner]);
      if (!inType) while (type >= 0 && !isType(this.defs[type])) type = this.defs[type].parent;
      if (type < 0) continue;
      for (const b of list) {
        if (!b.field && !inType) continue;
        const expr = b.type ? `⟨${b.type}⟩` : b.value !== undefined ? (this.rewrite(b.value, owner, b.start, 1) ?? b.value) : undefined;
        if (!expr) continue;
        const d = this.defs[type];
        d.fields ??= [];
        // The first typed declaration wins over later assignments.
        if (!d.fields.some(([n]) => n === b.name)) d.fields.push([b.name, expr]);
      }
    }
  }

  /** The file's own bindings with a type or value (the last of each name, its declared type over its value), for other files importing them. */
  globals(): [string, string][] | undefined {
    const out = new Map<string, { expr: string; b: Binding }>();
    for (const b of this.byOwner.get(-1) ?? []) {
      const expr = b.type ? `⟨${b.type}⟩` : b.value !== undefined ? (this.rewrite(b.value, -1, b.start, 1) ?? b.value) : undefined;
      if (!expr || b.field) continue;
      const prev = out.get(b.name);
      // `x: T = v` binds x twice at one position: T is what the declaration says x is.
      if (prev && prev.b.start === b.start && rank(prev.b) > rank(b)) continue;
      out.set(b.name, { expr, b });
    }
    return out.size ? [...out].map(([name, x]) => [name, x.expr]) : undefined;
  }

  /** Whether a bare call's name is bound by the caller or a definition enclosing it (the file's own names are not: they are the project's). */
  shadows(caller: number, name: string): boolean {
    for (let i = caller; i >= 0; i = this.defs[i].parent) {
      if (!this.isType(this.defs[i]) && this.byName.get(i)?.get(name)?.some((b) => !b.field)) return true;
    }
    return false;
  }

  /** The receiver with its first name replaced by its binding, or undefined when it is bound to nothing known. */
  rewrite(receiver: string, caller: number, pos: number, depth = 0): string | undefined {
    const m = receiver.match(/^([A-Za-z_$][\w$]*)([^\w$].*)?$/s);
    if (!m || depth > 3) return undefined;
    const [, root, rest = ""] = m;
    if (rest.startsWith("(") || this.selfNames.includes(root)) return undefined;
    const b = this.binding(caller, root, pos);
    if (!b) return undefined;
    if (b.type) return `⟨${b.type}⟩${rest}`;
    if (b.value === undefined) return undefined;
    const inner = this.rewrite(b.value, caller, b.start, depth + 1) ?? b.value;
    return rest ? `(${inner})${rest}` : inner;
  }

  /** Whether the caller binds an expression's first name without a type or value (a lambda's parameter): nothing is known of it. */
  boundUntyped(text: string, caller: number, pos: number): boolean {
    const root = /^[A-Za-z_$][\w$]*/.exec(text)?.[0];
    const b = root && !this.selfNames.includes(root) ? this.binding(caller, root, pos) : undefined;
    return !!b && !b.type && b.value === undefined;
  }

  /** The nearest binding of `name` before `pos` in the caller or a definition enclosing it (the file last); one with a type or value wins a tie. */
  private binding(caller: number, name: string, pos: number): Binding | undefined {
    for (let i = caller; ; i = this.defs[i].parent) {
      let best: Binding | undefined;
      for (const b of this.byName.get(i)?.get(name) ?? []) {
        if (b.field || b.start > pos) continue;
        // At one position a declared type (`c := in.(*Command)`, `x: T = v`) wins over a value, a value over a bare name.
        if (!best || b.start > best.start || (b.start === best.start && rank(b) > rank(best))) best = b;
      }
      if (best || i < 0) return best;
    }
  }
}

const OPEN: Record<string, string> = { "(": ")", "[": "]", "{": "}", "<": ">", "⟨": "⟩" };

/** A receiver expression read left to right: its first name or literal, then fields, calls and casts. */
export class ReceiverText {
  private i = 0;

  constructor(private readonly s: string) {}

  done(): boolean {
    return this.i >= this.s.length;
  }

  /** Moves past whitespace and comments (a builder chain's line breaks). */
  space(): void {
    const m = /^(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/)*/.exec(this.s.slice(this.i));
    if (m) this.i += m[0].length;
  }

  peek(t: string): boolean {
    return this.s.startsWith(t, this.i);
  }

  eat(t: string): boolean {
    if (!this.peek(t)) return false;
    this.i += t.length;
    return true;
  }

  name(): string | undefined {
    const m = /^[A-Za-z_$][\w$]*/.exec(this.s.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    return m[0];
  }

  qualified(): string | undefined {
    const m = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*/.exec(this.s.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    return m[0];
  }

  /** A callback's parameter written `⟪callee⟫arg.param` by the extractor (contextual typing). */
  contextual(): { callee: string; arg: number; param: number } | undefined {
    const m = /^⟪([^⟫]+)⟫(\d+)\.(\d+)/.exec(this.s.slice(this.i));
    if (!m) return undefined;
    this.i += m[0].length;
    return { callee: m[1], arg: Number(m[2]), param: Number(m[3]) };
  }

  /** A declared type written `⟨T⟩` by `Scopes.rewrite`. */
  declared(): string | undefined {
    return this.peek("⟨") ? this.group() : undefined;
  }

  /** A string, number, array, object or regular expression literal (or a Go slice or map type, Python's `*args`, `**kwargs`): a builtin value. */
  literal(): boolean {
    return /^(?:[rbuRBUf]{0,2}["'`]|-?\d|\[|\{|\/[^/*]|map\[|\*{1,2}[A-Za-z_]\w*$)/.test(this.s.slice(this.i));
  }

  /** Type arguments (`f<T>()`), if here. */
  generics(): void {
    if (this.peek("<")) this.group();
  }

  /** Call arguments, if here. */
  args(): boolean {
    return this.peek("(") ? this.group() !== undefined : false;
  }

  /** The text up to `close` (a bracket opened just before), consumed. */
  until(close: string): string | undefined {
    const from = this.i;
    const inner = this.balanced(close);
    return inner === undefined ? undefined : this.s.slice(from, inner);
  }

  /** A bracketed group here, consumed: its inner text. */
  group(): string | undefined {
    const close = OPEN[this.s[this.i]];
    if (!close) return undefined;
    const from = ++this.i;
    const end = this.balanced(close);
    return end === undefined ? undefined : this.s.slice(from, end);
  }

  /** Moves past the `close` matching an already opened bracket; the index of that `close`. */
  private balanced(close: string): number | undefined {
    const stack = [close];
    let quote = "";
    for (; this.i < this.s.length; this.i++) {
      const ch = this.s[this.i];
      if (quote) {
        if (ch === "\\") this.i++;
        else if (ch === quote) quote = "";
        continue;
      }
      if (ch === '"' || ch === "'" || ch === "`") quote = ch;
      else if (ch === stack[stack.length - 1]) {
        stack.pop();
        if (stack.length === 0) return this.i++;
      } else if (OPEN[ch] && (ch !== "<" || stack[stack.length - 1] === ">")) stack.push(OPEN[ch]);
    }
    return undefined;
  }
}
