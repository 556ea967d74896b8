// Ground truth for Go: go/types' resolution of every call of a module (standard library only).
//
// Usage: go_truth TREE  -> the truth as JSON on stdout (the shape of truth.mjs).
// Each package of the module is type-checked with its in-package tests, and its external test
// package (_test) against that; the module's own packages are checked from the tree, everything
// else through the source importer (GOROOT, and GOPATH in GOPATH mode: Debian's golang-*-dev
// packages under /usr/share/gocode). A dependency that cannot be found leaves its uses untyped:
// calls through them are 'unknown', and type errors are counted, not fatal.
package main

import (
	"encoding/json"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

type def struct {
	File     string `json:"file"`
	Name     string `json:"name"`
	Line     int    `json:"line"`
	NameLine int    `json:"nameLine"`
	EndLine  int    `json:"endLine"`
	Kind     string `json:"kind"`
}

type site struct {
	Caller int    `json:"caller"`
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Line   int    `json:"line"`
	Status string `json:"status"`
	Target *int   `json:"target,omitempty"`
	// A call through an interface: the methods of the module's types implementing it that the call
	// may run (those declared in the calling package or the module's packages it imports).
	Candidates []int `json:"candidates,omitempty"`
}

type loader struct {
	tree, module string
	fset         *token.FileSet
	std          types.ImporterFrom
	pkgs         map[string]*types.Package
	testVariant  map[string]*types.Package
	defs         []def
	index        map[string]int
	sites        []site
	typeErrors   int
	unresolved   map[string]bool
}

func (l *loader) rel(p string) string {
	r, _ := filepath.Rel(l.tree, p)
	return filepath.ToSlash(r)
}

func (l *loader) Import(path string) (*types.Package, error) { return l.ImportFrom(path, "", 0) }

func (l *loader) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	if p := l.testVariant[path]; p != nil {
		return p, nil
	}
	if p := l.pkgs[path]; p != nil {
		return p, nil
	}
	if path == l.module || strings.HasPrefix(path, l.module+"/") {
		d := filepath.Join(l.tree, strings.TrimPrefix(strings.TrimPrefix(path, l.module), "/"))
		bp, err := build.ImportDir(d, 0)
		if err != nil {
			return nil, err
		}
		p, _, _ := l.check(path, d, bp.GoFiles, false)
		return p, nil
	}
	p, err := l.std.ImportFrom(path, dir, mode)
	if err != nil {
		l.unresolved[path] = true
		return nil, err
	}
	l.pkgs[path] = p
	return p, nil
}

func (l *loader) parse(dir string, names []string) []*ast.File {
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, n), nil, parser.ParseComments)
		if err == nil {
			files = append(files, f)
		}
	}
	return files
}

// check type-checks one package; with record, its calls become sites.
func (l *loader) check(path, dir string, names []string, record bool) (*types.Package, []*ast.File, *types.Info) {
	files := l.parse(dir, names)
	// Each parse has its own positions: a package imported by another is a parse of its own, whose
	// functions must be found from the importer's calls too.
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				funcDecls[fd.Name.Pos()] = fd
			}
		}
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: l, Error: func(error) { l.typeErrors++ }}
	p, _ := conf.Check(path, l.fset, files, info)
	if !record {
		l.pkgs[path] = p
	}
	return p, files, info
}

func (l *loader) defOf(fd *ast.FuncDecl) int {
	pos := l.fset.Position(fd.Pos())
	file := l.rel(pos.Filename)
	key := file + "\x00" + fd.Name.Name + "\x00" + string(rune(pos.Line))
	if i, ok := l.index[key]; ok {
		return i
	}
	kind := "function"
	if fd.Recv != nil {
		kind = "method"
	}
	l.defs = append(l.defs, def{File: file, Name: fd.Name.Name, Line: pos.Line, NameLine: l.fset.Position(fd.Name.Pos()).Line, EndLine: l.fset.Position(fd.End()).Line, Kind: kind})
	l.index[key] = len(l.defs) - 1
	return len(l.defs) - 1
}

// funcDecls maps the position of each function's name to its declaration, over every file seen.
var funcDecls = map[token.Pos]*ast.FuncDecl{}

func (l *loader) record(pkg *types.Package, files []*ast.File, info *types.Info) {
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			caller := l.defOf(fd)
			recv := ""
			if fd.Recv != nil && len(fd.Recv.List) > 0 && len(fd.Recv.List[0].Names) > 0 {
				recv = fd.Recv.List[0].Names[0].Name
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					l.site(pkg, caller, recv, c, info)
				}
				return true
			})
		}
	}
}

func unwrap(e ast.Expr) ast.Expr {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		default:
			return e
		}
	}
}

func (l *loader) site(pkg *types.Package, caller int, recv string, c *ast.CallExpr, info *types.Info) {
	if tv, ok := info.Types[c.Fun]; ok && tv.IsType() {
		return // a conversion
	}
	s := site{Caller: caller, Line: l.fset.Position(c.Pos()).Line}
	var obj types.Object
	switch f := unwrap(c.Fun).(type) {
	case *ast.Ident:
		s.Name, s.Kind = f.Name, "plain"
		obj = info.Uses[f]
	case *ast.SelectorExpr:
		s.Name = f.Sel.Name
		if sel := info.Selections[f]; sel != nil {
			s.Kind = "method"
			if x, ok := f.X.(*ast.Ident); ok && recv != "" && x.Name == recv {
				s.Kind = "this"
			}
			if sel.Kind() == types.FieldVal {
				obj = sel.Obj() // a field of function type: a value
			} else {
				obj = sel.Obj()
				if fn, ok := obj.(*types.Func); ok {
					if r := fn.Type().(*types.Signature).Recv(); r != nil && types.IsInterface(r.Type()) {
						s.Status = "dispatch"
						if iface, ok := r.Type().Underlying().(*types.Interface); ok {
							s.Candidates = l.implementations(pkg, iface, fn.Name())
						}
					}
				}
			}
		} else {
			s.Kind = "imported"
			obj = info.Uses[f.Sel]
			if obj == nil {
				if x, ok := f.X.(*ast.Ident); ok {
					if _, isPkg := info.Uses[x].(*types.PkgName); !isPkg {
						s.Kind = "method"
					}
				}
			}
		}
	default:
		return // a call of a call's result, of a function literal: no name
	}
	if s.Status == "" {
		switch o := obj.(type) {
		case nil:
			s.Status = "unknown"
		case *types.Func:
			o = o.Origin()
			fd := funcDecls[o.Pos()]
			p := l.fset.Position(o.Pos())
			if fd != nil && strings.HasPrefix(p.Filename, l.tree+string(filepath.Separator)) {
				t := l.defOf(fd)
				s.Status, s.Target = "project", &t
			} else {
				s.Status = "outside"
			}
		case *types.Builtin:
			return
		default:
			if obj.Type() == nil || obj.Type() == types.Typ[types.Invalid] {
				s.Status = "unknown"
			} else {
				s.Status = "outside" // a variable or field holding a function
			}
		}
	}
	l.sites = append(l.sites, s)
}

// implementations: the defs of method `name` of the named types, in pkg and the module's packages it
// imports (one type universe), whose value or pointer implements iface.
func (l *loader) implementations(pkg *types.Package, iface *types.Interface, name string) []int {
	if pkg == nil || iface.NumMethods() == 0 {
		return nil
	}
	seen := map[*types.Package]bool{}
	var pkgs []*types.Package
	var walk func(p *types.Package)
	walk = func(p *types.Package) {
		if p == nil || seen[p] || !(p.Path() == l.module || strings.HasPrefix(p.Path(), l.module+"/") || p == pkg) {
			return
		}
		seen[p] = true
		pkgs = append(pkgs, p)
		for _, q := range p.Imports() {
			walk(q)
		}
	}
	walk(pkg)
	var out []int
	for _, p := range pkgs {
		for _, n := range p.Scope().Names() {
			tn, ok := p.Scope().Lookup(n).(*types.TypeName)
			if !ok || types.IsInterface(tn.Type()) {
				continue
			}
			var t types.Type = tn.Type()
			if !types.Implements(t, iface) {
				t = types.NewPointer(t)
				if !types.Implements(t, iface) {
					continue
				}
			}
			obj, _, _ := types.LookupFieldOrMethod(t, true, p, name)
			fn, ok := obj.(*types.Func)
			if !ok {
				continue
			}
			if fd := funcDecls[fn.Origin().Pos()]; fd != nil && strings.HasPrefix(l.fset.Position(fn.Pos()).Filename, l.tree+string(filepath.Separator)) {
				out = append(out, l.defOf(fd))
			}
		}
	}
	sort.Ints(out)
	return out
}

func modulePath(tree string) string {
	b, err := os.ReadFile(filepath.Join(tree, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module "))
		}
	}
	return ""
}

func main() {
	t0 := time.Now()
	tree, _ := filepath.Abs(os.Args[1])
	fset := token.NewFileSet()
	l := &loader{tree: tree, module: modulePath(tree), fset: fset, pkgs: map[string]*types.Package{}, testVariant: map[string]*types.Package{}, index: map[string]int{}, unresolved: map[string]bool{}}
	l.std = importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)
	var dirs []string
	filepath.Walk(tree, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			n := fi.Name()
			if p != tree && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Strings(dirs)
	packages := 0
	for _, d := range dirs {
		bp, err := build.ImportDir(d, 0)
		if err != nil {
			continue
		}
		packages++
		path := l.module
		if r := l.rel(d); r != "." {
			path += "/" + r
		}
		p, files, info := l.check(path, d, append(append([]string{}, bp.GoFiles...), bp.TestGoFiles...), true)
		l.record(p, files, info)
		if len(bp.XTestGoFiles) > 0 {
			l.testVariant[path] = p
			xp, xfiles, xinfo := l.check(path+"_test", d, bp.XTestGoFiles, true)
			l.record(xp, xfiles, xinfo)
			delete(l.testVariant, path)
		}
	}
	unresolved := []string{}
	for p := range l.unresolved {
		unresolved = append(unresolved, p)
	}
	sort.Strings(unresolved)
	unknown := 0
	for _, s := range l.sites {
		if s.Status == "unknown" {
			unknown++
		}
	}
	out := map[string]any{
		"language": "go",
		"tool":     "go/types " + runtime.Version(),
		"coverage": map[string]any{"seconds": time.Since(t0).Seconds(), "packages": packages, "calls": len(l.sites), "unknown": unknown, "type_errors": l.typeErrors, "imports_not_found": unresolved},
		"defs":     l.defs,
		"sites":    l.sites,
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
