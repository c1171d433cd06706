package registry

import (
	"context"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/internal/wasmgen"
)

// buildTime is the clock of every index built in these tests.
var buildTime = time.Unix(1_760_000_000, 0)

// skillBytes returns a signed artifact of skill id at version by publisher
// (acme when ""), signed with key.
func skillBytes(t testing.TB, id, version, publisher string, key ed25519.PrivateKey) []byte {
	t.Helper()
	m := testskill.OneToolManifest(id, version, "")
	if publisher != "" {
		m = strings.Replace(m, `publisher = "acme"`, `publisher = "`+publisher+`"`, 1)
	}
	return testskill.Build(t, m, wasmgen.Module(wasmgen.Spec{Entrypoint: true}), key)
}

// writeFile writes data at dir/rel, creating directories.
func writeFile(t testing.TB, dir, rel string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// storeTrust judges keys with a real trust store.
func storeTrust(s *trust.Store) TrustFunc {
	return func(_ context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
		d, err := s.Decide(publisher, key, allowTOFU)
		return string(d), err
	}
}

// trustingKey returns a trust callback with key allowlisted for publisher.
func trustingKey(t testing.TB, publisher string, key ed25519.PrivateKey) TrustFunc {
	t.Helper()
	s := trust.NewStore()
	if err := s.AddTrusted(publisher, hexKey(key)); err != nil {
		t.Fatal(err)
	}
	return storeTrust(s)
}

func hexKey(key ed25519.PrivateKey) string {
	const digits = "0123456789abcdef"
	pub := key.Public().(ed25519.PublicKey)
	out := make([]byte, 0, 64)
	for _, b := range pub {
		out = append(out, digits[b>>4], digits[b&0xf])
	}
	return string(out)
}

// buildDir builds and writes the index of dir signed by key as acme,
// failing t on error.
func buildDir(t testing.TB, dir string, key ed25519.PrivateKey) *Built {
	t.Helper()
	b, err := Build(dir, key, "", buildTime)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if _, err := WriteIndex(dir, b.Bytes); err != nil {
		t.Fatal(err)
	}
	return b
}
