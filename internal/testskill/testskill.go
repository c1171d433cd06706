// Package testskill builds signed single-module .palyra-skill artifacts for
// tests across the repository, so that each test states only what matters
// to it: the manifest, the module and the signing key.
package testskill

import (
	"crypto/ed25519"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
)

// SignedAt is the fixed signing time of every test artifact, so the same
// inputs give the same bytes.
var SignedAt = time.Unix(1_730_000_000, 0)

// Key returns the Ed25519 key whose seed is b followed by 31 zero bytes;
// distinct b give distinct keys.
func Key(b byte) ed25519.PrivateKey {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = b
	return ed25519.NewKeyFromSeed(seed)
}

// Build signs an artifact of manifest with module as modules/module.wasm, a
// minimal valid SBOM and provenance, failing tb on any error.
func Build(tb testing.TB, manifest string, module []byte, key ed25519.PrivateKey) []byte {
	tb.Helper()
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   []byte(manifest),
		Modules:    []artifact.File{{Path: "module.wasm", Data: module}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"test"},"subject":[{"name":"modules/module.wasm"}]}`),
		SigningKey: key,
		SignedAt:   SignedAt,
	})
	if err != nil {
		tb.Fatalf("build test artifact: %v", err)
	}
	return built.Bytes
}

// OneToolManifest is the manifest of skill id at version, by publisher
// acme, whose one tool id+".t" takes and returns a JSON object, with the
// [capabilities.quotas] lines given ("" for none).
func OneToolManifest(id, version, quotas string) string {
	return `manifest_version = 2
skill_id = "` + id + `"
name = "Test"
version = "` + version + `"
publisher = "acme"

[[entrypoints.tools]]
id = "` + id + `.t"
name = "t"
description = "test"

[entrypoints.tools.input_schema]
type = "object"

[entrypoints.tools.output_schema]
type = "object"

[entrypoints.tools.risk]
default_sensitive = false
requires_approval = false

[capabilities.quotas]
` + quotas + `

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Test"
`
}

// WithHosts returns manifest (of OneToolManifest's shape) granted the HTTP
// hosts given, in a [capabilities] table before its quotas.
func WithHosts(manifest string, hosts ...string) string {
	if len(hosts) == 0 {
		return manifest
	}
	q := make([]string, len(hosts))
	for i, h := range hosts {
		q[i] = strconv.Quote(h)
	}
	return strings.Replace(manifest, "[capabilities.quotas]",
		"[capabilities]\nhttp_egress_allowlist = ["+strings.Join(q, ", ")+"]\n\n[capabilities.quotas]", 1)
}
