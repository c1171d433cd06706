package vault_test

import (
	"context"
	"errors"
	"testing"

	"github.com/palyra-go/palyra/host/vault"
)

// TestImportSealed: a sealed entry moves between vaults of one key as it
// is (no plaintext travels), is refused by a vault of another key or under
// another name (nothing written, so Has stays false), and DeleteSealed
// removes only the exact entry.
func TestImportSealed(t *testing.T) {
	ctx := context.Background()
	src := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(1)})
	same := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(1)})
	other := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(2)})
	mustSet(t, src, "skill:acme.x/token", "s3cret")
	mustSet(t, other, "skill:acme.x/own", "mine")
	all, err := src.SealedEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := vault.MustParseName("skill:acme.x/token")
	s, ok := all[name]
	if !ok || len(s.KeyCheck) == 0 {
		t.Fatalf("sealed entries %v", all)
	}
	for i, want := range []bool{true, false} {
		changed, err := same.Import(ctx, name, s)
		if err != nil || changed != want {
			t.Fatalf("import #%d into a vault of the same key: %v %v", i, changed, err)
		}
	}
	if got := mustGet(t, same, "skill:acme.x/token"); got != "s3cret" {
		t.Fatalf("imported value %q", got)
	}
	if _, err := other.Import(ctx, name, s); !errors.Is(err, vault.ErrKeyMismatch) {
		t.Fatalf("import under another key: %v", err)
	}
	if has, _ := other.Has(ctx, name); has {
		t.Fatal("a vault of another key holds the entry it cannot open")
	}
	moved := vault.MustParseName("skill:acme.y/token")
	if _, err := same.Import(ctx, moved, s); !errors.Is(err, vault.ErrCorrupt) {
		t.Fatalf("import under another name: %v", err)
	}
	empty := openVault(t, vault.Config{StateDir: t.TempDir(), Key: testKey(1)})
	if _, err := empty.Import(ctx, name, vault.Sealed{Nonce: s.Nonce, Ciphertext: s.Ciphertext, KeyCheck: []byte("short")}); !errors.Is(err, vault.ErrKeyMismatch) {
		t.Fatalf("import with a bad key check: %v", err)
	}
	mustSet(t, src, "skill:acme.x/token", "newer")
	newer, _ := src.SealedEntries(ctx)
	if del, err := same.DeleteSealed(ctx, name, newer[name]); err != nil || del {
		t.Fatalf("delete of another sealed value: %v %v", del, err)
	}
	if del, err := same.DeleteSealed(ctx, name, s); err != nil || !del {
		t.Fatalf("delete of the imported value: %v %v", del, err)
	}
	if has, _ := same.Has(ctx, name); has {
		t.Fatal("deleted entry still there")
	}
}
