package source_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/oci"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/internal/ociregistry"
	"github.com/palyra-go/palyra/internal/testskill"
)

// echoArtifact signs the one-tool skill acme.oci at version with the echo
// test module, by testskill.Key(key).
func echoArtifact(t *testing.T, version string, key byte) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return testskill.Build(t, testskill.OneToolManifest("acme.oci", version, ""), wasm, testskill.Key(key))
}

// openHost opens a host on a fresh state directory that pulls over plain
// HTTP from loopback registries. No sidecar: nothing here calls a tool.
func openHost(t *testing.T) *host.Host {
	t.Helper()
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir(), Sources: source.Config{PlainHTTP: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return h
}

func trusted(key byte) []host.TrustedKey {
	return []host.TrustedKey{{Publisher: "acme", PublicKeyHex: hex.EncodeToString(testskill.Key(key).Public().(ed25519.PublicKey))}}
}

// TestOCIInstall pushes to a real registry process and installs through
// real hosts: by tag (the source recorded is tag@digest), by digest on
// another state directory; then the tag is moved to an artifact of the
// same skill and version signed by another key: the installer refuses it
// (the pinned publisher's key does not sign it), and the good digest still
// installs.
func TestOCIInstall(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	repo := "oci://" + reg.Host + "/skills/acme-oci"
	pcfg := oci.Config{PlainHTTP: true}
	good := echoArtifact(t, "1.0.0", 7)
	pushed, err := oci.Push(ctx, pcfg, repo, good)
	if err != nil {
		t.Fatal(err)
	}

	h := openHost(t)
	res, err := h.Install(ctx, host.InstallRequest{From: &host.SourceRef{OCI: repo + ":1.0.0"}, TrustedPublishers: trusted(7)})
	if err != nil {
		t.Fatal(err)
	}
	want := install.Source{Kind: inventory.SourceOCI, Ref: repo + ":1.0.0@" + pushed.Digest}
	if !res.Installed || res.SkillID != "acme.oci" || res.Version != "1.0.0" || res.Source != want {
		t.Fatalf("install by tag: installed %v %s %s from %+v, want from %+v", res.Installed, res.SkillID, res.Version, res.Source, want)
	}

	h2 := openHost(t)
	res, err = h2.Install(ctx, host.InstallRequest{From: &host.SourceRef{OCI: repo + "@" + pushed.Digest}, TrustedPublishers: trusted(7)})
	if err != nil || !res.Installed || res.Source.Ref != repo+"@"+pushed.Digest {
		t.Fatalf("install by digest: %+v, %v", res, err)
	}

	// The same bytes come back.
	got, err := h.Sources().Fetch(ctx, source.Ref{OCI: repo + "@" + pushed.Digest}, false)
	if err != nil || !bytes.Equal(got.Artifact, good) || got.Digest != pushed.Digest || got.Publisher != "acme" {
		t.Fatalf("fetch: %v", err)
	}

	// The tag moves to a look-alike signed by key 8.
	evil, err := oci.Push(ctx, pcfg, repo+":1.0.0", echoArtifact(t, "1.0.0", 8))
	if err != nil {
		t.Fatal(err)
	}
	if evil.Digest == pushed.Digest {
		t.Fatal("the look-alike has the same digest")
	}
	h3 := openHost(t)
	res, err = h3.Install(ctx, host.InstallRequest{From: &host.SourceRef{OCI: repo + ":1.0.0"}, TrustedPublishers: trusted(7)})
	if err == nil || (res != nil && res.Installed) {
		t.Fatalf("install of the moved tag: %+v, %v; want a refusal", res, err)
	}
	if c := errcode.Of(err); c != "trusted_publisher_key_mismatch" {
		t.Fatalf("moved tag: %v (code %s), want the installer's trusted_publisher_key_mismatch", err, c)
	}
	res, err = h3.Install(ctx, host.InstallRequest{From: &host.SourceRef{OCI: repo + "@" + pushed.Digest}, TrustedPublishers: trusted(7)})
	if err != nil || !res.Installed {
		t.Fatalf("install of the good digest after the move: %+v, %v", res, err)
	}
}

// TestOCIFetchRefusals: a version tag holding another version, a
// manifest whose annotations disagree with the artifact, plain HTTP off
// loopback, a missing tag.
func TestOCIFetchRefusals(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	repo := "oci://" + reg.Host + "/skills/acme-oci"
	if _, err := oci.Push(ctx, oci.Config{PlainHTTP: true}, repo+":2.0.0", echoArtifact(t, "1.0.0", 7)); err != nil {
		t.Fatal(err)
	}
	f := source.New(source.Config{})
	for _, tc := range []struct {
		name string
		ref  source.Ref
		want error
	}{
		{"tag names another version", source.Ref{OCI: repo + ":2.0.0", PlainHTTP: true}, source.ErrIdentityMismatch},
		{"missing tag", source.Ref{OCI: repo + ":3.0.0", PlainHTTP: true}, source.ErrNotPublished},
		{"plain http off loopback", source.Ref{OCI: "oci://registry.example.com/skills/x:1.0.0", PlainHTTP: true}, oci.ErrPlainHTTPRefused},
		{"bad reference", source.Ref{OCI: "oci://registry.example.com"}, source.ErrInvalidRef},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.Fetch(ctx, tc.ref, false)
			if !errors.Is(err, tc.want) {
				t.Fatalf("fetch: %v (code %s), want %v", err, errcode.Of(err), tc.want)
			}
		})
	}
}

// TestOCILatestAndVersions: the highest version tag wins numerically
// (1.10.0 over 1.9.0), "latest" and other tags are ignored, Versions is
// ascending, and the Ref returned fetches that version.
func TestOCILatestAndVersions(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	repo := "oci://" + reg.Host + "/skills/acme-oci"
	pcfg := oci.Config{PlainHTTP: true}
	for _, v := range []string{"1.9.0", "1.10.0", "1.2.0"} {
		if _, err := oci.Push(ctx, pcfg, repo, echoArtifact(t, v, 7)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tag := range []string{"latest", "stable", "v9.0.0"} {
		if _, err := oci.Push(ctx, pcfg, repo+":"+tag, echoArtifact(t, "1.2.0", 7)); err != nil {
			t.Fatal(err)
		}
	}
	f := source.New(source.Config{PlainHTTP: true})
	vs, err := f.Versions(ctx, source.Ref{OCI: repo + ":1.2.0"}, false)
	if err != nil || strings.Join(vs, ",") != "1.2.0,1.9.0,1.10.0" {
		t.Fatalf("versions %v, %v", vs, err)
	}
	v, ref, err := f.Latest(ctx, install.Source{Kind: inventory.SourceOCI, Ref: repo + ":1.2.0@sha256:" + strings.Repeat("a", 64)}, "acme.oci", false)
	if err != nil || v != "1.10.0" || ref.OCI != repo+":1.10.0" {
		t.Fatalf("latest %s %+v, %v", v, ref, err)
	}
	got, err := f.Fetch(ctx, ref, false)
	if err != nil || got.Version != "1.10.0" {
		t.Fatalf("fetch latest: %+v, %v", got, err)
	}
	empty := "oci://" + reg.Host + "/skills/none"
	if _, _, err := f.Latest(ctx, install.Source{Kind: inventory.SourceOCI, Ref: empty + ":1.0.0"}, "acme.oci", false); !errors.Is(err, source.ErrNotPublished) {
		t.Fatalf("latest of an empty repository: %v, want not_published", err)
	}
}
