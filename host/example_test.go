package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// buildEcho packages and signs the echo example with a fixed key.
func buildEcho() (data []byte, publisherKeyHex string, err error) {
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
	manifest, sbom, prov, wasm := read("skill.toml"), read("sbom.cdx.json"), read("provenance.json"), []byte(nil)
	wasm, err = os.ReadFile(echoWasm)
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

func Example() {
	ctx := context.Background()
	state, _ := os.MkdirTemp("", "palyra-example-")
	defer os.RemoveAll(state)

	h, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecarPath})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close(ctx)

	data, keyHex, err := buildEcho()
	if err != nil {
		fmt.Println(err)
		return
	}
	// Trust the publisher's key, as `palyra skills install
	// --trusted-publisher palyra=HEX` does.
	res, err := h.Install(ctx, data, install.InstallOptions{
		TrustedPublishers: []install.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("installed", res.SkillID, res.Version, res.Status)

	out, err := h.Call(ctx, "palyra.echo", "palyra.echo", json.RawMessage(`{"text":"hello"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out.Output))
	// Output:
	// installed palyra.echo 0.1.0 active
	// {"echo":"hello"}
}
