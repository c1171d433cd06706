// Package testskill builds signed single-module .palyra-skill artifacts for
// tests across the repository, so that each test states only what matters
// to it: the manifest, the module and the signing key.
package testskill

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
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
// minimal valid SBOM and provenance (whose subject names the module with
// no digest: the audit warns that it is not compared), failing tb on any
// error.
func Build(tb testing.TB, manifest string, module []byte, key ed25519.PrivateKey) []byte {
	tb.Helper()
	return BuildWithProvenance(tb, manifest, module, key, []byte(`{"builder":{"id":"test"},"subject":[{"name":"modules/module.wasm"}]}`))
}

// Provenance returns an in-toto provenance document whose one subject,
// modules/module.wasm, carries the given sha256 digest: the module's own
// (ModuleSHA256) for a matching provenance, another for a mismatch, or a
// placeholder such as "placeholder-generated-at-build".
func Provenance(sha256Digest string) []byte {
	return []byte(`{"_type":"https://in-toto.io/Statement/v1","builder":{"id":"test"},"subject":[{"name":"modules/module.wasm","digest":{"sha256":` +
		strconv.Quote(sha256Digest) + `}}]}`)
}

// ModuleSHA256 is the hex SHA-256 of module.
func ModuleSHA256(module []byte) string {
	sum := sha256.Sum256(module)
	return hex.EncodeToString(sum[:])
}

// BuildWithProvenance is Build with the provenance document given.
func BuildWithProvenance(tb testing.TB, manifest string, module []byte, key ed25519.PrivateKey, provenance []byte) []byte {
	tb.Helper()
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   []byte(manifest),
		Modules:    []artifact.File{{Path: "module.wasm", Data: module}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: provenance,
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
