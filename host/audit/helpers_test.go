package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/host/artifact"
)

// TestMain fails the run when a goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixtureDir holds the hand-written WAT fixtures and their binaries.
const fixtureDir = "../../testdata/audit"

// sampleManifest is Palyra's sample v2 manifest from its skills tests: two
// tools, a read root and a write root, one http host, one scoped secret,
// quotas of 2000 ms, 5e6 fuel and 32 MiB, and operator metadata naming
// modules/module.wasm and the run entrypoint. It has no manifest warning.
const sampleManifest = `manifest_version = 2
skill_id = "acme.echo_http"
name = "Echo + HTTP"
version = "1.0.0"
publisher = "acme"

[entrypoints]
[[entrypoints.tools]]
id = "acme.echo"
name = "echo"
description = "Echo payload"
input_schema = { type = "object", properties = { text = { type = "string" } } }
output_schema = { type = "object", properties = { echo = { type = "string" } } }
risk = { default_sensitive = false, requires_approval = false }

[[entrypoints.tools]]
id = "acme.http_get"
name = "http_get"
description = "Fetch one URL"
input_schema = { type = "object", properties = { url = { type = "string" } } }
output_schema = { type = "object", properties = { status = { type = "number" } } }
risk = { default_sensitive = true, requires_approval = true }

[capabilities.filesystem]
read_roots = ["skills/data"]
write_roots = ["skills/cache"]

[capabilities]
http_egress_allowlist = ["api.example.com"]
device_capabilities = []
node_capabilities = []

[[capabilities.secrets]]
scope = "skill:acme.echo_http"
key_names = ["api_token"]

[capabilities.quotas]
wall_clock_timeout_ms = 2000
fuel_budget = 5000000
max_memory_bytes = 33554432

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Echo HTTP"
summary = "Echoes a payload and can call one external API."
description = "Operator-facing sample skill used by regression tests."
categories = ["messaging", "network"]
tags = ["sample", "echo"]
docs_url = "https://example.com/skills/echo-http"

[operator.plugin]
default_tool_id = "acme.echo"
default_module_path = "modules/module.wasm"
default_entrypoint = "run"

[operator.config]
schema_version = 1
required = ["api_base_url", "api_token"]

[operator.config.properties.api_base_url]
type = "string"
title = "API base URL"
description = "Outbound endpoint"
default = "https://api.example.com"

[operator.config.properties.api_token]
type = "string"
title = "API token"
description = "Credential used by the sample skill"
redacted = true
`

// bareManifest declares no capability at all and keeps every quota at its
// default (64 MiB of memory); it has operator metadata, so no warning.
const bareManifest = `manifest_version = 2
skill_id = "acme.bare"
name = "Bare"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.bare"
name = "bare"
description = "Does nothing"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"

[operator]
display_name = "Bare"
`

var (
	sampleSBOM = []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`)
	sampleProv = []byte(`{"builder":{"id":"palyra-ci"},"subject":[{"name":"module.wasm"}]}`)
	signedAt   = time.UnixMilli(1730000000000)
	auditedAt  = time.UnixMilli(1740000000000)
	// testKey is Palyra's skills test key: the seed of 32 bytes 0x05.
	testKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x05}, ed25519.SeedSize))
)

// fixture returns the binary of testdata/audit/<name>.wasm.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replace returns s with the first old replaced by new, failing t when s
// has no old (so a test never audits an unchanged manifest by mistake).
func replace(t testing.TB, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("manifest does not contain %q", old)
	}
	return strings.Replace(s, old, new, 1)
}

// verified builds and signs an artifact in code, then inspects and
// verifies it (trust: TOFU, newly pinned), as the installer does before it
// audits. modules maps paths under modules/ to their bytes. Its provenance
// names every module with its real SHA-256, as a builder's does
// (realProv); verifiedProv takes another.
func verified(t testing.TB, manifestTOML string, modules map[string][]byte, assets ...artifact.File) *artifact.VerifyReport {
	t.Helper()
	return verifiedProv(t, manifestTOML, modules, realProv(t, modules), assets...)
}

// realProv is an in-toto statement whose subjects are modules/<p> with
// the SHA-256 of each module.
func realProv(t testing.TB, modules map[string][]byte) []byte {
	t.Helper()
	type subject struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	}
	doc := struct {
		Type    string            `json:"_type"`
		Builder map[string]string `json:"builder"`
		Subject []subject         `json:"subject"`
	}{Type: "https://in-toto.io/Statement/v1", Builder: map[string]string{"id": "palyra-ci"}}
	for _, p := range slices.Sorted(maps.Keys(modules)) {
		sum := sha256.Sum256(modules[p])
		doc.Subject = append(doc.Subject, subject{Name: "modules/" + p, Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}})
	}
	if len(doc.Subject) == 0 {
		return sampleProv
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// verifiedProv is verified with the provenance document prov.
func verifiedProv(t testing.TB, manifestTOML string, modules map[string][]byte, prov []byte, assets ...artifact.File) *artifact.VerifyReport {
	t.Helper()
	return verifiedWith(t, manifestTOML, modules, sampleSBOM, prov, assets...)
}

// verifiedWith is verifiedProv with the SBOM given too.
func verifiedWith(t testing.TB, manifestTOML string, modules map[string][]byte, sbom, prov []byte, assets ...artifact.File) *artifact.VerifyReport {
	t.Helper()
	in := artifact.BuildInput{
		Manifest:   []byte(manifestTOML),
		Assets:     assets,
		SBOM:       sbom,
		Provenance: prov,
		SigningKey: testKey,
		SignedAt:   signedAt,
	}
	for p, b := range modules {
		in.Modules = append(in.Modules, artifact.File{Path: p, Data: b})
	}
	built, err := artifact.Build(in)
	if err != nil {
		t.Fatalf("artifact.Build: %v", err)
	}
	insp, err := artifact.Inspect(built.Bytes)
	if err != nil {
		t.Fatalf("artifact.Inspect: %v", err)
	}
	vr, err := insp.Verify(context.Background(), artifact.VerifyOptions{
		Trust: artifact.TrustDeciderFunc(func(context.Context, string, ed25519.PublicKey, bool) (string, error) {
			return "tofu_newly_pinned", nil
		}),
		AllowTOFU: true,
		Now:       func() time.Time { return signedAt },
	})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return vr
}

// hermetic returns opts with a fixed clock unless it is set.
func hermetic(opts Options) Options {
	if opts.Now == nil {
		opts.Now = func() time.Time { return auditedAt }
	}
	return opts
}

// run audits vr under in's profile and options (made hermetic).
func run(t testing.TB, vr *artifact.VerifyReport, in Input) *Report {
	t.Helper()
	in.Inspection = vr.Inspection
	in.TrustDecision = vr.TrustDecision
	in.Options = hermetic(in.Options)
	r, err := Audit(context.Background(), in)
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	checkInvariants(t, r)
	return r
}

// auditModule audits one module, stored as modules/module.wasm, under the
// given manifest and default policy.
func auditModule(t testing.TB, manifestTOML string, module []byte) *Report {
	t.Helper()
	return run(t, verified(t, manifestTOML, map[string][]byte{"module.wasm": module}), Input{})
}

// checkInvariants checks what holds for every report.
func checkInvariants(t testing.TB, r *Report) {
	t.Helper()
	var reasons []string
	for _, c := range r.Checks {
		switch c.Status {
		case StatusPass, StatusSkipped:
			if c.Severity != SeverityInfo {
				t.Errorf("check %s: status %s with severity %s", c.CheckID, c.Status, c.Severity)
			}
		case StatusWarn:
			if c.Severity != SeverityWarning {
				t.Errorf("check %s: status warn with severity %s", c.CheckID, c.Severity)
			}
		case StatusFail:
			if c.Severity != SeverityError {
				t.Errorf("check %s: status fail with severity %s", c.CheckID, c.Severity)
			}
			reasons = append(reasons, c.Message)
		default:
			t.Errorf("check %s: unknown status %q", c.CheckID, c.Status)
		}
		if c.CheckID == "" || c.Message == "" {
			t.Errorf("check %+v: empty id or message", c)
		}
	}
	if r.Passed != (len(reasons) == 0) || r.ShouldQuarantine == r.Passed {
		t.Errorf("passed=%v should_quarantine=%v with %d failed checks", r.Passed, r.ShouldQuarantine, len(reasons))
	}
	if strings.Join(reasons, "\n") != strings.Join(r.QuarantineReasons, "\n") {
		t.Errorf("quarantine_reasons %q, want the failed checks' messages %q", r.QuarantineReasons, reasons)
	}
	if (r.Err() == nil) != r.Passed {
		t.Errorf("Err() = %v with passed=%v", r.Err(), r.Passed)
	}
	if len(r.Checks) == 0 || r.Checks[len(r.Checks)-1].CheckID != "vulnerability_feed_hook" {
		t.Errorf("the last check is not vulnerability_feed_hook")
	}
}

// moduleCheck returns the check id of module p (details.module_path).
func moduleCheck(t testing.TB, r *Report, id, p string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.CheckID == id && c.Details["module_path"] == p {
			return c
		}
	}
	t.Fatalf("no check %s for module %s in %v", id, p, ids(r))
	return Check{}
}

// mustCheck returns the first check with the given id.
func mustCheck(t testing.TB, r *Report, id string) Check {
	t.Helper()
	c, ok := r.Check(id)
	if !ok {
		t.Fatalf("no check %s in %v", id, ids(r))
	}
	return c
}

func ids(r *Report) []string {
	out := make([]string, len(r.Checks))
	for i, c := range r.Checks {
		out[i] = c.CheckID + "=" + string(c.Status)
	}
	return out
}

// wantStatus fails t unless check c has status s and, for every sub, a
// message containing it.
func wantStatus(t testing.TB, c Check, s Status, subs ...string) {
	t.Helper()
	if c.Status != s {
		t.Errorf("check %s: status %s, want %s (message %q)", c.CheckID, c.Status, s, c.Message)
	}
	for _, sub := range subs {
		if !strings.Contains(c.Message, sub) {
			t.Errorf("check %s: message %q does not contain %q", c.CheckID, c.Message, sub)
		}
	}
}
