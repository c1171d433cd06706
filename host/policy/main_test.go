package policy

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/host/manifest"
)

// TestMain fails the run when a goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	exampleProfilePath = "../../testdata/policy/example.toml"
	echoManifestPath   = "../../testdata/vectors/palyra-echo-http-example/skill.toml"
)

// echoManifest parses a fresh copy of Palyra's echo-http example manifest.
func echoManifest(t testing.TB) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(echoManifestPath))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		t.Fatalf("manifest.Parse: %v", err)
	}
	return m
}

// withCaps returns the echo manifest with its capabilities replaced by c
// (quotas kept unless c sets them).
func withCaps(t testing.TB, c manifest.Capabilities) *manifest.Manifest {
	t.Helper()
	m := echoManifest(t)
	q := m.Capabilities.Quotas
	m.Capabilities = c
	if c.Quotas == (manifest.Quotas{}) {
		m.Capabilities.Quotas = q
	}
	return m
}

// profileWith returns the default profile changed by f.
func profileWith(f func(p *Profile)) *Profile {
	p := Default()
	f(p)
	return p
}

func evaluate(t testing.TB, p *Profile, m *manifest.Manifest) *Decision {
	t.Helper()
	d, err := p.Evaluate(m)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return d
}
