package testregistry

import (
	"context"
	"crypto/ed25519"
	"os"
	"testing"

	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testskill"
)

// TestPublish: two published versions are both in the signed index, which
// verifies with the publisher's key.
func TestPublish(t *testing.T) {
	dir := t.TempDir()
	wasm, err := os.ReadFile("../../testdata/wasm/echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		art := testskill.Build(t, testskill.WithHosts(testskill.OneToolManifest("acme.one", v, ""), "api.example.com"), wasm, testskill.Key(7))
		Publish(t, dir, "acme.one-"+v+registry.ArtifactExt, art, testskill.Key(7), "acme")
	}
	trust := func(_ context.Context, publisher string, key ed25519.PublicKey, _ bool) (string, error) {
		if publisher != "acme" || !key.Equal(testskill.Key(7).Public()) {
			t.Fatalf("index signed by %s", publisher)
		}
		return "allowlisted", nil
	}
	cat, err := registry.ReadDir(context.Background(), dir, trust, false)
	if err != nil {
		t.Fatal(err)
	}
	if vs := cat.Versions("acme.one"); len(vs) != 2 || vs[1] != "1.1.0" {
		t.Fatalf("versions %v", vs)
	}
}
