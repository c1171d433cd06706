package audit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
)

// A skill whose module imports wasi_snapshot_preview1.path_open, though its
// manifest declares no filesystem capability (and the runtime gives no file
// access at all), is quarantined with reasons naming the import.
func ExampleAudit() {
	module, err := os.ReadFile("../../testdata/audit/wasi_path_open.wasm")
	if err != nil {
		panic(err)
	}
	built, err := artifact.Build(artifact.BuildInput{
		Manifest: []byte(`manifest_version = 2
skill_id = "acme.files"
name = "Files"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.read"
name = "read"
description = "Reads a file"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Files"
`),
		Modules:    []artifact.File{{Path: "files.wasm", Data: module}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"example"},"subject":[{"name":"modules/files.wasm"}]}`),
		SigningKey: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)),
		SignedAt:   time.UnixMilli(1730000000000),
	})
	if err != nil {
		panic(err)
	}
	trustAll := artifact.TrustDeciderFunc(func(context.Context, string, ed25519.PublicKey, bool) (string, error) {
		return "allowlisted", nil
	})
	vr, err := artifact.Verify(context.Background(), built.Bytes, artifact.VerifyOptions{Trust: trustAll})
	if err != nil {
		panic(err)
	}

	r, err := audit.Audit(context.Background(), audit.Input{
		Inspection:    vr.Inspection,
		TrustDecision: vr.TrustDecision,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("passed:", r.Passed)
	fmt.Println("failed:", r.FailedChecks())
	for _, reason := range r.QuarantineReasons {
		fmt.Println("-", reason)
	}
	fmt.Println(errors.Is(r.Err(), audit.ErrAuditFailed))
	// Output:
	// passed: false
	// failed: [wasm_wasi_filesystem_imports wasm_import_surface]
	// - module 'modules/files.wasm' imports WASI filesystem functions without declared filesystem capability (wasi_snapshot_preview1.path_open)
	// - module 'modules/files.wasm': import wasi_snapshot_preview1.path_open is not provided: the host gives no file access (sdk/ABI.md §2.3), and the manifest declares no filesystem capability
	// true
}
