// Command exportcount counts the exported names of a Go module's public
// packages: the size of the API the module promises to keep.
//
//	go run ./internal/tools/exportcount [-v] [dir]
//
// dir is the module root (default "."); its go.mod names the import paths
// printed. A public package is a directory with at least one counted file,
// outside any directory named internal, testdata, node_modules or cmd,
// outside directories whose name starts with "." or "_" (the go tool
// ignores those too) and outside nested modules (a directory with its own
// go.mod). A counted file is a .go file that is not a _test.go file, not
// generated protobuf code (*.pb.go) and not in package main.
//
// In each package it counts the distinct exported top-level names: funcs,
// types, vars and consts, and methods whose receiver's type is exported
// (written Type.Method; a method of an unexported type is reachable only
// through an interface that already names it). Struct fields and interface
// methods are part of their type and not counted. A name declared in two
// files for different build constraints counts once, since files are read
// whatever their build tags.
//
// It prints `total N exported names in M public packages`; with -v, one
// line per package before it, "N<TAB>import/path", in import-path order.
// It uses go/parser only: nothing is type-checked, compiled or run.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes of run.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run is the command with its arguments and output streams; it returns the
// exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("exportcount", flag.ContinueOnError)
	fl.SetOutput(stderr)
	verbose := fl.Bool("v", false, "print the count of every package")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: exportcount [-v] [dir]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fl.NArg() > 1 {
		fl.Usage()
		return exitUsage
	}
	dir := "."
	if fl.NArg() == 1 {
		dir = fl.Arg(0)
	}
	pkgs, err := count(dir)
	if err != nil {
		fmt.Fprintln(stderr, "exportcount:", err)
		return exitError
	}
	total := 0
	for _, p := range pkgs {
		total += p.Names
		if *verbose {
			fmt.Fprintf(stdout, "%d\t%s\n", p.Names, p.Path)
		}
	}
	fmt.Fprintf(stdout, "total %d exported names in %d public packages\n", total, len(pkgs))
	return exitOK
}

// pkgCount is the number of exported names of one public package.
type pkgCount struct {
	Path  string // import path, or the directory relative to the root without a go.mod
	Names int
}

// skipDirs are the directory names whose trees hold no public package.
var skipDirs = map[string]bool{"internal": true, "testdata": true, "node_modules": true, "cmd": true}

// count walks the module rooted at dir and returns its public packages in
// import-path order.
func count(dir string) ([]pkgCount, error) {
	modPath, err := modulePath(dir)
	if err != nil {
		return nil, err
	}
	names := map[string]map[string]bool{} // package dir (slash, relative) → its exported names
	fset := token.NewFileSet()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == dir {
				return nil
			}
			n := d.Name()
			if skipDirs[n] || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		n := d.Name()
		if !d.Type().IsRegular() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasSuffix(n, ".pb.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if names[rel] == nil {
			names[rel] = map[string]bool{}
		}
		exported(f, names[rel])
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]pkgCount, 0, len(names))
	for rel, ns := range names {
		ip := path.Join(modPath, rel)
		if modPath == "" {
			ip = rel
		}
		out = append(out, pkgCount{Path: ip, Names: len(ns)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// exported adds the exported top-level names declared in f to into.
func exported(f *ast.File, into map[string]bool) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				into[d.Name.Name] = true
				continue
			}
			if recv := receiverType(d.Recv); ast.IsExported(recv) {
				into[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						into[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							into[n.Name] = true
						}
					}
				}
			}
		}
	}
}

// receiverType returns the name of a method's receiver type, without
// pointer or type parameters ("" when it has none, which go/parser allows
// on broken input).
func receiverType(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// modulePath returns the module path declared by dir/go.mod, or "" when
// there is no go.mod (then packages are named by their directories).
func modulePath(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return "", serr
		}
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(dir, "go.mod"))
}
