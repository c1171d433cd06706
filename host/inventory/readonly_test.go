package inventory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/dirsnap"
)

// envReader names the database TestReadOnlyHelper reads.
const envReader = "PALYRA_INVENTORY_TEST_READER"

// TestReadOnlyHelper is not a test: it is the body of the reader process
// TestOpenReadOnly starts (a read-only command such as `palyra skills list`
// is a process of its own, beside a daemon that writes). It opens the
// database read-only and prints "missing", or the skill ids it reads, then
// "readonly" when a write is refused with ErrReadOnly.
func TestReadOnlyHelper(t *testing.T) {
	path := os.Getenv(envReader)
	if path == "" {
		return
	}
	ctx := context.Background()
	db, err := OpenReadOnly(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Println("missing")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, err := db.Skills(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for range 2 { // the second read would be a cache hit in a writer
			if got, err := db.Skill(ctx, e.SkillID, ""); err != nil || got.Status == nil || got.Status.Status != StatusActive {
				t.Fatalf("Skill(%s) = %+v, %v", e.SkillID, got, err)
			}
		}
		fmt.Println(e.SkillID)
	}
	err = db.Update(ctx, func(tx *Tx) error { return tx.PutSkill(record("acme.other", "1.0.0"), PutOptions{}) })
	if errors.Is(err, ErrReadOnly) {
		fmt.Println("readonly")
	}
}

// TestOpenReadOnly: a reader process reads what writers committed, is
// refused a write, and leaves the directory exactly as it found it: with no
// database, after the writer closed it, and while a writer (this process)
// has it open with its commits still in the WAL.
func TestOpenReadOnly(t *testing.T) {
	if os.Getenv(envReader) != "" {
		t.Skip("in a reader process")
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx := context.Background()
	tests := []struct {
		name string
		// setup prepares the directory and returns what the reader must
		// print.
		setup func(t *testing.T, path string) []string
	}{
		{"no database", func(*testing.T, string) []string { return []string{"missing"} }},
		{"writer closed", func(t *testing.T, path string) []string {
			w, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			install(t, w, record("acme.one", "1.0.0"))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			return []string{"acme.one", "readonly"}
		}},
		{"writer open", func(t *testing.T, path string) []string {
			w := openAt(t, path)
			install(t, w, record("acme.one", "1.0.0"))
			install(t, w, record("acme.two", "1.0.0"))
			if _, err := os.Stat(path + "-wal"); err != nil {
				t.Fatalf("the writer has no WAL: %v", err)
			}
			return []string{"acme.one", "acme.two", "readonly"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "inventory.db")
			want := tt.setup(t, path)
			before := dirsnap.Take(t, dir)
			cmd := exec.Command(os.Args[0], "-test.run=^TestReadOnlyHelper$")
			cmd.Env = append(os.Environ(), envReader+"="+path)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("reader: %v\n%s%s", err, out, stderr.String())
			}
			var got []string
			for _, line := range strings.Split(string(out), "\n") {
				if line != "" && line != "PASS" {
					got = append(got, line)
				}
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("reader printed %q, want %q", got, want)
			}
			dirsnap.Unchanged(t, before)
		})
	}
}
