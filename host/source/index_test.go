package source_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/internal/wasmgen"
)

// The registries of these tests: artifacts by publisher acme signed with
// testskill.Key(1), indexes signed by publisher hub with testskill.Key(7).
var (
	artifactKey = testskill.Key(1)
	indexKey    = testskill.Key(7)
)

// skill returns a signed artifact of id at version by publisher (acme
// when "").
func skill(t testing.TB, id, version, publisher string) []byte {
	t.Helper()
	m := testskill.OneToolManifest(id, version, "")
	if publisher != "" {
		m = strings.Replace(m, `publisher = "acme"`, `publisher = "`+publisher+`"`, 1)
	}
	return testskill.Build(t, m, wasmgen.Module(wasmgen.Spec{Entrypoint: true}), artifactKey)
}

func put(t testing.TB, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// registryDir writes artifacts (path → bytes) into a new directory and
// builds its index signed by hub.
func registryDir(t testing.TB, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		put(t, dir, rel, data)
	}
	b, err := registry.Build(dir, indexKey, "hub", time.Unix(1_760_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.WriteIndex(dir, b.Bytes); err != nil {
		t.Fatal(err)
	}
	return dir
}

// storeTrust is a TrustFunc over a real trust store.
func storeTrust(s *trust.Store) source.TrustFunc {
	return func(_ context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error) {
		d, err := s.Decide(publisher, key, allowTOFU)
		return string(d), err
	}
}

// TestFetchFromRegistryDir fetches the latest and a named version from a
// local registry, lists versions, finds the latest at the recorded source,
// and refuses a version that is not published.
func TestFetchFromRegistryDir(t *testing.T) {
	dir := registryDir(t, map[string][]byte{
		"echo/1.0.0.palyra-skill":  skill(t, "acme.echo", "1.0.0", ""),
		"echo/1.2.0.palyra-skill":  skill(t, "acme.echo", "1.2.0", ""),
		"echo/1.10.0.palyra-skill": skill(t, "acme.echo", "1.10.0", ""),
	})
	f := source.New(source.Config{Trust: storeTrust(trust.NewStore())})
	ctx := context.Background()

	got, err := f.Fetch(ctx, source.Ref{RegistryDir: dir, SkillID: "acme.echo"}, true)
	if err != nil {
		t.Fatalf("Fetch latest: %v", err)
	}
	abs, _ := filepath.Abs(dir)
	if got.Version != "1.10.0" || got.Publisher != "acme" || got.Source.Kind != inventory.SourceLocalRegistry || got.Source.Ref != abs || !strings.HasPrefix(got.Digest, "sha256:") {
		t.Fatalf("Fetched = %+v", got)
	}
	got, err = f.Fetch(ctx, source.Ref{RegistryDir: dir, SkillID: "acme.echo", Version: "1.2.0"}, true)
	if err != nil || got.Version != "1.2.0" {
		t.Fatalf("Fetch 1.2.0: %+v %v", got, err)
	}
	vs, err := f.Versions(ctx, source.Ref{RegistryDir: dir, SkillID: "acme.echo"}, false)
	if err != nil || !slices.Equal(vs, []string{"1.0.0", "1.2.0", "1.10.0"}) {
		t.Fatalf("Versions = %v %v", vs, err)
	}
	v, ref, err := f.Latest(ctx, got.Source, "acme.echo", false)
	if err != nil || v != "1.10.0" || ref.RegistryDir != abs || ref.Version != "1.10.0" || ref.SkillID != "acme.echo" {
		t.Fatalf("Latest = %s %+v %v", v, ref, err)
	}
	if _, err := f.Fetch(ctx, source.Ref{RegistryDir: dir, SkillID: "acme.echo", Version: "2.0.0"}, false); !errors.Is(err, source.ErrNotPublished) || !strings.Contains(err.Error(), "2.0.0") {
		t.Fatalf("Fetch 2.0.0: %v, want %s", err, source.ErrNotPublished.Code())
	}
	if _, err := f.Fetch(ctx, source.Ref{RegistryDir: dir, SkillID: "acme.other"}, false); !errors.Is(err, source.ErrNotPublished) {
		t.Fatalf("Fetch acme.other: %v, want %s", err, source.ErrNotPublished.Code())
	}
}

// TestInstallFromRegistryDir installs through a real host from a local
// registry: the index key is judged by the host's trust store (refused
// without TOFU, pinned with it), and the inventory records the source.
func TestInstallFromRegistryDir(t *testing.T) {
	dir := registryDir(t, map[string][]byte{"echo.palyra-skill": skill(t, "acme.echo", "1.0.0", "")})
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)

	from := &host.SourceRef{RegistryDir: dir, SkillID: "acme.echo"}
	if _, err := h.Install(ctx, host.InstallRequest{From: from}); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("install without TOFU: %v, want %s", err, trust.ErrUntrustedPublisher.Code())
	}
	res, err := h.Install(ctx, host.InstallRequest{From: from, AllowTOFU: true})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	abs, _ := filepath.Abs(dir)
	if !res.Installed || res.SkillID != "acme.echo" || res.Version != "1.0.0" || res.Source.Kind != inventory.SourceLocalRegistry || res.Source.Ref != abs {
		t.Fatalf("result = %+v", res)
	}
}
