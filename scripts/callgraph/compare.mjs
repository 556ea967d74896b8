// Scores a codemem graph's CALLS edges against a compiler's truth.
//
// Mapping: a def of the truth is the codemem node of the same file and name whose line_start lies
// between the def's first line and the line of its name (decorators, `export`, a multi-line
// signature), else the nearest such node within 2 lines. An edge to a class node stands for the
// class's constructor when the truth has one (codemem links `new C()` / `C()` to the class; where the
// class has several, as in Java, a pair to any of them that the caller calls), and is left out otherwise. Edges from a module or a class (calls at top level, in field initialisers)
// are left out: the truth counts calls made inside functions and methods only.
//
// Dispatch candidates (edges marked `dispatch`: the implementations or overrides a call through an
// interface or a base method may reach) are no direct-call predictions: the truth reports the
// declared member. They are counted apart, and where the truth lists a dispatching site's
// implementations (go/types), judged against them.

export const KINDS = ["plain", "imported", "this", "method", "constructor"];

/** Truth defs → codemem node ids, and back; counts what could not be mapped. */
function mapDefs(truth, graph) {
  const byFileName = new Map();
  for (const n of graph.nodes) {
    const k = `${n.file_path}\0${n.name}`;
    const list = byFileName.get(k);
    if (list) list.push(n);
    else byFileName.set(k, [n]);
  }
  const toNode = new Array(truth.defs.length);
  const toDef = new Map();
  truth.defs.forEach((d, i) => {
    const cands = (byFileName.get(`${d.file}\0${d.name}`) ?? []).filter((n) => n.type === "function" || n.type === "method");
    let hit = cands.find((n) => n.line_start >= d.line && n.line_start <= d.nameLine);
    if (!hit) {
      const near = cands.filter((n) => Math.abs(n.line_start - d.line) <= 2).sort((a, b) => Math.abs(a.line_start - d.line) - Math.abs(b.line_start - d.line));
      hit = near[0];
    }
    if (hit && !toDef.has(hit.id)) {
      toNode[i] = hit.id;
      toDef.set(hit.id, i);
    }
  });
  // A class node stands for its constructors (a Java class may have several: codemem's edge to
  // the class says the caller constructs it, whichever overload runs).
  const ctorsOf = new Map();
  truth.defs.forEach((d, i) => {
    if (d.kind !== "constructor" || !d.cls) return;
    const cls = (byFileName.get(`${d.file}\0${d.cls}`) ?? []).find((n) => n.type === "class" || n.type === "struct");
    if (!cls || (toDef.has(cls.id) && !ctorsOf.has(cls.id))) return;
    if (!toDef.has(cls.id)) toDef.set(cls.id, i);
    ctorsOf.set(cls.id, [...(ctorsOf.get(cls.id) ?? []), i]);
  });
  let unmapped = 0;
  for (let i = 0; i < truth.defs.length; i++) if (toNode[i] === undefined) unmapped++;
  return { toNode, toDef, ctorsOf, unmapped };
}

const emptyKind = () => ({ tp: 0, fp: 0, fn: 0 });

/** Precision and recall, overall and per call kind, with what was left out and why. */
export function compare(truth, graph) {
  const { toNode, toDef, ctorsOf, unmapped } = mapDefs(truth, graph);
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const pairs = new Map();
  const sitesOf = new Map();
  for (const s of truth.sites) {
    const list = sitesOf.get(s.caller);
    if (list) list.push(s);
    else sitesOf.set(s.caller, [s]);
    if (s.status !== "project") continue;
    const k = `${s.caller}>${s.target}`;
    if (!pairs.has(k)) pairs.set(k, { kind: s.kind, caller: s.caller, target: s.target, found: false });
  }
  const kinds = Object.fromEntries([...KINDS, "no call"].map((k) => [k, emptyKind()]));
  const left = { caller_not_function: 0, target_not_function: 0, unmapped_end: 0, unjudged: 0 };
  const fps = [];
  const dispatch = { edges: 0, real: 0, not_real: 0, unjudged: 0, truth_pairs: 0, found: 0 };
  // (caller, implementation) pairs of the truth's dispatching sites, and whether an edge (a candidate or a direct one) links them.
  const implPairs = new Map();
  for (const s of truth.sites) for (const c of s.status === "dispatch" ? (s.candidates ?? []) : []) implPairs.set(`${s.caller}>${c}`, false);
  for (const e of graph.edges) {
    if (e.type !== "calls") continue;
    const pair = `${toDef.get(e.source)}>${toDef.get(e.target)}`;
    if (implPairs.has(pair)) implPairs.set(pair, true);
    if (e.dispatch) {
      dispatch.edges++;
      dispatch[judgeDispatch(e, nodes, toDef, sitesOf)]++;
      continue;
    }
    const src = nodes.get(e.source);
    const dst = nodes.get(e.target);
    if (!src || (src.type !== "function" && src.type !== "method")) {
      left.caller_not_function++;
      continue;
    }
    if (!dst || !["function", "method", "class", "struct"].includes(dst.type)) {
      left.target_not_function++;
      continue;
    }
    const caller = toDef.get(src.id);
    const target = toDef.get(dst.id);
    if (target === undefined && (dst.type === "class" || dst.type === "struct")) {
      left.target_not_function++;
      continue;
    }
    if (caller === undefined) {
      left.unmapped_end++;
      continue;
    }
    const found = (ctorsOf.get(dst.id) ?? [target]).map((t) => t !== undefined && pairs.get(`${caller}>${t}`)).filter(Boolean);
    if (found.length) {
      for (const pair of found) pair.found = true;
      continue;
    }
    // A target the truth has no def for (a function assigned to a property) is judged by its name: the calls of that name resolved elsewhere.
    const t = target !== undefined ? truth.defs[target] : { file: dst.file_path, line: dst.line_start, name: dst.name, kind: dst.type };
    const named = (sitesOf.get(caller) ?? []).filter((s) => s.name === t.name || (t.kind === "constructor" && s.kind === "constructor" && (s.name === t.cls || s.name === "super")));
    if (named.some((s) => s.status === "unknown" || s.status === "dispatch")) {
      left.unjudged++;
      continue;
    }
    const kind = named[0]?.kind ?? "no call";
    kinds[kind].fp++;
    fps.push({ kind, caller: `${truth.defs[caller].file}:${truth.defs[caller].line} ${truth.defs[caller].name}`, target: `${t.file}:${t.line} ${t.name}`, truth: named[0] ? named[0].status : "no call of that name" });
  }
  const fns = [];
  for (const p of pairs.values()) {
    const k = kinds[p.kind];
    if (p.found) k.tp++;
    else {
      k.fn++;
      const c = truth.defs[p.caller];
      const t = truth.defs[p.target];
      fns.push({ kind: p.kind, caller: `${c.file}:${c.line} ${c.name}`, target: `${t.file}:${t.line} ${t.name}`, mapped: toNode[p.caller] !== undefined && toNode[p.target] !== undefined, recursive: p.caller === p.target });
    }
  }
  const all = Object.values(kinds).reduce((a, k) => ({ tp: a.tp + k.tp, fp: a.fp + k.fp, fn: a.fn + k.fn }), emptyKind());
  const recursion = [...pairs.values()].filter((p) => p.caller === p.target);
  return {
    overall: score(all),
    kinds: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, score(v)])),
    truth_pairs: pairs.size,
    recursion: { pairs: recursion.length, found: recursion.filter((p) => p.found).length },
    mapping: { defs: truth.defs.length, unmapped_defs: unmapped, pairs_with_unmapped_end: fns.filter((f) => !f.mapped).length },
    left_out: left,
    dispatch: { ...dispatch, truth_pairs: implPairs.size, found: [...implPairs.values()].filter(Boolean).length },
    false_positives: fps,
    misses: fns,
  };
}

/** A dispatch candidate against the truth's implementations of the caller's dispatching sites of that name: real, not real, or unjudged (no such list). */
function judgeDispatch(e, nodes, toDef, sitesOf) {
  const caller = toDef.get(e.source);
  const target = toDef.get(e.target);
  const name = nodes.get(e.target)?.name;
  const sites = caller === undefined ? [] : (sitesOf.get(caller) ?? []).filter((s) => s.status === "dispatch" && s.name === name && s.candidates);
  if (sites.length === 0 || target === undefined) return "unjudged";
  return sites.some((s) => s.candidates.includes(target)) ? "real" : "not_real";
}

function score(k) {
  return { ...k, precision: k.tp + k.fp ? k.tp / (k.tp + k.fp) : null, recall: k.tp + k.fn ? k.tp / (k.tp + k.fn) : null };
}
