package artifact_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
)

const exampleManifest = `manifest_version = 2
skill_id = "acme.echo"
name = "Echo"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.echo"
name = "echo"
description = "Echo payload"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Echo"
`

func exampleInput() artifact.BuildInput {
	key, err := artifact.ParseSigningKey([]byte("0101010101010101010101010101010101010101010101010101010101010101"))
	if err != nil {
		panic(err)
	}
	return artifact.BuildInput{
		Manifest:   []byte(exampleManifest),
		Modules:    []artifact.File{{Path: artifact.CLIPath("/src/echo/module.wasm"), Data: []byte("\x00asm\x01\x00\x00\x00")}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"example"},"subject":[{"name":"modules/module.wasm"}]}`),
		SigningKey: key,
		SignedAt:   time.UnixMilli(1730000000000),
	}
}

func ExampleBuild() {
	built, err := artifact.Build(exampleInput())
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := artifact.Build(exampleInput())
	fmt.Println("key_id:", built.Signature.KeyID)
	fmt.Println("reproducible:", bytes.Equal(built.Bytes, again.Bytes))
	fmt.Println("integrity entries:", len(built.Manifest.Integrity.Files))
	// Output:
	// key_id: ed25519:34750f98bd59fcfc
	// reproducible: true
	// integrity entries: 3
}

func ExampleVerify() {
	built, err := artifact.Build(exampleInput())
	if err != nil {
		fmt.Println(err)
		return
	}
	// In production the trust store (host/trust) decides; this one pins
	// any key on first use.
	pinned := map[string]string{}
	trust := artifact.TrustDeciderFunc(func(_ context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
		if k, ok := pinned[publisher]; ok {
			if k != string(key) {
				return "", fmt.Errorf("key of %s changed", publisher)
			}
			return "tofu_pinned", nil
		}
		if !allowTOFU {
			return "", fmt.Errorf("untrusted publisher %s", publisher)
		}
		pinned[publisher] = string(key)
		return "tofu_newly_pinned", nil
	})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		report, err := artifact.Verify(ctx, built.Bytes, artifact.VerifyOptions{Trust: trust, AllowTOFU: i == 0})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(report.Accepted, report.TrustDecision, report.AuditEvent.EventKind, report.AuditEvent.SkillID)
	}
	// Output:
	// true tofu_newly_pinned skill.artifact.verified acme.echo
	// true tofu_pinned skill.artifact.verified acme.echo
}

// Build writes the SBOM and provenance itself when they are not given.
func ExampleGenerate() {
	in := exampleInput()
	in.SBOM, in.Provenance = nil, nil
	buildTime := time.Date(2026, 11, 27, 6, 30, 0, 0, time.UTC)
	in.Generate = &artifact.Generate{BuilderVersion: "v1.0.0", Now: func() time.Time { return buildTime }}
	built, err := artifact.Build(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("generated:", built.Generated)
	var prov struct {
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(built.Entries[artifact.ProvenancePath], &prov); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(prov.PredicateType, prov.Subject[0].Name, prov.Subject[0].Digest["sha256"][:12])
	// Output:
	// generated: [sbom.cdx.json provenance.json]
	// https://slsa.dev/provenance/v1 modules/module.wasm 93a44bbb96c7
}
