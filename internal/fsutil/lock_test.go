//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package fsutil_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// A held lock makes a second taker wait until its ctx or maxWait ends; once
// released, it is taken at once. flock locks belong to the open file, so a
// second LockExclusive in the same process contends like another process.
func TestLockExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	held, err := fsutil.LockExclusive(context.Background(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := fsutil.LockExclusive(ctx, path, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait bounded by ctx: %v", err)
	}
	if _, err := fsutil.LockExclusive(context.Background(), path, 30*time.Millisecond); !errors.Is(err, fsutil.ErrLockTimeout) {
		t.Fatalf("wait bounded by maxWait: %v", err)
	}
	// maxWait < 0 tries once.
	f2, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	if err := fsutil.Flock(context.Background(), f2, -1); !errors.Is(err, fsutil.ErrLockTimeout) {
		t.Fatalf("try: %v", err)
	}
	if err := fsutil.Unlock(held); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.Flock(context.Background(), f2, -1); err != nil {
		t.Fatalf("try after Unlock: %v", err)
	}
	f2.Close()
	held.Close()
	f, err := fsutil.LockExclusive(context.Background(), path, time.Second)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	f.Close()
}
