package trust_test

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"testing"
)

// Keys of the derived vectors (testdata/vectors/derived/expected.json).
const (
	echoKeyHex = "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c" // seed 0x01×32
	hookKeyHex = "ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c" // seed 0x07×32
)

const vectorsDir = "../../testdata/vectors/derived"

// seedKey returns the Ed25519 key whose seed is 32 bytes of b.
func seedKey(b byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{b}, ed25519.SeedSize))
}

func pub(b byte) ed25519.PublicKey { return seedKey(b).Public().(ed25519.PublicKey) }

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func vector(t testing.TB, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join(vectorsDir, name))
}
