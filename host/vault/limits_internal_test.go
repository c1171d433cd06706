package vault

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// fillVault writes a vault file holding count entries whose ciphertexts are
// ctBytes long (dummies: they are never opened), sealed-checked for key.
func fillVault(t *testing.T, v *Vault, key []byte, count, ctBytes int) {
	t.Helper()
	aead, err := newAEAD(key)
	if err != nil {
		t.Fatal(err)
	}
	st := newState()
	if st.keyCheck, err = newKeyCheck(aead); err != nil {
		t.Fatal(err)
	}
	ct := bytes.Repeat([]byte{7}, ctBytes)
	for i := range count {
		st.entries[Name{Scope: "global", Key: fmt.Sprintf("k%05d", i)}] = sealedEntry{nonce: make([]byte, nonceBytes), ciphertext: ct, updatedAt: time.Unix(0, 0)}
	}
	data, err := st.marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteAtomic(v.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVaultFull(t *testing.T) {
	key := bytes.Repeat([]byte{3}, KeyBytes)
	const value = "sk-full-vault-secret-value"
	tests := []struct {
		name     string
		count    int
		ctBytes  int
		maxBytes int
		text     string
	}{
		{"entries", MaxEntries, tagBytes + 1, MaxVaultFileBytes, fmt.Sprintf("the %d-entry limit", MaxEntries)},
		// The file limit is lowered to 1 MiB (writing 32 MiB under the
		// race detector takes too long): 11 maximal entries of about
		// 87.5 kB of JSON each stay under it and one more does not.
		{"file size", 11, MaxSecretBytes + tagBytes, 1 << 20, "over the 1048576-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Open(Config{StateDir: t.TempDir(), Key: key})
			if err != nil {
				t.Fatal(err)
			}
			v.maxFileBytes = tt.maxBytes
			fillVault(t, v, key, tt.count, tt.ctBytes)
			big := []byte(value)
			if tt.ctBytes > MaxSecretBytes {
				big = append(bytes.Repeat([]byte{'x'}, MaxSecretBytes-len(value)), value...)
			}
			before, _ := os.ReadFile(v.Path())
			err = v.Set(context.Background(), MustParseName("global/one_more"), big)
			if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("Set into a full vault = %v, want ErrFull saying %q", err, tt.text)
			}
			if strings.Contains(err.Error(), value) {
				t.Fatalf("error shows the value: %v", err)
			}
			after, _ := os.ReadFile(v.Path())
			if !bytes.Equal(before, after) {
				t.Fatal("a refused Set changed the vault file")
			}
			// Replacing an existing entry is not adding one.
			if tt.name == "entries" {
				if err := v.Set(context.Background(), MustParseName("global/k00000"), []byte(value)); err != nil {
					t.Fatalf("replace in a full vault: %v", err)
				}
			}
		})
	}
}
