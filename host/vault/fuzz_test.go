package vault

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the vault.json parser: it must never
// panic, every error must wrap ErrCorrupt or ErrFileTooLarge, and an
// accepted file must hold only valid names and well-formed entries, and
// survive a write and re-read unchanged.
func FuzzLoad(f *testing.F) {
	v, err := Open(Config{StateDir: f.TempDir(), Key: bytes.Repeat([]byte{1}, KeyBytes)})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []string{"global/a", "skill:acme.echo_http/api_token", "principal:admin:ops/k"} {
		if err := v.Set(ctx, MustParseName(n), []byte("seed value")); err != nil {
			f.Fatal(err)
		}
	}
	st, err := v.load()
	if err != nil {
		f.Fatal(err)
	}
	good, err := st.marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"version":1,"entries":{}}`))
	f.Add([]byte(`{"version":1,"entries":null}`))
	f.Add(bytes.Replace(good, []byte("global/a"), []byte("Global/a"), 1))
	f.Add(bytes.Replace(good, []byte("global/a"), []byte("global/a/b"), 1))
	f.Add(bytes.Replace(good, []byte(`"version": 1`), []byte(`"version": 2`), 1))
	f.Add([]byte(`{"version":1,"entries":{"global/":{}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseState(data, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFileTooLarge) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrFileTooLarge", err)
			}
			return
		}
		if len(st.entries) > 0 && st.keyCheck == nil {
			t.Fatal("accepted entries without a key check")
		}
		for n, e := range st.entries {
			if err := n.Validate(); err != nil {
				t.Fatalf("accepted an entry with a bad name: %v", err)
			}
			if len(e.nonce) != nonceBytes || len(e.ciphertext) <= tagBytes || len(e.ciphertext) > MaxSecretBytes+tagBytes {
				t.Fatalf("accepted entry %s with a %d-byte nonce and a %d-byte ciphertext", n, len(e.nonce), len(e.ciphertext))
			}
		}
		out, err := st.marshal()
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseState(out, "fuzz re-read")
		if err != nil {
			t.Fatalf("re-reading a written state: %v", err)
		}
		if len(again.entries) != len(st.entries) || !bytes.Equal(again.keyCheck, st.keyCheck) {
			t.Fatal("a written state reads back different")
		}
		for n, e := range st.entries {
			a := again.entries[n]
			if !bytes.Equal(a.nonce, e.nonce) || !bytes.Equal(a.ciphertext, e.ciphertext) || !a.updatedAt.Equal(e.updatedAt) {
				t.Fatalf("entry %s reads back different", n)
			}
		}
	})
}

// FuzzParseName checks that ParseName accepts only names that print back
// as given, with both parts valid.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"global/k", "skill:a.b/c", "principal:admin:ops/api_token", "global", "/", "global/a/b", "skill:/k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseName(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("error %v does not wrap ErrInvalidName", err)
			}
			return
		}
		if n.String() != s {
			t.Fatalf("ParseName(%q).String() = %q", s, n.String())
		}
		if scopeReason(n.Scope) != "" || keyReason(n.Key) != "" {
			t.Fatalf("ParseName(%q) accepted an invalid part", s)
		}
	})
}
