/**
 * Dispatch candidates: a call through a receiver typed as an interface, or as a class whose method
 * subclasses override, may run another definition than the one it names. The resolver keeps the
 * edge to the declared member (what a compiler reports) and adds an edge to each implementation or
 * override the project holds, marked with a confidence (`GraphEdge.dispatch`), never one chosen.
 *
 * Implementations are found nominally (TypeScript/JavaScript, Python: the types extending or
 * implementing the receiver's type, transitively) or structurally (Go: the types whose method sets,
 * promoted methods included, have every method of the interface by name and arity).
 */

import { isTestPath } from "./test-code.js";

/** What the search asks the resolver; every answer is recorded as a lookup, so an edit re-resolves the callers it can change. */
export interface DispatchView {
  /** A node's kind (`class`, `interface`, `method`, …), name and file. */
  node(id: string): { type: string; name: string; file: string } | undefined;
  /** Types naming `typeId` among their bases (implementers, subclasses, Go's embedding types), sorted. */
  subtypes(typeId: string): readonly string[];
  /** The member a type has by that name, its own or inherited (promoted). */
  memberOf(typeId: string, name: string): string | undefined;
  /** Types that own or were attached a method of that name, sorted. */
  typesWithMethod(name: string): readonly string[];
  /** An interface's method specs (`name/arity`), its embedded interfaces' included. */
  interfaceMethods(typeId: string): string[];
  /** A function's number of parameters. */
  arity(id: string): number;
  /**
   * `fn()`, or its answer to an earlier call with the same question (`kind`, `a`, `b`) while nothing
   * it read can have changed (its lookups recorded again): calls through one interface repeat the
   * same search.
   */
  memo<T>(kind: string, a: string, b: string, fn: () => T): T;
}

/** More candidates than this and the call records none: a target among so many says little, and a hub interface would add edges by the thousand. */
export const MAX_CANDIDATES = 20;
/** Types visited per call, at most: bounds the cost of a deep or wide hierarchy. */
const MAX_VISITS = 500;
/** Languages whose calls get candidates (others: the declared member only). */
const NOMINAL = new Set(["js", "python"]);
const STRUCTURAL = new Set(["go"]);
const CALLABLE = new Set(["method", "function"]);
/** No candidates: most calls' answer, shared. */
const NONE = Object.freeze({ targets: Object.freeze([] as string[]), confidence: 0 });

/**
 * The definitions a call of `name` on a receiver statically typed `typeId` may reach besides
 * `declared` (what the call resolved to, if anything), each with its confidence: 1/(candidates + 1).
 * The one more is the declared member when it is a node (a base method runs for the receivers
 * whose class does not override it), else the implementations the index cannot list (a TS object
 * literal, a Go type of a dependency: both languages type interfaces structurally), so a lone
 * implementer is never certain. No evidence tells the run-time receivers apart: the candidates
 * share the rest equally. Empty when the call cannot dispatch.
 */
export function dispatchCandidates(view: DispatchView, family: string, typeId: string, name: string, declared: string | undefined, callerFile: string): { readonly targets: readonly string[]; confidence: number } {
  const found = view.memo(family, typeId, name, () => {
    const type = view.node(typeId)?.type;
    if (STRUCTURAL.has(family)) return type === "interface" ? implementors(view, typeId, name) : [];
    if (NOMINAL.has(family)) return type === "class" || type === "interface" ? overrides(view, typeId, name) : [];
    return [];
  });
  if (!found?.length) return NONE;
  const targets = found.filter((t) => t !== declared && CALLABLE.has(view.node(t)?.type ?? "") && linkedWith(view.node(t)?.file ?? "", callerFile));
  if (targets.length === 0 || targets.length > MAX_CANDIDATES) return NONE;
  return { targets, confidence: Math.round(1000 / (targets.length + 1)) / 1000 };
}

/** Nominal: the member each concrete subtype has by the name, once each; undefined past the visit bound. */
function overrides(view: DispatchView, typeId: string, name: string): string[] | undefined {
  const out = new Set<string>();
  const seen = new Set([typeId]);
  const queue = [typeId];
  while (queue.length) {
    for (const s of view.subtypes(queue.shift()!)) {
      if (seen.has(s)) continue;
      if (seen.size >= MAX_VISITS) return undefined;
      seen.add(s);
      queue.push(s);
      if (view.node(s)?.type === "interface") continue;
      const m = view.memberOf(s, name);
      if (m) out.add(m);
    }
  }
  return [...out].sort();
}

/** Structural (Go): the method of the name of each type that satisfies the interface. */
function implementors(view: DispatchView, iface: string, name: string): string[] | undefined {
  const specs = view.interfaceMethods(iface).map((s) => {
    const k = s.lastIndexOf("/");
    return { name: s.slice(0, k), arity: Number(s.slice(k + 1)) };
  });
  // An empty interface (or one whose methods are all embedded from outside the project) is satisfied by anything.
  if (!specs.some((s) => s.name === name)) return [];
  // Which types satisfy it does not depend on the method called: searched once per interface.
  const types = view.memo("satisfiers", iface, "", () => satisfiers(view, specs));
  if (!types) return undefined;
  const out = new Set<string>();
  for (const t of types) {
    const m = view.memberOf(t, name);
    if (m) out.add(m);
  }
  return [...out].sort();
}

/**
 * The types, in search order, holding the rarest of the interface's method names, and the types
 * embedding those (promotion), whose method sets cover the interface by name and arity; undefined
 * past the visit bound.
 */
function satisfiers(view: DispatchView, specs: { name: string; arity: number }[]): string[] | undefined {
  const holders = specs.map((s) => view.typesWithMethod(s.name));
  const seed = holders.reduce((a, b) => (b.length < a.length ? b : a));
  if (seed.length > MAX_VISITS) return undefined;
  const seen = new Set<string>(seed);
  const queue = [...seed];
  const out: string[] = [];
  for (let i = 0; i < queue.length; i++) {
    const t = queue[i];
    const kind = view.node(t)?.type;
    if (kind && kind !== "interface" && satisfies(view, t, specs)) out.push(t);
    for (const s of view.subtypes(t)) {
      if (seen.has(s)) continue;
      if (seen.size >= MAX_VISITS) return undefined;
      seen.add(s);
      queue.push(s);
    }
  }
  return out;
}

/**
 * Whether code in `file` can be running under a call from `callerFile`: test code's types (a spec's
 * `LogSubscriber`) are no candidates of the product's calls, and a Go test file's types exist only in
 * its own package's test binary.
 */
function linkedWith(file: string, callerFile: string): boolean {
  if (file.endsWith("_test.go")) return dirOf(file) === dirOf(callerFile);
  return !isTestPath(file) || isTestPath(callerFile);
}

function dirOf(file: string): string {
  return file.slice(0, file.lastIndexOf("/") + 1);
}

function satisfies(view: DispatchView, typeId: string, specs: { name: string; arity: number }[]): boolean {
  return specs.every((s) => {
    const m = view.memberOf(typeId, s.name);
    return m !== undefined && view.node(m)?.type === "method" && view.arity(m) === s.arity;
  });
}
