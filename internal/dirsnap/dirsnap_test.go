package dirsnap_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/dirsnap"
)

// TestDiff: every kind of change the package promises to see is seen, and
// an untouched tree has no difference.
func TestDiff(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, root string)
		want   bool // a difference is expected
	}{
		{"nothing", func(*testing.T, string) {}, false},
		{"read only", func(t *testing.T, root string) { mustRead(t, filepath.Join(root, "d", "f")) }, false},
		{"create", func(t *testing.T, root string) { mustWrite(t, filepath.Join(root, "g"), "x") }, true},
		{"remove", func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, "d", "f"))) }, true},
		{"same size rewrite", func(t *testing.T, root string) {
			p := filepath.Join(root, "d", "f")
			fi, _ := os.Stat(p)
			mustWrite(t, p, "HELLO")
			must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}, true},
		{"chmod", func(t *testing.T, root string) { must(t, os.Chmod(filepath.Join(root, "d", "f"), 0o644)) }, true},
		{"touch", func(t *testing.T, root string) {
			must(t, os.Chtimes(filepath.Join(root, "d"), time.Now(), time.Unix(1, 0)))
		}, true},
		{"empty directory", func(t *testing.T, root string) { must(t, os.Mkdir(filepath.Join(root, "e"), 0o700)) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			must(t, os.Mkdir(filepath.Join(root, "d"), 0o700))
			mustWrite(t, filepath.Join(root, "d", "f"), "hello")
			before := dirsnap.Take(t, root)
			tt.change(t, root)
			if d := before.Diff(dirsnap.Take(t, root)); (len(d) > 0) != tt.want {
				t.Fatalf("Diff = %q, want a difference: %t", d, tt.want)
			}
		})
	}
}

func TestMissingRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "absent")
	before := dirsnap.Take(t, root)
	if !before.Missing {
		t.Fatal("a missing root is not Missing")
	}
	if d := before.Diff(dirsnap.Take(t, root)); d != nil {
		t.Fatalf("Diff = %q", d)
	}
	must(t, os.Mkdir(root, 0o700))
	if d := before.Diff(dirsnap.Take(t, root)); len(d) == 0 {
		t.Fatal("creating the root is not a difference")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) { t.Helper(); must(t, os.WriteFile(p, []byte(s), 0o600)) }

func mustRead(t *testing.T, p string) {
	t.Helper()
	_, err := os.ReadFile(p)
	must(t, err)
}
