package fsutil_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/internal/fsutil"
)

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.json")
	for _, content := range []string{"one", "two"} {
		if err := fsutil.WriteAtomic(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("read = %q, %v; want %q", got, err, content)
		}
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, %v", st.Mode(), err)
	}
	assertNoTemp(t, filepath.Dir(p))
}

func TestWriteExclusive(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if err := fsutil.WriteExclusive(p, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := fsutil.WriteExclusive(p, []byte("other"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second write error = %v, want fs.ErrExist", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "secret" {
		t.Fatalf("content replaced: %q", got)
	}
	assertNoTemp(t, dir)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := e.Name(); len(name) > 0 && name[0] == '.' {
			t.Errorf("temporary file left behind: %s", name)
		}
	}
}
