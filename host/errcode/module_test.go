package errcode

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/codescan"
)

// TestModuleHasOneSentinelPerCode reads the sources of every package of the
// repository (cmd/palyra-bench, the cgo sidecar, package main and test files
// included, none of which one binary links together) and checks that each
// code is declared by exactly one errcode.New, every other name for it being
// a re-export, and that every message follows the rule New enforces.
func TestModuleHasOneSentinelPerCode(t *testing.T) {
	root := filepath.Join("..", "..")
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if m, _ := filepath.Glob(filepath.Join(p, "*.go")); len(m) > 0 {
				dirs = append(dirs, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "sidecar", "internal", "wasmrt")); err != nil {
		t.Fatalf("the walk does not start at the repository root: %v", err)
	}
	ss, err := codescan.SentinelsWithTests(dirs...)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{} // code -> positions of its errcode.New
	aliases := 0
	for _, s := range ss {
		if s.Alias {
			aliases++
			continue
		}
		if s.Code == "" {
			continue // New called with a variable (tests of New itself)
		}
		declared[s.Code] = append(declared[s.Code], s.Pos)
		if reason := checkMessage(s.Message); reason != "" {
			t.Errorf("%s: message %q of %s %s", s.Pos, s.Message, s.Code, reason)
		}
	}
	if len(declared) < 150 || aliases < 20 {
		t.Fatalf("found only %d codes and %d re-exports in %d directories: is the scan broken?", len(declared), aliases, len(dirs))
	}
	for code, at := range declared {
		if len(at) > 1 {
			t.Errorf("code %s has %d sentinels (re-export one of them instead): %s", code, len(at), strings.Join(at, ", "))
		}
	}
}
