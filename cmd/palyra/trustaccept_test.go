package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
)

// TestTrustAcceptChanges: a key added to the trust store by hand makes
// every command that reads the store fail with trust_store_tampered and a
// hint naming accept-changes; accept-changes shows the diff first, refuses
// to re-seal without --yes when stdin is not a terminal, re-seals with
// --yes, and the store then loads with the key; an intact store has
// nothing to accept.
func TestTrustAcceptChanges(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	store := filepath.Join(t.TempDir(), "trust-store.json")
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	keyHex := func(b byte) string {
		return hex.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, 32)).Public().(ed25519.PublicKey))
	}
	f := trust.OpenFile(store, trust.WithVault(v))
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", keyHex(1)) }); err != nil {
		t.Fatal(err)
	}
	if r := cli(t, state, "", "trust", "show", "--trust-store", store); r.code != 0 {
		t.Fatalf("show of a sealed store: exit %d %s%s", r.code, r.stdout, r.stderr)
	}

	// The hand edit: an editor adds a publisher.
	data, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"trusted_publishers": {`, `"trusted_publishers": {
    "evil": ["`+keyHex(4)+`"],`, 1)
	if err := os.WriteFile(store, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}

	r := cli(t, state, "", "trust", "show", "--json", "--trust-store", store)
	if r.code != exitFailure || r.errorCode(t) != "trust_store_tampered" {
		t.Fatalf("show of a tampered store: exit %d %s", r.code, r.stdout)
	}
	var rep errorReport
	_ = json.Unmarshal([]byte(r.stdout), &rep)
	if !strings.Contains(rep.Error.Message, store) || !strings.Contains(rep.Error.Hint, "palyra trust accept-changes") {
		t.Fatalf("error report %+v names neither the file nor accept-changes", rep.Error)
	}

	// Without --yes and without a terminal: the diff, then a refusal.
	r = cli(t, state, "", "trust", "accept-changes", "--trust-store", store)
	if r.code == 0 {
		t.Fatalf("accept-changes without --yes and without a terminal succeeded:\n%s", r.stdout)
	}
	for _, want := range []string{"changed outside palyra", "added", "evil", "allowlisted", "ed25519:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("diff lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout+r.stderr, "--yes") {
		t.Errorf("refusal does not name --yes:\n%s%s", r.stdout, r.stderr)
	}
	if _, err := f.Load(ctx); err == nil {
		t.Fatal("a refused accept-changes re-sealed the store")
	}

	var acc struct {
		Status   string         `json:"status"`
		Accepted bool           `json:"accepted"`
		Changes  []trust.Change `json:"changes"`
	}
	cli(t, state, "", "trust", "accept-changes", "--yes", "-o", "json", "--trust-store", store).decode(t, &acc)
	want := []trust.Change{{Publisher: "evil", Trust: "allowlisted", Change: trust.ChangeAdded, NewKey: keyHex(4)}}
	if !acc.Accepted || acc.Status != "tampered" || len(acc.Changes) != 1 || acc.Changes[0] != want[0] {
		t.Fatalf("accept-changes report %+v, want the added key accepted", acc)
	}
	s, err := f.Load(ctx)
	if err != nil {
		t.Fatalf("load after accept-changes: %v", err)
	}
	if got := s.TrustedKeys("evil"); len(got) != 1 || got[0] != keyHex(4) {
		t.Fatalf("accepted store trusts evil with %v", got)
	}
	r = cli(t, state, "", "trust", "accept-changes", "--trust-store", store)
	if r.code != 0 || !strings.Contains(r.stdout, "is intact") {
		t.Fatalf("accept-changes on an intact store: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestTrustSealDeleted: deleting the seal of a sealed store (and adding a
// key by hand) does not get the store adopted: with the key file (no
// vault key) and with a configured vault key ($PALYRA_VAULT_KEY), the CLI
// refuses it with trust_store_tampered, naming the missing seal, and
// accept-changes --yes recovers it.
func TestTrustSealDeleted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vaultKey string
	}{
		{"key file", ""},
		{"vault key", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PALYRA_VAULT_KEY", tc.vaultKey)
			if tc.vaultKey == "" {
				os.Unsetenv("PALYRA_VAULT_KEY")
			}
			state, dir := t.TempDir(), t.TempDir()
			if r := cli(t, state, "", "skills", "install", "--artifact", goodSkill.write(t, dir), "--trusted-publisher", "acme="+echoPub); r.code != 0 {
				t.Fatalf("install: %d %s %s", r.code, r.stdout, r.stderr)
			}
			store := filepath.Join(state, "skills", "trust-store.json")
			if err := os.Remove(store + ".integrity.json"); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(store)
			if err != nil {
				t.Fatal(err)
			}
			evil := hex.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{4}, 32)).Public().(ed25519.PublicKey))
			edited := strings.Replace(string(data), `"trusted_publishers": {`, `"trusted_publishers": {
    "evil": ["`+evil+`"],`, 1)
			if err := os.WriteFile(store, []byte(edited), 0o600); err != nil {
				t.Fatal(err)
			}
			r := cli(t, state, "", "trust", "show", "--json")
			if r.code != exitFailure || r.errorCode(t) != "trust_store_tampered" || !strings.Contains(r.stdout, "is missing, but the store was sealed before") {
				t.Fatalf("show after the seal was deleted: exit %d %s", r.code, r.stdout)
			}
			if _, err := os.Stat(store + ".integrity.json"); err == nil {
				t.Fatal("the refused store was re-sealed")
			}
			r = cli(t, state, "", "trust", "accept-changes", "--yes")
			if r.code != 0 || !strings.Contains(r.stdout, "evil") {
				t.Fatalf("accept-changes: exit %d %s %s", r.code, r.stdout, r.stderr)
			}
			if r := cli(t, state, "", "trust", "show"); r.code != 0 || !strings.Contains(r.stdout, "evil") {
				t.Fatalf("show after accept-changes: exit %d %s %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
