package host_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/vault"
)

// TestOpenReadsNoEnvironment: an embedding application's host keeps its
// files where Config documents them, whatever the process environment
// says. With $PALYRA_SKILLS_TRUST_STORE and $PALYRA_STATE_DIR pointing
// elsewhere, a trust-on-first-use install pins in
// <state>/skills/trust-store.json and nothing is written at the variables'
// paths; with $PALYRA_VAULT_KEY set, the vault seals with its key file (or
// Config.VaultKey when given), not with the variable.
func TestOpenReadsNoEnvironment(t *testing.T) {
	ctx := context.Background()
	elsewhere := t.TempDir()
	envKey := bytes.Repeat([]byte{7}, vault.KeyBytes)
	t.Setenv("PALYRA_SKILLS_TRUST_STORE", filepath.Join(elsewhere, "trust-store.json"))
	t.Setenv("PALYRA_STATE_DIR", filepath.Join(elsewhere, "state"))
	t.Setenv("PALYRA_VAULT_KEY", base64.StdEncoding.EncodeToString(envKey))
	cfgKey := bytes.Repeat([]byte{9}, vault.KeyBytes)

	tests := []struct {
		name     string
		vaultKey []byte // Config.VaultKey, decoded
	}{
		{name: "defaults"},
		{name: "Config.VaultKey", vaultKey: cfgKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			l := statedir.At(state)
			cfg := host.Config{StateDir: state}
			if tt.vaultKey != nil {
				cfg.VaultKey = base64.StdEncoding.EncodeToString(tt.vaultKey)
			}
			h, err := host.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(ctx)
			data, _, err := buildEcho()
			if err != nil {
				t.Fatal(err)
			}
			res, err := h.Install(ctx, host.InstallRequest{Artifact: data, AllowTOFU: true})
			if err != nil || res.TrustDecision != "tofu_newly_pinned" {
				t.Fatalf("install: %+v, %v", res, err)
			}
			if _, err := os.Stat(l.TrustStore()); err != nil {
				t.Fatalf("the pin is not in <state>/skills/trust-store.json: %v", err)
			}

			name := vault.MustParseName("global/token")
			if err := h.Vault().Set(ctx, name, []byte("v")); err != nil {
				t.Fatal(err)
			}
			want := tt.vaultKey
			if want == nil {
				if _, err := os.Stat(l.VaultKey()); err != nil {
					t.Fatalf("no key file at %s: %v", l.VaultKey(), err)
				}
			} else if _, err := os.Stat(l.VaultKey()); !os.IsNotExist(err) {
				t.Fatalf("a key file was made although Config.VaultKey is set: %v", err)
			}
			for _, k := range [][]byte{envKey, want} {
				if k == nil {
					continue
				}
				v, err := vault.Open(vault.Config{StateDir: state, Key: k})
				if err != nil {
					t.Fatal(err)
				}
				_, err = v.Get(ctx, name)
				if sealedWith := err == nil; sealedWith != bytes.Equal(k, want) {
					t.Errorf("Get with key %x: %v", k[:1], err)
				}
			}
			if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
				t.Fatalf("the host wrote where the environment points: %v", ents)
			}
		})
	}
}
