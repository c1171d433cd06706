package sqlitefile_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/internal/sqlitefile"
)

func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "db.sqlite")
	if err := sqlitefile.Create(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	if err := sqlitefile.Create(filepath.Dir(path)); err == nil || !strings.Contains(err.Error(), filepath.Dir(path)) {
		t.Fatalf("a directory: %v", err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := sqlitefile.Create(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO: %v", err)
	}
}

func TestDSN(t *testing.T) {
	got := sqlitefile.DSN("/var/lib/p q.db", 1500*time.Millisecond)
	want := "file:///var/lib/p%20q.db?_pragma=busy_timeout%281500%29&_pragma=synchronous%28FULL%29&_pragma=foreign_keys%281%29&_txlock=immediate"
	if got != want {
		t.Fatalf("DSN = %s\nwant %s", got, want)
	}
}
