package install_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/install"
)

// An operator installs a skill from a publisher they allowlist, and a
// second skill whose module asks for file access its manifest does not
// declare: that one is kept, quarantined, and the error says why.
func Example() {
	state, _ := os.MkdirTemp("", "palyra-example-")
	defer os.RemoveAll(state)
	ctx := context.Background()

	in, err := install.Open(ctx, install.Config{StateDir: state})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer in.Close()

	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x05}, 32))
	opts := install.InstallOptions{TrustedPublishers: []install.TrustedKey{
		{Publisher: "acme", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))},
	}}
	for _, s := range []struct{ id, module string }{
		{"acme.hello", "../../testdata/audit/palyra_baseline.wasm"},
		{"acme.files", "../../testdata/audit/wasi_path_open.wasm"},
	} {
		res, err := in.Install(ctx, exampleArtifact(key, s.id, s.module), opts)
		switch {
		case errors.Is(err, install.ErrAuditFailed):
			fmt.Printf("%s %s: %s (kept for inspection)\n", res.SkillID, res.Version, res.Status)
		case err != nil:
			fmt.Println(err)
			return
		default:
			fmt.Printf("%s %s: %s\n", res.SkillID, res.Version, res.Status)
		}
	}
	list, _ := in.List(ctx, install.ListOptions{EligibleOnly: true})
	for _, l := range list {
		fmt.Println("eligible:", l.SkillID)
	}
	// Output:
	// acme.hello 1.0.0: active
	// acme.files 1.0.0: quarantined (kept for inspection)
	// eligible: acme.hello
}

func exampleArtifact(key ed25519.PrivateKey, id, module string) []byte {
	mod, err := os.ReadFile(module)
	if err != nil {
		panic(err)
	}
	manifest := fmt.Sprintf(`skill_id = %q
name = "Example"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.run"
name = "run"
description = "Runs."
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Example"
`, id)
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   []byte(manifest),
		Modules:    []artifact.File{{Path: "module.wasm", Data: mod}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"example"},"subject":[{"name":"modules/module.wasm"}]}`),
		SigningKey: key,
		SignedAt:   time.Unix(1_730_000_000, 0),
	})
	if err != nil {
		panic(err)
	}
	return built.Bytes
}
