// Package testregistry publishes test artifacts into a local registry
// directory (Palyra's signed index, host/registry), for the tests of
// installs, updates and apply from a registry.
package testregistry

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testskill"
)

// Publish writes artifact into the local registry directory dir as name
// and signs dir's index.json again with key, as publisher, failing tb on
// any error.
func Publish(tb testing.TB, dir, name string, artifact []byte, key ed25519.PrivateKey, publisher string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), artifact, 0o644); err != nil {
		tb.Fatal(err)
	}
	b, err := registry.Build(dir, key, publisher, testskill.SignedAt)
	if err != nil {
		tb.Fatalf("build the registry index: %v", err)
	}
	if _, err := registry.WriteIndex(dir, b.Bytes); err != nil {
		tb.Fatalf("write the registry index: %v", err)
	}
}
