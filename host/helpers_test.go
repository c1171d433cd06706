package host_test

import (
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// buildEcho packages and signs the echo example with a fixed key.
func buildEcho() (data []byte, publisherKeyHex string, err error) {
	wasm, err := os.ReadFile(echoWasm)
	if err != nil {
		return nil, "", err
	}
	return buildEchoWith(wasm)
}

// buildEchoWith is buildEcho with wasm as the module.
func buildEchoWith(wasm []byte) (data []byte, publisherKeyHex string, err error) {
	dir, err := examplebuild.Dir("echo")
	if err != nil {
		return nil, "", err
	}
	read := func(name string) []byte {
		b, e := os.ReadFile(filepath.Join(dir, name))
		if e != nil && err == nil {
			err = e
		}
		return b
	}
	manifest, sbom, prov := read("skill.toml"), read("sbom.cdx.json"), read("provenance.json")
	if err != nil {
		return nil, "", err
	}
	seed := make([]byte, ed25519.SeedSize) // a fixed key, for the example only
	for i := range seed {
		seed[i] = byte(i + 1)
	}
	key := ed25519.NewKeyFromSeed(seed)
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   manifest,
		Modules:    []artifact.File{{Path: "echo.wasm", Data: wasm}},
		SBOM:       sbom,
		Provenance: prov,
		SigningKey: key,
		SignedAt:   time.Unix(1_730_000_000, 0),
	})
	if err != nil {
		return nil, "", err
	}
	return built.Bytes, hex.EncodeToString(key.Public().(ed25519.PublicKey)), nil
}
