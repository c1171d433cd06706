package oci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	orascode "oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/palyra-go/palyra/host/artifact"
)

// Media types and annotations of a skill in an OCI registry.
const (
	ArtifactType        = "application/vnd.palyra.skill.v1"
	LayerMediaType      = "application/vnd.palyra.skill.artifact.v1+zip"
	AnnotationID        = "dev.palyra.skill.id"
	AnnotationVersion   = "dev.palyra.skill.version"
	AnnotationPublisher = "dev.palyra.skill.publisher"
	AnnotationPayload   = "dev.palyra.skill.payload_sha256"
)

// MaxManifestBytes bounds a pulled manifest.
const MaxManifestBytes = 4 << 20

// maxTagPages bounds a tag listing's pagination.
const maxTagPages = 100

// Config configures registry access. Library code reads no environment:
// the command resolves the docker config path.
type Config struct {
	// DockerConfig is a docker config.json with credentials; "" means
	// anonymous.
	DockerConfig string
	// PlainHTTP speaks HTTP instead of HTTPS; refused unless the registry
	// is on loopback.
	PlainHTTP bool
	// RootCAs are trusted for registry TLS; nil means the system pool.
	RootCAs *x509.CertPool
	// Timeout bounds each operation; zero means 20 s.
	Timeout time.Duration
}

// Pulled is an artifact pulled from a registry.
type Pulled struct {
	// Artifact is the layer's bytes: the .palyra-skill file.
	Artifact []byte
	// Digest is the manifest digest (sha256:HEX).
	Digest string
	// Annotations are the manifest's annotations.
	Annotations map[string]string
}

// Pushed describes a push.
type Pushed struct {
	// Reference is oci://REGISTRY/REPOSITORY:TAG@sha256:DIGEST.
	Reference string
	// Tag and Digest are the tag pushed and the manifest digest.
	Tag, Digest string
	// SkillID and Version are the artifact's.
	SkillID, Version string
}

// repository returns a repository client for ref and a function that
// releases its idle connections.
func repository(cfg Config, ref Reference) (*remote.Repository, func(), error) {
	if cfg.PlainHTTP && !IsLoopback(ref.Registry) {
		return nil, nil, fmt.Errorf("oci: %w: %s is not a loopback address (127.0.0.0/8, ::1, localhost)", ErrPlainHTTPRefused, ref.Registry)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
	client := &auth.Client{
		Client: &http.Client{Transport: tr},
		Header: http.Header{"User-Agent": {"palyra-go"}},
		Cache:  auth.NewCache(),
	}
	if cfg.DockerConfig != "" {
		store, err := credentials.NewStore(cfg.DockerConfig, credentials.StoreOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("oci: docker config %s: %w", cfg.DockerConfig, err)
		}
		client.Credential = credentials.Credential(store)
	}
	repo, err := remote.NewRepository(ref.Repo())
	if err != nil {
		return nil, nil, fmt.Errorf("oci: %w %s: %v", ErrInvalidReference, ref.Repo(), err)
	}
	repo.Client = client
	repo.PlainHTTP = cfg.PlainHTTP
	repo.TagListMaxPages = maxTagPages
	return repo, tr.CloseIdleConnections, nil
}

func withTimeout(ctx context.Context, cfg Config) (context.Context, context.CancelFunc) {
	d := cfg.Timeout
	if d <= 0 {
		d = 20 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

// classify wraps a registry error with this package's sentinel for it.
func classify(op string, ref Reference, err error) error {
	var resp *orascode.ErrorResponse
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return fmt.Errorf("oci: %s %s: %w: %v", op, ref, ErrNotFound, err)
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("oci: %s %s: %w: the registry asks for credentials and the docker config file gives none for %s", op, ref, ErrUnauthorized, ref.Registry)
	case errors.As(err, &resp) && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return fmt.Errorf("oci: %s %s: %w (HTTP %d; credentials come from the docker config file): %v", op, ref, ErrUnauthorized, resp.StatusCode, err)
	case errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("oci: %s %s: %w: %v", op, ref, ErrNotFound, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("oci: %s %s: %w", op, ref, err)
	default:
		return fmt.Errorf("oci: %s %s: %w: %v", op, ref, ErrRegistry, err)
	}
}

// Push pushes the artifact in data to ref (oci://REGISTRY/REPOSITORY[:TAG];
// the tag defaults to the skill's version). The artifact is inspected
// first: a file that is not a valid signed artifact is refused.
func Push(ctx context.Context, cfg Config, ref string, data []byte) (*Pushed, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return nil, err
	}
	if r.Digest != "" {
		return nil, fmt.Errorf("oci: %w %q: push to a tag, not a digest", ErrInvalidReference, ref)
	}
	insp, err := artifact.Inspect(data)
	if err != nil {
		return nil, fmt.Errorf("oci: push: not a valid skill artifact: %w", err)
	}
	m := insp.Manifest
	if r.Tag == "" {
		r.Tag = m.Version
		if err := (Reference{Registry: r.Registry, Repository: r.Repository, Tag: r.Tag}).validTag(); err != nil {
			return nil, err
		}
	}
	ann := map[string]string{
		AnnotationID:            m.SkillID,
		AnnotationVersion:       m.Version,
		AnnotationPublisher:     m.Publisher,
		AnnotationPayload:       insp.PayloadSHA256,
		ocispec.AnnotationTitle: path.Base(m.SkillID + "-" + m.Version + ".palyra-skill"),
		// The signing time, not the push time: the same file always
		// gives the same manifest, so the same digest.
		ocispec.AnnotationCreated: time.UnixMilli(insp.Signature.SignedAtUnixMS).UTC().Format(time.RFC3339),
	}
	d, err := pushRaw(ctx, cfg, r, data, ann)
	if err != nil {
		return nil, err
	}
	r.Digest = d
	return &Pushed{Reference: r.String(), Tag: r.Tag, Digest: d, SkillID: m.SkillID, Version: m.Version}, nil
}

func (r Reference) validTag() error {
	_, err := ParseReference(r.String())
	return err
}

// pushRaw pushes data as the layer of a skill manifest with ann, tagged
// r.Tag, without inspecting it (the tests push tampered artifacts with it).
func pushRaw(ctx context.Context, cfg Config, r Reference, data []byte, ann map[string]string) (string, error) {
	ctx, cancel := withTimeout(ctx, cfg)
	defer cancel()
	repo, release, err := repository(cfg, r)
	if err != nil {
		return "", err
	}
	defer release()
	empty := ocispec.DescriptorEmptyJSON
	layer := ocispec.Descriptor{MediaType: LayerMediaType, Digest: digest.FromBytes(data), Size: int64(len(data)),
		Annotations: map[string]string{ocispec.AnnotationTitle: ann[ocispec.AnnotationTitle]}}
	for _, b := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{empty, empty.Data}, {layer, data}} {
		if ok, err := repo.Blobs().Exists(ctx, b.desc); err != nil {
			return "", classify("push", r, err)
		} else if ok {
			continue
		}
		if err := repo.Blobs().Push(ctx, b.desc, bytes.NewReader(b.data)); err != nil {
			return "", classify("push", r, err)
		}
	}
	empty.Data = nil
	man := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       empty,
		Layers:       []ocispec.Descriptor{layer},
		Annotations:  ann,
	}
	mb, err := json.Marshal(man)
	if err != nil {
		return "", err
	}
	mdesc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb)), ArtifactType: ArtifactType}
	if err := repo.Manifests().PushReference(ctx, mdesc, bytes.NewReader(mb), r.Tag); err != nil {
		return "", classify("push", r, err)
	}
	return mdesc.Digest.String(), nil
}

// Pull pulls the skill ref names (by digest when it has one, else by tag)
// and checks it: the manifest within MaxManifestBytes and hashing to the
// digest asked for, exactly one layer of LayerMediaType within
// artifact.MaxArtifactBytes whose bytes hash to its descriptor's digest.
// The artifact's signature is not checked here (the installer does).
func Pull(ctx context.Context, cfg Config, ref string) (*Pulled, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return nil, err
	}
	if r.target() == "" {
		return nil, fmt.Errorf("oci: %w %q: name a tag or a digest", ErrInvalidReference, ref)
	}
	ctx, cancel := withTimeout(ctx, cfg)
	defer cancel()
	repo, release, err := repository(cfg, r)
	if err != nil {
		return nil, err
	}
	defer release()
	desc, rc, err := repo.Manifests().FetchReference(ctx, r.target())
	if err != nil {
		return nil, classify("pull", r, err)
	}
	mb, err := io.ReadAll(io.LimitReader(rc, MaxManifestBytes+1))
	rc.Close()
	if err != nil {
		return nil, classify("pull", r, err)
	}
	if len(mb) > MaxManifestBytes {
		return nil, fmt.Errorf("oci: pull %s: %w: limit %d bytes, got more", r, ErrManifestTooLarge, MaxManifestBytes)
	}
	got := "sha256:" + hexSum(mb)
	// The registry's word (its Docker-Content-Digest header) is not taken:
	// the digest is computed on the bytes received.
	if r.Digest != "" && got != r.Digest {
		return nil, fmt.Errorf("oci: pull %s: %w: the manifest received hashes to %s", r, ErrDigestMismatch, got)
	}
	if desc.Digest.String() != got && r.Digest == "" {
		return nil, fmt.Errorf("oci: pull %s: %w: the registry named the manifest %s, its bytes hash to %s", r, ErrDigestMismatch, desc.Digest, got)
	}
	var man ocispec.Manifest
	if err := json.Unmarshal(mb, &man); err != nil {
		return nil, fmt.Errorf("oci: pull %s: %w: manifest is not JSON: %v", r, ErrNotASkill, err)
	}
	if man.MediaType != "" && man.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("oci: pull %s: %w: media type %q, want %q", r, ErrNotASkill, man.MediaType, ocispec.MediaTypeImageManifest)
	}
	if len(man.Layers) != 1 || man.Layers[0].MediaType != LayerMediaType {
		return nil, fmt.Errorf("oci: pull %s: %w: want exactly one layer of %s, got %d layer(s)", r, ErrNotASkill, LayerMediaType, len(man.Layers))
	}
	layer := man.Layers[0]
	if layer.Size < 0 || layer.Size > artifact.MaxArtifactBytes {
		return nil, fmt.Errorf("oci: pull %s: %w: limit %d bytes, layer is %d", r, ErrLayerTooLarge, artifact.MaxArtifactBytes, layer.Size)
	}
	if layer.Digest.Algorithm() != digest.SHA256 || layer.Digest.Validate() != nil {
		return nil, fmt.Errorf("oci: pull %s: %w: layer digest %q is not sha256", r, ErrNotASkill, layer.Digest)
	}
	lrc, err := repo.Blobs().Fetch(ctx, layer)
	if err != nil {
		return nil, classify("pull", r, err)
	}
	data, err := io.ReadAll(io.LimitReader(lrc, layer.Size+1))
	lrc.Close()
	if err != nil {
		return nil, classify("pull", r, err)
	}
	if int64(len(data)) != layer.Size {
		return nil, fmt.Errorf("oci: pull %s: %w: layer is %d bytes, its descriptor says %d", r, ErrDigestMismatch, len(data), layer.Size)
	}
	if lg := "sha256:" + hexSum(data); lg != layer.Digest.String() {
		return nil, fmt.Errorf("oci: pull %s: %w: layer hashes to %s, its descriptor says %s", r, ErrDigestMismatch, lg, layer.Digest)
	}
	return &Pulled{Artifact: data, Digest: got, Annotations: man.Annotations}, nil
}

// Tags lists the tags of repo (oci://REGISTRY/REPOSITORY; a tag or digest
// is ignored), sorted.
func Tags(ctx context.Context, cfg Config, repo string) ([]string, error) {
	r, err := ParseReference(repo)
	if err != nil {
		return nil, err
	}
	r.Tag, r.Digest = "", ""
	ctx, cancel := withTimeout(ctx, cfg)
	defer cancel()
	rp, release, err := repository(cfg, r)
	if err != nil {
		return nil, err
	}
	defer release()
	var tags []string
	if err := rp.Tags(ctx, "", func(t []string) error { tags = append(tags, t...); return nil }); err != nil {
		return nil, classify("list tags of", r, err)
	}
	sort.Strings(tags)
	return tags, nil
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
