"""Ground truth for Python: jedi's goto on every call of the project (Debian's python3-jedi).

Usage: python3 py_truth.py TREE  -> the truth as JSON on stdout (the shape of truth.mjs).
Defs are functions not nested in another function (codemem folds those into the outermost one);
each call made inside a def is resolved with jedi.Script.goto(follow_imports=True) at the called
name: a function of the project gives a pair, a class of the project its __init__ (kind
constructor), anything outside the tree 'outside', no answer 'unknown', several 'dispatch'.
"""
import ast
import json
import os
import sys
import time

import jedi
from jedi.inference.gradual import typeshed


def ignore_stale_stubs(roots):
    """jedi bundles typeshed's stubs of old third-party releases (Debian's 0.18 has flask 1.x and
    requests 2.2x ones, where `flask.abort` is werkzeug's). The project's own packages are described
    by its source: their stubs are dropped from jedi's map, so `flask.abort` in flask's tests is
    flask's own `helpers.abort`, as Python itself resolves it from the checkout."""
    own = {n for r in roots if os.path.isdir(r) for n in os.listdir(r)
           if os.path.isfile(os.path.join(r, n, "__init__.py")) or n.endswith(".py")}
    own = {n[:-3] if n.endswith(".py") else n for n in own}
    stub_map = typeshed._cache_stub_file_map

    def without_own(version_info):
        return {k: v for k, v in stub_map(version_info).items() if k not in own}

    typeshed._cache_stub_file_map = without_own


def py_files(tree):
    out = []
    for d, dirs, files in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "node_modules")
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".py")]
    return out


class Truth:
    def __init__(self, tree):
        self.tree = tree
        self.defs = []
        self.index = {}
        self.sites = []
        self.asts = {}
        self.tops = {}

    def rel(self, p):
        return os.path.relpath(p, self.tree).replace(os.sep, "/")

    def def_index(self, file, node, cls=None):
        key = (file, node.lineno, node.name)
        if key not in self.index:
            self.index[key] = len(self.defs)
            kind = "constructor" if node.name == "__init__" and cls else ("method" if cls else "function")
            self.defs.append({"file": file, "name": node.name, "line": node.lineno, "nameLine": node.lineno, "endLine": node.end_lineno, "kind": kind, "cls": cls})
        return self.index[key]

    def tree_of(self, path):
        if path not in self.asts:
            try:
                with open(path, encoding="utf-8") as f:
                    self.asts[path] = ast.parse(f.read())
            except (SyntaxError, UnicodeDecodeError, OSError):
                self.asts[path] = None
        return self.asts[path]

    def top_defs(self, path):
        """(node, class name or None) of every def not nested in a function, by line. An @overload
        stub (no node for codemem) stands for the implementation that follows it."""
        if path in self.tops:
            return self.tops[path]
        t = self.tree_of(path)
        out = self.tops[path] = {}
        if t is None:
            return out
        stubs = []

        def walk(body, cls):
            for n in body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if any((isinstance(d, ast.Name) and d.id == "overload") or (isinstance(d, ast.Attribute) and d.attr == "overload") for d in n.decorator_list):
                        stubs.append((n, cls))
                        continue
                    out[n.lineno] = (n, cls)
                    for s, c in stubs:
                        if s.name == n.name and c == cls:
                            out[s.lineno] = (n, cls)
                    stubs.clear()
                elif isinstance(n, ast.ClassDef):
                    walk(n.body, n.name)
                elif isinstance(n, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                    # Defs under a module-level if/try are still top-level.
                    for field in ("body", "orelse", "finalbody"):
                        walk(getattr(n, field, []) or [], cls)
                    for h in getattr(n, "handlers", []) or []:
                        walk(h.body, cls)

        walk(t.body, None)
        return out


def module_imports(t):
    """Names bound by imports at module level: a call of one is an imported call."""
    names = set()
    for n in ast.walk(t):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                names.add((a.asname or a.name).split(".")[0])
    return names


def call_kind(call, imported):
    f = call.func
    if isinstance(f, ast.Name):
        return ("imported" if f.id in imported else "plain"), f.id, f.lineno, f.col_offset
    if isinstance(f, ast.Attribute):
        line, col = f.end_lineno, f.end_col_offset - len(f.attr)
        v = f.value
        if isinstance(v, ast.Name) and v.id in ("self", "cls"):
            return "this", f.attr, line, col
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
            return "constructor", f.attr, line, col
        if isinstance(v, ast.Name) and v.id in imported:
            return "imported", f.attr, line, col
        return "method", f.attr, line, col
    return None


def main(tree):
    t0 = time.time()
    tree = os.path.abspath(tree)
    truth = Truth(tree)
    src = os.path.join(tree, "src")
    project = jedi.Project(tree, added_sys_path=[src] if os.path.isdir(src) else [], smart_sys_path=False)
    ignore_stale_stubs([src, tree])
    env = jedi.InterpreterEnvironment()
    files = py_files(tree)
    counts = {"files": len(files), "calls": 0}
    for path in files:
        t = truth.tree_of(path)
        if t is None:
            continue
        rel = truth.rel(path)
        imported = module_imports(t)
        with open(path, encoding="utf-8") as f:
            script = jedi.Script(f.read(), path=path, project=project, environment=env)
        for line, (node, cls) in truth.top_defs(path).items():
            if node.lineno != line:
                continue  # an overload stub's entry
            caller = truth.def_index(rel, node, cls)
            for call in ast.walk(node):
                if not isinstance(call, ast.Call):
                    continue
                k = call_kind(call, imported)
                if not k:
                    continue
                kind, name, line, col = k
                counts["calls"] += 1
                site = {"caller": caller, "name": name, "kind": kind, "line": line}
                resolve(truth, script, site, line, col)
                truth.sites.append(site)
    counts["seconds"] = time.time() - t0
    counts["unknown"] = sum(1 for s in truth.sites if s["status"] == "unknown")
    json.dump({"language": "python", "tool": f"jedi {jedi.__version__}", "coverage": counts, "defs": truth.defs, "sites": truth.sites}, sys.stdout)


def class_end(truth, path, line):
    """Last line of the class defined at `line` (0 when there is none)."""
    t = truth.tree_of(path)
    for n in ast.walk(t) if t else []:
        if isinstance(n, ast.ClassDef) and n.lineno <= line <= (n.body[0].lineno if n.body else n.lineno):
            return n.end_lineno
    return 0


def resolve(truth, script, site, line, col):
    try:
        found = script.goto(line, col, follow_imports=True)
    except Exception:  # jedi's own failures on odd code: no answer
        found = []
    targets = set()
    outside = False
    unknown = not found
    for d in found:
        path = str(d.module_path) if d.module_path else None
        if not path or not path.startswith(truth.tree + os.sep):
            outside = True
            continue
        if d.type == "function":
            top = truth.top_defs(path).get(d.line)
            if top and top[0].name == d.name and top[0].lineno == d.line or top and top[0].lineno > d.line:
                targets.add(truth.def_index(truth.rel(path), *top))
            else:
                site["status"] = "local"
                return
        elif d.type == "class":
            site["kind"] = "constructor" if site["kind"] in ("plain", "imported", "method") else site["kind"]
            init = [n for n, c in truth.top_defs(path).values() if c == d.name and n.name == "__init__" and n.lineno > d.line and n.lineno <= class_end(truth, path, d.line)]
            if init:
                targets.add(truth.def_index(truth.rel(path), min(init, key=lambda n: n.lineno), d.name))
            else:
                outside = True
        elif d.type in ("param", "statement", "instance"):
            unknown = True
        else:
            outside = True
    if len(targets) == 1 and not unknown:
        site["status"], site["target"] = "project", targets.pop()
    elif len(targets) > 1:
        site["status"] = "dispatch"
    elif unknown:
        site["status"] = "unknown"
    else:
        site["status"] = "outside"


if __name__ == "__main__":
    main(sys.argv[1])
