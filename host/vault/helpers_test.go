package vault_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"github.com/palyra-go/palyra/host/vault"
)

// testKey returns a 32-byte key made of b.
func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, vault.KeyBytes) }

func b64(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

// openVault opens a vault, failing t on an error.
func openVault(t testing.TB, cfg vault.Config) *vault.Vault {
	t.Helper()
	v, err := vault.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// doc mirrors vault.json, for tests that edit the file by hand.
type doc struct {
	Version  int                 `json:"version"`
	KeyCheck string              `json:"key_check,omitempty"`
	Entries  map[string]docEntry `json:"entries"`
}

type docEntry struct {
	Nonce      string `json:"nonce"`
	Ciphertext string `json:"ciphertext"`
	UpdatedAt  string `json:"updated_at"`
}

func readDoc(t *testing.T, path string) doc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("vault file does not parse: %v", err)
	}
	return d
}

func writeDoc(t *testing.T, path string, d doc) {
	t.Helper()
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustSet(t testing.TB, v *vault.Vault, name, value string) {
	t.Helper()
	if err := v.Set(t.Context(), vault.MustParseName(name), []byte(value)); err != nil {
		t.Fatalf("Set %s: %v", name, err)
	}
}

func mustGet(t testing.TB, v *vault.Vault, name string) string {
	t.Helper()
	got, err := v.Get(t.Context(), vault.MustParseName(name))
	if err != nil {
		t.Fatalf("Get %s: %v", name, err)
	}
	return string(got)
}
