// Package codescan finds the error codes a program defines, for tests that
// keep a list of codes in step with the code: it parses the Go sources of
// the given package directories (test files left out) and collects the
// first argument of every errcode.New("code", "message") call. The sources
// are parsed, not linked, so it also reads cgo packages.
package codescan

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// Codes returns the codes defined with errcode.New in dirs, in the order
// found (a code defined twice is there twice). A directory without Go
// files is an error, so a moved package does not silently shrink the list.
func Codes(dirs ...string) ([]string, error) {
	var codes []string
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			return nil, fmt.Errorf("codescan: no Go files in %s (%v)", dir, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				return nil, fmt.Errorf("codescan: %w", err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "New" {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "errcode" {
					return true
				}
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						codes = append(codes, s)
					}
				}
				return true
			})
		}
	}
	return codes, nil
}
