//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package vault_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/vault"
	"golang.org/x/sys/unix"
)

// TestLockWaitBoundByContext holds the vault lock as another process would
// and checks that a writer waits for it only as long as its context allows,
// and writes once it is released.
func TestLockWaitBoundByContext(t *testing.T) {
	v := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(1)})
	lockPath := filepath.Join(filepath.Dir(v.Path()), "vault.lock")
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	n := vault.MustParseName("global/k")
	if err := v.Set(ctx, n, []byte("v")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Set while another holds the lock = %v", err)
	}
	if ok, _ := v.Has(t.Context(), n); ok {
		t.Fatal("Set wrote without the lock")
	}
	f.Close() // releases the flock
	mustSet(t, v, "global/k", "v")
}
