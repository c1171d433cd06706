package main

import (
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/vault"
)

// TestSigningKeyFromVault: keys generate --vault-ref stores a new key in
// the encrypted vault and prints only its public half; package build and
// keys public sign and read with it by reference; the seed is nowhere in
// clear (no file of the state dir, no output); a second generate, a scope
// skills can be granted, a missing entry and an entry that is no key are
// refused with their codes.
func TestSigningKeyFromVault(t *testing.T) {
	state := t.TempDir()
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--vault-ref", "signing/acme").decode(t, &gen)
	if gen.VaultRef != "signing/acme" || gen.KeyFile != "" || len(gen.PublicKeyHex) != 64 {
		t.Fatalf("generate: %+v", gen)
	}

	// The seed, read back the way a signer does, is nowhere in clear.
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := v.Get(t.Context(), vault.MustParseName("signing/acme"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := artifact.ParseSigningKey(stored)
	if err != nil {
		t.Fatal(err)
	}
	seedHex := hex.EncodeToString(priv.Seed())
	secrets := []string{seedHex, strings.ToUpper(seedHex), base64.StdEncoding.EncodeToString(priv.Seed())}

	out := filepath.Join(t.TempDir(), "echo.palyra-skill")
	var built buildReport
	r := cli(t, state, "", append(buildArgs(out), "--signing-key-vault-ref", "signing/acme")...)
	r.decode(t, &built)
	if built.SignatureKeyID != gen.KeyID {
		t.Fatalf("built with key %s, generated %s", built.SignatureKeyID, gen.KeyID)
	}
	var pub keyReport
	pr := cli(t, state, "", "keys", "public", "--json", "--vault-ref", "signing/acme")
	pr.decode(t, &pub)
	if pub.PublicKeyHex != gen.PublicKeyHex || pub.KeyID != gen.KeyID {
		t.Fatalf("public: %+v, generated %+v", pub, gen)
	}
	outputs := r.stdout + r.stderr + pr.stdout + pr.stderr
	err = filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		outputs += string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(outputs, s) {
			t.Fatalf("the seed is in clear in the state dir or an output")
		}
	}

	for _, tc := range []struct {
		name, code string
		args       []string
	}{
		{"the entry exists", "key_exists", []string{"keys", "generate", "--json", "--vault-ref", "signing/acme"}},
		{"a scope skills can be granted", "usage", []string{"keys", "generate", "--json", "--vault-ref", "global/acme"}},
		{"both destinations", "usage", []string{"keys", "generate", "--json", "--vault-ref", "signing/x", "--out", filepath.Join(t.TempDir(), "k")}},
		{"no entry", "secret_not_found", append(buildArgs(filepath.Join(t.TempDir(), "a.palyra-skill")), "--signing-key-vault-ref", "signing/nobody")},
		{"two key sources", "usage", append(buildArgs(filepath.Join(t.TempDir(), "b.palyra-skill")), "--signing-key-vault-ref", "signing/acme", "--signing-key-stdin")},
		{"an entry that is no key", "invalid_signing_key", []string{"keys", "public", "--json", "--vault-ref", "global/note"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "an entry that is no key" {
				if err := v.Set(t.Context(), vault.MustParseName("global/note"), []byte("not a key, but a secret value")); err != nil {
					t.Fatal(err)
				}
			}
			r := cli(t, state, seed01, tc.args...)
			if r.code == 0 {
				t.Fatalf("accepted: %s", r.stdout)
			}
			if got := r.errorCode(t); got != tc.code {
				t.Fatalf("code %s, want %s: %s", got, tc.code, r.stdout)
			}
			if strings.Contains(r.stdout+r.stderr, "not a key, but") {
				t.Fatalf("a vault value is in the output: %s", r.stdout)
			}
		})
	}
}
