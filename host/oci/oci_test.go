package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/ociregistry"
	"github.com/palyra-go/palyra/internal/testskill"
)

var module = []byte("\x00asm\x01\x00\x00\x00")

func skill(t *testing.T, version string, key byte) []byte {
	return testskill.Build(t, testskill.OneToolManifest("acme.oci", version, ""), module, testskill.Key(key))
}

// TestPushPull pushes to a real registry (plain HTTP on loopback) and
// pulls back by tag and by digest: the same bytes, the annotations, the
// default tag being the version.
func TestPushPull(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	cfg := Config{PlainHTTP: true}
	art := skill(t, "1.0.0", 1)
	p, err := Push(ctx, cfg, "oci://"+reg.Host+"/skills/acme", art)
	if err != nil {
		t.Fatal(err)
	}
	if p.Tag != "1.0.0" || p.SkillID != "acme.oci" || !strings.HasPrefix(p.Digest, "sha256:") ||
		p.Reference != "oci://"+reg.Host+"/skills/acme:1.0.0@"+p.Digest {
		t.Fatalf("pushed %+v", p)
	}
	for _, ref := range []string{
		"oci://" + reg.Host + "/skills/acme:1.0.0",
		"oci://" + reg.Host + "/skills/acme@" + p.Digest,
		p.Reference,
	} {
		got, err := Pull(ctx, cfg, ref)
		if err != nil {
			t.Fatalf("pull %s: %v", ref, err)
		}
		if !bytes.Equal(got.Artifact, art) || got.Digest != p.Digest {
			t.Fatalf("pull %s: different bytes or digest %s", ref, got.Digest)
		}
		if got.Annotations[AnnotationID] != "acme.oci" || got.Annotations[AnnotationVersion] != "1.0.0" ||
			got.Annotations[AnnotationPublisher] != "acme" || got.Annotations[AnnotationPayload] == "" {
			t.Fatalf("annotations %v", got.Annotations)
		}
	}
	if _, err := Push(ctx, cfg, "oci://"+reg.Host+"/skills/acme:2.0.0", skill(t, "2.0.0", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, cfg, "oci://"+reg.Host+"/skills/acme:latest", skill(t, "2.0.0", 1)); err != nil {
		t.Fatal(err)
	}
	tags, err := Tags(ctx, cfg, "oci://"+reg.Host+"/skills/acme:whatever")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(tags, ",") != "1.0.0,2.0.0,latest" {
		t.Fatalf("tags %v", tags)
	}
}

// TestRefusals covers the refusals with their codes against a real registry.
func TestRefusals(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	cfg := Config{PlainHTTP: true}
	repo := "oci://" + reg.Host + "/skills/acme"
	art := skill(t, "1.0.0", 1)
	good, err := Push(ctx, cfg, repo, art)
	if err != nil {
		t.Fatal(err)
	}
	// A second manifest whose storage we corrupt. The registry keeps a
	// manifest as a blob file named by its digest and serves that file for
	// GET /v2/REPO/manifests/DIGEST, with Docker-Content-Digest set to the
	// digest asked for: a corrupted (or malicious) store answers a digest
	// request with other bytes. Pull must hash what it received.
	bad, err := Push(ctx, cfg, repo+":1.0.1", skill(t, "1.0.1", 1))
	if err != nil {
		t.Fatal(err)
	}
	path := reg.BlobPath(bad.Digest)
	mb, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(mb, []byte(`"1.0.1"`), []byte(`"9.9.9"`), 1)
	if bytes.Equal(tampered, mb) {
		t.Fatal("manifest had no version annotation to alter")
	}
	if err := os.WriteFile(path, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	// A third artifact whose layer blob is corrupted in storage (same
	// length, one byte flipped): the manifest is intact, the layer no
	// longer hashes to its descriptor.
	art3 := skill(t, "1.0.2", 1)
	if _, err := Push(ctx, cfg, repo, art3); err != nil {
		t.Fatal(err)
	}
	lpath := reg.BlobPath(digest.FromBytes(art3).String())
	lb, err := os.ReadFile(lpath)
	if err != nil {
		t.Fatal(err)
	}
	lb[len(lb)/2] ^= 0xff
	if err := os.WriteFile(lpath, lb, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		do   func(Config) error
		want error
	}{
		{"digest mismatch", cfg, func(c Config) error { _, err := Pull(ctx, c, repo+"@"+bad.Digest); return err }, ErrDigestMismatch},
		{"layer digest mismatch", cfg, func(c Config) error { _, err := Pull(ctx, c, repo+":1.0.2"); return err }, ErrDigestMismatch},
		{"unknown digest", cfg, func(c Config) error {
			_, err := Pull(ctx, c, repo+"@sha256:"+strings.Repeat("0", 64))
			return err
		}, ErrNotFound},
		{"unknown tag", cfg, func(c Config) error { _, err := Pull(ctx, c, repo+":3.0.0"); return err }, ErrNotFound},
		{"push a non-artifact", cfg, func(c Config) error { _, err := Push(ctx, c, repo, []byte("not a zip")); return err }, nil},
		{"push to a digest", cfg, func(c Config) error { _, err := Push(ctx, c, repo+"@"+good.Digest, art); return err }, ErrInvalidReference},
		{"plain http to a non-loopback host", cfg, func(c Config) error {
			_, err := Pull(ctx, c, "oci://registry.example.com/skills/acme:1.0.0")
			return err
		}, ErrPlainHTTPRefused},
		{"https to a plain registry", Config{}, func(c Config) error { _, err := Pull(ctx, c, repo+":1.0.0"); return err }, ErrRegistry},
		{"no tag nor digest", cfg, func(c Config) error { _, err := Pull(ctx, c, repo); return err }, ErrInvalidReference},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do(tc.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err %v (code %s), want %v", err, errcode.Of(err), tc.want)
			}
			if tc.want == nil && errcode.Of(err) == errcode.Internal {
				t.Fatalf("err %v has no code", err)
			}
		})
	}
	if got, err := Pull(ctx, cfg, repo+"@"+good.Digest); err != nil || !bytes.Equal(got.Artifact, art) {
		t.Fatalf("the good digest: %v", err)
	}
}

// TestAuth runs a registry with htpasswd auth and TLS: with a docker
// config file giving the account, push and pull work; anonymous, or with a
// wrong password, they fail with oci_unauthorized.
func TestAuth(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{Username: "alice", Password: "s3cret", TLS: true})
	ctx := context.Background()
	dir := t.TempDir()
	good, err := reg.WriteDockerConfig(dir, "alice", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	wrongDir := t.TempDir()
	wrong, err := reg.WriteDockerConfig(wrongDir, "alice", "nope")
	if err != nil {
		t.Fatal(err)
	}
	repo := "oci://" + reg.Host + "/skills/acme"
	art := skill(t, "1.0.0", 1)
	if _, err := Push(ctx, Config{RootCAs: reg.CAPool}, repo, art); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("anonymous push: %v, want oci_unauthorized", err)
	}
	if _, err := Push(ctx, Config{RootCAs: reg.CAPool, DockerConfig: good}, repo, art); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{{RootCAs: reg.CAPool}, {RootCAs: reg.CAPool, DockerConfig: wrong}} {
		if _, err := Pull(ctx, cfg, repo+":1.0.0"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("pull with %q: %v, want oci_unauthorized", cfg.DockerConfig, err)
		}
	}
	got, err := Pull(ctx, Config{RootCAs: reg.CAPool, DockerConfig: good}, repo+":1.0.0")
	if err != nil || !bytes.Equal(got.Artifact, art) {
		t.Fatalf("pull with credentials: %v", err)
	}
}

// TestPullRejectsNotASkill pulls a manifest whose layer is not ours.
func TestPullRejectsNotASkill(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	cfg := Config{PlainHTTP: true}
	r := Reference{Registry: reg.Host, Repository: "skills/x", Tag: "v"}
	if _, err := pushRawLayers(ctx, cfg, r); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, cfg, r.String()); !errors.Is(err, ErrNotASkill) {
		t.Fatalf("pull: %v, want oci_not_a_skill", err)
	}
}

// pushRawLayers pushes, tagged r.Tag, a manifest with two layers of another
// media type.
func pushRawLayers(ctx context.Context, cfg Config, r Reference) (string, error) {
	repo, release, err := repository(cfg, r)
	if err != nil {
		return "", err
	}
	defer release()
	var layers []ocispec.Descriptor
	for _, b := range [][]byte{[]byte("one"), []byte("two")} {
		d := ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(b), Size: int64(len(b))}
		if err := repo.Blobs().Push(ctx, d, bytes.NewReader(b)); err != nil {
			return "", err
		}
		layers = append(layers, d)
	}
	empty := ocispec.DescriptorEmptyJSON
	if err := repo.Blobs().Push(ctx, empty, bytes.NewReader(empty.Data)); err != nil {
		return "", err
	}
	empty.Data = nil
	mb, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: empty, Layers: layers})
	if err != nil {
		return "", err
	}
	md := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb))}
	return md.Digest.String(), repo.Manifests().PushReference(ctx, md, bytes.NewReader(mb), r.Tag)
}

// TestMovedTagToFlippedByte moves a tag to the artifact with one byte
// flipped, pushed without inspection as a hostile publisher could: the
// registry serves it honestly (its digests hold), and what refuses it is
// the artifact's own check, as the installer runs it.
func TestMovedTagToFlippedByte(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{})
	ctx := context.Background()
	cfg := Config{PlainHTTP: true}
	art := skill(t, "1.0.0", 1)
	good, err := Push(ctx, cfg, "oci://"+reg.Host+"/skills/acme", art)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(art)
	flipped[len(flipped)/2] ^= 0x01
	r := Reference{Registry: reg.Host, Repository: "skills/acme", Tag: "1.0.0"}
	if _, err := pushRaw(ctx, cfg, r, flipped, map[string]string{AnnotationID: "acme.oci", AnnotationVersion: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	got, err := Pull(ctx, cfg, r.String())
	if err != nil || !bytes.Equal(got.Artifact, flipped) || got.Digest == good.Digest {
		t.Fatalf("pull of the moved tag: %v", err)
	}
	if _, err := artifact.Inspect(got.Artifact); err == nil || errcode.Of(err) == errcode.Internal {
		t.Fatalf("the flipped artifact inspects: %v", err)
	}
	if got, err := Pull(ctx, cfg, "oci://"+reg.Host+"/skills/acme@"+good.Digest); err != nil || !bytes.Equal(got.Artifact, art) {
		t.Fatalf("the good digest: %v", err)
	}
}
