package audit

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
)

// benchArtifactBytes is the size the benchmark artifact is padded to.
const benchArtifactBytes = 4 << 20

// goGuestArtifact returns the echo example (a ~3.7 MiB Go wasip1 module)
// packaged with an incompressible asset that brings the artifact to about
// benchArtifactBytes, and its module size.
func goGuestArtifact(b *testing.B) ([]byte, int) {
	b.Helper()
	plain, module := exampleArtifact(b, "echo")
	pad := benchArtifactBytes - len(plain.Bytes) - 512
	if pad < 0 {
		pad = 0
	}
	asset := make([]byte, pad)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(asset)
	built, _ := exampleArtifact(b, "echo", artifact.File{Path: "padding.bin", Data: asset})
	return built.Bytes, len(module)
}

// BenchmarkAuditGoGuest is the audit alone, on an inspected artifact, as
// the installer runs it after verification. Bytes/s count module bytes.
func BenchmarkAuditGoGuest(b *testing.B) {
	data, moduleBytes := goGuestArtifact(b)
	insp, err := artifact.Inspect(data)
	if err != nil {
		b.Fatal(err)
	}
	in := Input{Inspection: insp, TrustDecision: "allowlisted", Options: hermetic(Options{})}
	b.SetBytes(int64(moduleBytes))
	for b.Loop() {
		r, err := Audit(context.Background(), in)
		if err != nil || !r.Passed {
			b.Fatalf("Audit: %v %v", err, r.QuarantineReasons)
		}
	}
	b.ReportMetric(float64(moduleBytes), "module-bytes")
	b.ReportMetric(float64(len(data)), "artifact-bytes")
}

// BenchmarkInspectAndAuditGoGuest adds artifact.Inspect (ZIP decoding,
// hashing, signature) to the audit: admission minus the trust decision.
// Bytes/s count artifact bytes.
func BenchmarkInspectAndAuditGoGuest(b *testing.B) {
	data, _ := goGuestArtifact(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		insp, err := artifact.Inspect(data)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Audit(context.Background(), Input{Inspection: insp, TrustDecision: "allowlisted", Options: hermetic(Options{})})
		if err != nil || !r.Passed {
			b.Fatalf("Audit: %v", err)
		}
	}
	b.ReportMetric(float64(len(data)), "artifact-bytes")
}
