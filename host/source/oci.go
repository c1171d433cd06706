package source

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/oci"
)

// ociConfig is the oci package's configuration for this Fetcher, plain
// HTTP when the Fetcher or the ref asks (oci refuses it off loopback).
func (f *Fetcher) ociConfig(plainHTTP bool) oci.Config {
	return oci.Config{
		DockerConfig: f.cfg.DockerConfig,
		PlainHTTP:    f.cfg.PlainHTTP || plainHTTP,
		RootCAs:      f.cfg.RootCAs,
		Timeout:      f.cfg.Timeout,
	}
}

// fetchOCI pulls the artifact ref.OCI names, inspects it and checks that
// the manifest's annotations (and a version-shaped tag) agree with the
// skill.toml inside: they are informative, but a disagreement means a
// mislabelled push (ErrIdentityMismatch). The signature is the
// installer's to judge.
func (f *Fetcher) fetchOCI(ctx context.Context, ref Ref) (*Fetched, error) {
	r, err := oci.ParseReference(ref.OCI)
	if err != nil {
		return nil, fmt.Errorf("source: %w: %w", ErrInvalidRef, err)
	}
	p, err := oci.Pull(ctx, f.ociConfig(ref.PlainHTTP), ref.OCI)
	if err != nil {
		if errors.Is(err, oci.ErrNotFound) {
			return nil, fmt.Errorf("source: %s: %w: %w", ref.OCI, ErrNotPublished, err)
		}
		return nil, fmt.Errorf("source: %w", err)
	}
	insp, err := artifact.Inspect(p.Artifact)
	if err != nil {
		return nil, fmt.Errorf("source: %s (%s): %w", ref.OCI, p.Digest, err)
	}
	m := insp.Manifest
	for _, c := range []struct{ annotation, inside string }{
		{oci.AnnotationID, m.SkillID},
		{oci.AnnotationVersion, m.Version},
		{oci.AnnotationPublisher, m.Publisher},
		{oci.AnnotationPayload, insp.PayloadSHA256},
	} {
		if said, ok := p.Annotations[c.annotation]; ok && said != c.inside {
			return nil, fmt.Errorf("source: %s (%s): %w: annotation %s is %q, the artifact says %q", ref.OCI, p.Digest, ErrIdentityMismatch, c.annotation, said, c.inside)
		}
	}
	if r.Tag != "" {
		if _, perr := manifest.ParseVersion(r.Tag); perr == nil {
			if cmp, _ := manifest.CompareVersions(r.Tag, m.Version); cmp != 0 {
				return nil, fmt.Errorf("source: %s (%s): %w: tag %s holds version %s", ref.OCI, p.Digest, ErrIdentityMismatch, r.Tag, m.Version)
			}
		}
	}
	r.Digest = p.Digest
	f.cfg.Logger.Info("pulled skill from OCI registry", "reference", r.String(), "skill_id", m.SkillID, "version", m.Version, "publisher", m.Publisher)
	return &Fetched{
		Artifact:  p.Artifact,
		Source:    install.Source{Kind: inventory.SourceOCI, Ref: r.String()},
		SkillID:   m.SkillID,
		Version:   m.Version,
		Publisher: m.Publisher,
		Digest:    p.Digest,
	}, nil
}

// latestOCI returns the highest version-shaped tag of the repository a
// recorded OCI source names ("latest" and other tags are ignored) and the
// Ref of that tag. The skill id is checked when that Ref is fetched. The
// recorded source does not say whether it was pulled over plain HTTP:
// Config.PlainHTTP decides for loopback registries.
func (f *Fetcher) latestOCI(ctx context.Context, src install.Source, skillID string) (string, Ref, error) {
	vs, err := f.versionsOCI(ctx, Ref{OCI: src.Ref})
	if err != nil {
		return "", Ref{}, err
	}
	if len(vs) == 0 {
		return "", Ref{}, fmt.Errorf("source: %s: %w: no version tag at %s", skillID, ErrNotPublished, src.Ref)
	}
	v := vs[len(vs)-1]
	return v, RefAt(Ref{OCI: src.Ref}, v), nil
}

// versionsOCI returns the tags of the repository ref.OCI names that are
// versions (MAJOR.MINOR.PATCH, as skill versions are), ascending.
func (f *Fetcher) versionsOCI(ctx context.Context, ref Ref) ([]string, error) {
	tags, err := oci.Tags(ctx, f.ociConfig(ref.PlainHTTP), ref.OCI)
	if err != nil {
		if errors.Is(err, oci.ErrNotFound) {
			return nil, fmt.Errorf("source: %s: %w: %w", ref.OCI, ErrNotPublished, err)
		}
		if errors.Is(err, oci.ErrInvalidReference) {
			return nil, fmt.Errorf("source: %w: %w", ErrInvalidRef, err)
		}
		return nil, fmt.Errorf("source: %w", err)
	}
	var vs []string
	for _, t := range tags {
		if _, err := manifest.ParseVersion(t); err == nil {
			vs = append(vs, t)
		}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		c, _ := manifest.CompareVersions(vs[i], vs[j])
		return c < 0
	})
	return vs, nil
}
