package cliconfig_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// envReaders are the calls that read the process environment (or search
// it, as $PATH and $HOME lookups do).
var envReaders = map[string]bool{
	"os.Getenv": true, "os.LookupEnv": true, "os.Environ": true, "os.ExpandEnv": true,
	"os.UserHomeDir": true, "os.UserConfigDir": true, "os.UserCacheDir": true, "exec.LookPath": true,
}

// allowedEnvReaders are the library directories that may make one of the
// calls, each with its reason.
var allowedEnvReaders = map[string]string{
	// The launcher starts every child of the host with an allowlist of
	// the environment: it filters what it passes on to its children.
	"host/internal/launch/ os.Environ": "the child launcher's environment allowlist",
}

func allowed(file, call string) bool {
	for k := range allowedEnvReaders {
		dir, c, _ := strings.Cut(k, " ")
		if strings.HasPrefix(file, dir) && c == call {
			return true
		}
	}
	return false
}

// TestOnlyCommandsReadTheEnvironment keeps the design rule that library
// packages read no environment (RATIONALE.md, "Libraries read no environment"): no non-test file
// under host/ calls an environment reader, except the allowed ones. The
// commands read theirs in this package.
func TestOnlyCommandsReadTheEnvironment(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	found := 0
	err := filepath.WalkDir(filepath.Join(root, "host"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		found++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			call := pkg.Name + "." + sel.Sel.Name
			if !envReaders[call] {
				return true
			}
			if !allowed(rel, call) {
				t.Errorf("%s: %s.%s: library code reads the environment; take the value from configuration and read it in cmd/internal/cliconfig", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 100 {
		t.Fatalf("scanned only %d files under host/: is the tree where this test expects it?", found)
	}
}
