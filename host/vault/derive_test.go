package vault_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/palyra-go/palyra/host/vault"
)

// TestDeriveKey: a subkey is 32 bytes, stable for one key and purpose,
// different across purposes and keys, never the vault key itself, and
// missing (ErrKeyMissing, nothing created) when the vault has no key.
func TestDeriveKey(t *testing.T) {
	ctx := context.Background()
	key1 := bytes.Repeat([]byte{1}, vault.KeyBytes)
	key2 := bytes.Repeat([]byte{2}, vault.KeyBytes)
	open := func(k []byte) *vault.Vault {
		v, err := vault.Open(vault.Config{StateDir: t.TempDir(), Key: k})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, err := open(key1).DeriveKey(ctx, "trust-store-mac")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := open(key1).DeriveKey(ctx, "trust-store-mac")
	other, _ := open(key1).DeriveKey(ctx, "other")
	otherKey, _ := open(key2).DeriveKey(ctx, "trust-store-mac")
	switch {
	case len(a) != vault.KeyBytes:
		t.Fatalf("subkey is %d bytes", len(a))
	case !bytes.Equal(a, again):
		t.Fatal("subkey not stable")
	case bytes.Equal(a, other), bytes.Equal(a, otherKey), bytes.Equal(a, key1):
		t.Fatal("subkeys collide or equal the vault key")
	}
	v, err := vault.Open(vault.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.DeriveKey(ctx, "trust-store-mac"); !errors.Is(err, vault.ErrKeyMissing) {
		t.Fatalf("no key: %v, want ErrKeyMissing", err)
	}
	if _, err := open(key1).DeriveKey(ctx, ""); !errors.Is(err, vault.ErrInvalidConfig) {
		t.Fatalf("empty purpose: %v", err)
	}
}
