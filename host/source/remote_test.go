package source_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/internal/testtls"
)

// signedIndex is an index page of entries signed by hub with key.
func signedIndex(t testing.TB, key []byte, entries ...registry.Entry) []byte {
	t.Helper()
	idx := registry.Index{SchemaVersion: 1, GeneratedAtUnixMS: 1, Entries: entries}
	doc := &registry.Document{SchemaVersion: 1, Index: idx, Signature: registry.Sign(&idx, key, "hub", time.Unix(1, 0))}
	b, err := registry.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func entry(id, version, publisher, path string, data []byte) registry.Entry {
	sum := sha256.Sum256(data)
	return registry.Entry{SkillID: id, Version: version, Publisher: publisher, Artifact: path, ArtifactSHA256: hex.EncodeToString(sum[:])}
}

// serve serves files over HTTPS with its own CA.
func serve(t *testing.T, files map[string][]byte) (url string, ca *testtls.CA) {
	srv, ca := testtls.Serve(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	return srv.URL, ca
}

// TestInstallFromServedIndex: build → serve over local TLS → install
// through a real host, the CA given as the Ref's PEM; the registry key is
// refused until pinned with allow-tofu, then an index signed by another
// key for the same publisher is refused (pinned to the first).
func TestInstallFromServedIndex(t *testing.T) {
	dir := registryDir(t, map[string][]byte{
		"echo-1.0.0.palyra-skill": skill(t, "acme.echo", "1.0.0", ""),
		"echo-1.1.0.palyra-skill": skill(t, "acme.echo", "1.1.0", ""),
	})
	srv, ca := testtls.Serve(t, nil, http.FileServer(http.Dir(dir)))
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	from := &host.SourceRef{RegistryURL: srv.URL + "/index.json", SkillID: "acme.echo", Version: "1.0.0", RegistryCACert: string(ca.PEM)}

	if _, err := h.Install(ctx, host.InstallRequest{From: from}); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("install without TOFU: %v, want %s", err, trust.ErrUntrustedPublisher.Code())
	}
	res, err := h.Install(ctx, host.InstallRequest{From: from, AllowTOFU: true})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if !res.Installed || res.Version != "1.0.0" || res.Source.Kind != inventory.SourceRemoteRegistry || res.Source.Ref != srv.URL+"/index.json" {
		t.Fatalf("result = %+v", res)
	}
	// The host's fetcher finds 1.1.0 at the recorded source (the CA
	// through the fetcher's roots this time).
	f := source.New(source.Config{RootCAs: ca.Pool(), Trust: storeTrust(trust.NewStore())})
	if v, _, err := f.Latest(ctx, res.Source, "acme.echo", true); err != nil || v != "1.1.0" {
		t.Fatalf("Latest = %s %v", v, err)
	}

	// Another key for hub: refused, hub is pinned to indexKey.
	art := skill(t, "acme.echo", "1.2.0", "")
	url2, ca2 := serve(t, map[string][]byte{
		"/index.json": signedIndex(t, testskill.Key(8), entry("acme.echo", "1.2.0", "acme", "a", art)),
		"/a":          art,
	})
	from2 := &host.SourceRef{RegistryURL: url2 + "/index.json", SkillID: "acme.echo", RegistryCACert: string(ca2.PEM)}
	if _, err := h.Install(ctx, host.InstallRequest{From: from2, AllowTOFU: true}); !errors.Is(err, trust.ErrTOFUKeyMismatch) {
		t.Fatalf("install from another key: %v, want %s", err, trust.ErrTOFUKeyMismatch.Code())
	}
}

// TestFetchChecksTheEntry: the download's sha256 must be the entry's, and
// the manifest's skill id, version and publisher must be the entry's.
func TestFetchChecksTheEntry(t *testing.T) {
	ctx := context.Background()
	echo := skill(t, "acme.echo", "1.0.0", "")
	other := skill(t, "other.echo", "1.0.0", "other")
	cases := []struct {
		name  string
		entry registry.Entry
		body  []byte
		want  error
	}{
		{"sha mismatch", entry("acme.echo", "1.0.0", "acme", "/a", echo), append(append([]byte{}, echo...), 1), registry.ErrSHA256Mismatch},
		{"skill id mismatch", entry("acme.other", "1.0.0", "acme", "/a", echo), echo, source.ErrIdentityMismatch},
		{"version mismatch", entry("acme.echo", "1.0.1", "acme", "/a", echo), echo, source.ErrIdentityMismatch},
		{"publisher mismatch", entry("other.echo", "1.0.0", "acme", "/a", other), other, source.ErrIdentityMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, ca := serve(t, map[string][]byte{"/index.json": signedIndex(t, indexKey, c.entry), "/a": c.body})
			f := source.New(source.Config{RootCAs: ca.Pool(), Trust: storeTrust(trust.NewStore())})
			_, err := f.Fetch(ctx, source.Ref{RegistryURL: url + "/index.json", SkillID: c.entry.SkillID}, true)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	t.Run("CA certificate without PEM", func(t *testing.T) {
		f := source.New(source.Config{Trust: storeTrust(trust.NewStore())})
		_, err := f.Fetch(ctx, source.Ref{RegistryURL: "https://127.0.0.1:1/index.json", SkillID: "acme.echo", RegistryCACert: "not PEM"}, true)
		if !errors.Is(err, source.ErrInvalidRef) {
			t.Fatalf("err = %v, want %s", err, source.ErrInvalidRef.Code())
		}
	})
	t.Run("no trust callback", func(t *testing.T) {
		f := source.New(source.Config{})
		if _, err := f.Fetch(ctx, source.Ref{RegistryDir: t.TempDir(), SkillID: "acme.echo"}, true); !errors.Is(err, registry.ErrTrustRequired) {
			t.Fatalf("err = %v", err)
		}
	})
}
