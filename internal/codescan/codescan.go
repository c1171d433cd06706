// Package codescan finds the error codes a program defines, for tests that
// keep a list of codes in step with the code. It parses the Go sources of
// the given package directories and reads their sentinels: the variables
// declared with errcode.New("code", "message") (New("code", "message")
// inside host/errcode itself), and the re-exports of another package's
// sentinel (ErrNotFound = inventory.ErrNotFound), which it follows through
// the sources of this module to the errcode.New they come from. The sources
// are parsed, not linked, so it also reads cgo packages and package main.
package codescan

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ModulePath is the module whose imports a re-export is followed into.
const ModulePath = "github.com/palyra-go/palyra"

// errcodePath is the import path of the package that declares New.
const errcodePath = ModulePath + "/host/errcode"

// Sentinel is one sentinel variable found in the sources.
type Sentinel struct {
	// Name is the variable ("" for an errcode.New call that is not the
	// value of a variable).
	Name string
	// Code and Message are the arguments of the errcode.New call, followed
	// through re-exports.
	Code    string
	Message string
	// Pos is file:line of the declaration.
	Pos string
	// Alias is set for a re-export (Name = pkg.ErrX): its Code and Message
	// are those of the sentinel it names, declared elsewhere.
	Alias bool
}

// Codes returns the codes of the sentinels in dirs, test files left out, in
// the order found; a code defined twice (or re-exported) is there twice. A
// directory without Go files is an error, so a moved package does not
// silently shrink the list.
func Codes(dirs ...string) ([]string, error) {
	ss, err := Sentinels(dirs...)
	if err != nil {
		return nil, err
	}
	codes := make([]string, len(ss))
	for i, s := range ss {
		codes[i] = s.Code
	}
	return codes, nil
}

// Sentinels returns the sentinels declared in dirs, test files left out,
// in the order found.
func Sentinels(dirs ...string) ([]Sentinel, error) { return scan(false, dirs) }

// SentinelsWithTests is Sentinels with the _test.go files read too.
func SentinelsWithTests(dirs ...string) ([]Sentinel, error) { return scan(true, dirs) }

func scan(tests bool, dirs []string) ([]Sentinel, error) {
	sc := &scanner{pkgs: map[string]*pkg{}}
	var out []Sentinel
	for _, dir := range dirs {
		p, err := sc.load(dir, tests)
		if err != nil {
			return nil, err
		}
		for _, v := range p.vars {
			s := Sentinel{Name: v.name, Code: v.code, Message: v.msg, Pos: v.pos}
			if v.ref != nil {
				s.Alias = true
				s.Code, s.Message, err = sc.resolve(v.ref, 0)
				if errors.Is(err, errNotSentinel) {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("codescan: %s: %s: %w", v.pos, v.name, err)
				}
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// maxAliasDepth bounds a chain of re-exports (a cycle cannot compile, but
// the sources are not compiled).
const maxAliasDepth = 16

// ref names the sentinel a re-export is: variable name of the package in
// dir.
type ref struct{ dir, name string }

// decl is one variable of a package: an errcode.New (code, msg) or a
// re-export (ref).
type decl struct {
	name, code, msg, pos string
	ref                  *ref
}

// pkg is what a directory's sources declare.
type pkg struct {
	vars   []decl
	byName map[string]int
}

type scanner struct {
	root string // directory of the module ModulePath, found on first need
	pkgs map[string]*pkg
}

// resolve follows a re-export to the code and message of its errcode.New.
func (sc *scanner) resolve(r *ref, depth int) (code, msg string, err error) {
	if depth > maxAliasDepth {
		return "", "", errors.New("re-export chain too long")
	}
	p, err := sc.load(r.dir, false)
	if err != nil {
		return "", "", err
	}
	i, ok := p.byName[r.name]
	if !ok {
		return "", "", errNotSentinel
	}
	v := p.vars[i]
	if v.ref == nil {
		return v.code, v.msg, nil
	}
	return sc.resolve(v.ref, depth+1)
}

// errNotSentinel is a re-export of a variable that is not a sentinel (an
// error made with errors.New, say): it is left out.
var errNotSentinel = errors.New("not a sentinel")

// load parses the Go files of dir (memoized for the non-test view).
func (sc *scanner) load(dir string, tests bool) (*pkg, error) {
	key := filepath.Clean(dir)
	if p, ok := sc.pkgs[key]; ok && !tests {
		return p, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("codescan: no Go files in %s (%v)", dir, err)
	}
	p := &pkg{byName: map[string]int{}}
	for _, name := range files {
		if !tests && strings.HasSuffix(name, "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, fmt.Errorf("codescan: %w", err)
		}
		if err := sc.file(p, dir, fset, f); err != nil {
			return nil, err
		}
	}
	if !tests {
		sc.pkgs[key] = p
	}
	return p, nil
}

// file adds the sentinels of one parsed file to p.
func (sc *scanner) file(p *pkg, dir string, fset *token.FileSet, f *ast.File) error {
	imports := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		ip, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		local := path.Base(ip)
		if im.Name != nil {
			local = im.Name.Name
		}
		imports[local] = ip
	}
	inErrcode := f.Name.Name == "errcode"
	isNew := func(call *ast.CallExpr) bool {
		if len(call.Args) != 2 {
			return false
		}
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			id, ok := fn.X.(*ast.Ident)
			return ok && fn.Sel.Name == "New" && imports[id.Name] == errcodePath
		case *ast.Ident:
			return inErrcode && fn.Name == "New"
		}
		return false
	}
	add := func(d decl) {
		if d.name != "" && d.name != "_" {
			p.byName[d.name] = len(p.vars)
		}
		p.vars = append(p.vars, d)
	}
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, v := range n.Values {
				if i >= len(n.Names) {
					break
				}
				d := decl{name: n.Names[i].Name, pos: fset.Position(v.Pos()).String()}
				switch v := v.(type) {
				case *ast.CallExpr:
					if !isNew(v) {
						continue
					}
					d.code, d.msg = literal(v.Args[0]), literal(v.Args[1])
				case *ast.SelectorExpr:
					// A re-export: pkg.ErrX with pkg an import of this module.
					id, ok := v.X.(*ast.Ident)
					if !ok || !strings.HasPrefix(v.Sel.Name, "Err") {
						continue
					}
					ip, ok := imports[id.Name]
					if !ok || (ip != ModulePath && !strings.HasPrefix(ip, ModulePath+"/")) {
						continue
					}
					var target string
					if target, err = sc.dirOf(ip); err != nil {
						return false
					}
					d.ref = &ref{dir: target, name: v.Sel.Name}
				default:
					continue
				}
				add(d)
			}
			return false
		case *ast.CallExpr:
			if isNew(n) {
				add(decl{code: literal(n.Args[0]), msg: literal(n.Args[1]), pos: fset.Position(n.Pos()).String()})
			}
		}
		return true
	})
	return err
}

// literal returns the value of a string literal, "" for anything else.
func literal(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// dirOf returns the directory of an import path of ModulePath.
func (sc *scanner) dirOf(importPath string) (string, error) {
	if sc.root == "" {
		root, err := findModule()
		if err != nil {
			return "", err
		}
		sc.root = root
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(importPath, ModulePath), "/")
	return filepath.Join(sc.root, filepath.FromSlash(rel)), nil
}

// findModule returns the directory of ModulePath's go.mod: the working
// directory or the nearest parent whose go.mod declares it.
func findModule() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("codescan: %w", err)
	}
	for {
		if modulePathOf(filepath.Join(dir, "go.mod")) == ModulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("codescan: no go.mod of %s above the working directory", ModulePath)
		}
		dir = parent
	}
}

// modulePathOf returns the module path a go.mod declares, "" when there is
// no such file.
func modulePathOf(goMod string) string {
	f, err := os.Open(goMod)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
