package install

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// echoArtifact signs the echo example (a Go guest of about 3.7 MB) with
// testKey, publisher "palyra".
func echoArtifact(tb testing.TB) []byte {
	tb.Helper()
	wasm := examplebuild.MustBuild(tb, "echo")
	dir := examplebuild.MustDir(tb, "echo")
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   read(filepath.Join(dir, "skill.toml")),
		Modules:    []artifact.File{{Path: "echo.wasm", Data: read(wasm)}},
		SBOM:       read(filepath.Join(dir, "sbom.cdx.json")),
		Provenance: read(filepath.Join(dir, "provenance.json")),
		SigningKey: testKey,
		SignedAt:   signedAt,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return built.Bytes
}

var trustPalyra = []TrustedKey{{Publisher: "palyra", PublicKeyHex: testPubHex}}

// BenchmarkInstall4MiB measures one whole install of the echo example
// (a 1.05 MB artifact holding a 3.74 MB module, about 4 MiB of payload): verify, audit, policy,
// stage with fsyncs, rename, commit, and the reads around them. Between
// iterations the version is removed, outside the timer.
func BenchmarkInstall4MiB(b *testing.B) {
	data := echoArtifact(b)
	ctx := context.Background()
	in := open(b, b.TempDir(), nil)
	if _, err := in.Install(ctx, data, InstallOptions{TrustedPublishers: trustPalyra}); err != nil {
		b.Fatal(err)
	}
	ins, _ := artifact.Inspect(data)
	for b.Loop() {
		b.StopTimer()
		if _, err := in.Remove(ctx, "palyra.echo", "", ""); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := in.Install(ctx, data, InstallOptions{})
		if err != nil || res.Status != "active" {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(len(data)), "artifact-bytes")
	b.ReportMetric(float64(len(ins.Entries["modules/echo.wasm"])), "module-bytes")
}

// BenchmarkAudit4MiB measures the static audit alone on the echo example's
// inspected artifact.
func BenchmarkAudit4MiB(b *testing.B) {
	ins, err := artifact.Inspect(echoArtifact(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		rep, err := audit.Audit(ctx, audit.Input{Inspection: ins, TrustDecision: "allowlisted"})
		if err != nil || !rep.Passed {
			b.Fatal(rep, err)
		}
	}
}

// BenchmarkVerify4MiB measures reading and verifying the echo example
// (ZIP decode, payload hash, signature, trust), the step before the audit.
func BenchmarkVerify4MiB(b *testing.B) {
	data := echoArtifact(b)
	ctx := context.Background()
	in := open(b, b.TempDir(), nil)
	if err := in.addTrusted(ctx, trustPalyra); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := in.verifyBytes(ctx, data, in.trust.Decider(), false); err != nil {
			b.Fatal(err)
		}
	}
}
