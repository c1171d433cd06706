package source

import (
	"context"
	"crypto/x509"
	"fmt"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/registry"
)

// catalog reads and verifies the index ref names (a directory or an https
// URL), returning the client that downloads its artifacts.
func (f *Fetcher) catalog(ctx context.Context, ref Ref, allowTOFU bool) (*registry.Catalog, *registry.Client, error) {
	if f.cfg.Trust == nil {
		return nil, nil, fmt.Errorf("source: registry index %s: %w", ref, registry.ErrTrustRequired)
	}
	trust := registry.TrustFunc(f.cfg.Trust)
	if ref.RegistryCACert != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(ref.RegistryCACert)) {
		return nil, nil, fmt.Errorf("source: registry index %s: %w: the registry CA certificate holds no PEM certificate", ref, ErrInvalidRef)
	}
	client, err := registry.NewClient(registry.ClientConfig{
		RootCAs:   f.cfg.RootCAs,
		CACertPEM: []byte(ref.RegistryCACert),
		Timeout:   f.cfg.Timeout,
	})
	if err != nil {
		return nil, nil, err
	}
	var cat *registry.Catalog
	if ref.RegistryDir != "" {
		cat, err = registry.ReadDir(ctx, ref.RegistryDir, trust, allowTOFU)
	} else {
		cat, err = client.Index(ctx, ref.RegistryURL, trust, allowTOFU)
	}
	if err != nil {
		return nil, nil, err
	}
	f.cfg.Logger.Debug("registry index read", "location", cat.Location, "entries", len(cat.Entries),
		"publisher", cat.Publisher, "key_id", cat.KeyID, "trust_decision", cat.TrustDecision)
	return cat, client, nil
}

// fetchIndex gets ref.SkillID (at ref.Version, else the highest version)
// from the signed index at ref.RegistryURL or ref.RegistryDir: the
// download's sha256 must be the entry's, and the manifest inside must name
// the entry's skill id, version and publisher.
func (f *Fetcher) fetchIndex(ctx context.Context, ref Ref, allowTOFU bool) (*Fetched, error) {
	cat, client, err := f.catalog(ctx, ref, allowTOFU)
	if err != nil {
		return nil, err
	}
	var e *registry.Located
	var ok bool
	if ref.Version != "" {
		e, ok = cat.Find(ref.SkillID, ref.Version)
	} else {
		e, ok = cat.Latest(ref.SkillID)
	}
	if !ok {
		v := ref.Version
		if v == "" {
			v = "any version"
		}
		return nil, fmt.Errorf("source: %s %s is not in the index %s: %w", ref.SkillID, v, cat.Location, ErrNotPublished)
	}
	data, err := client.Artifact(ctx, cat, e)
	if err != nil {
		return nil, err
	}
	in, err := artifact.Inspect(data)
	if err != nil {
		return nil, fmt.Errorf("source: %s %s from %s: %w", e.SkillID, e.Version, cat.Location, err)
	}
	m := in.Manifest
	for _, c := range []struct{ field, entry, manifest string }{
		{"skill_id", e.SkillID, m.SkillID},
		{"version", e.Version, m.Version},
		{"publisher", e.Publisher, m.Publisher},
	} {
		if c.entry != c.manifest {
			return nil, fmt.Errorf("source: %s %s from %s: the index entry's %s is %q, the artifact manifest's is %q: %w",
				e.SkillID, e.Version, cat.Location, c.field, c.entry, c.manifest, ErrIdentityMismatch)
		}
	}
	kind := inventory.SourceRemoteRegistry
	if cat.Local {
		kind = inventory.SourceLocalRegistry
	}
	f.cfg.Logger.Info("fetched from registry index", "location", cat.Location, "skill_id", e.SkillID,
		"version", e.Version, "artifact_sha256", e.ArtifactSHA256)
	return &Fetched{
		Artifact:  data,
		Source:    install.Source{Kind: kind, Ref: cat.Location},
		SkillID:   e.SkillID,
		Version:   e.Version,
		Publisher: e.Publisher,
		Digest:    "sha256:" + e.ArtifactSHA256,
	}, nil
}

// indexRef is the Ref of skillID at a recorded registry source.
func indexRef(src install.Source, skillID string) (Ref, error) {
	switch src.Kind {
	case inventory.SourceRemoteRegistry:
		return Ref{RegistryURL: src.Ref, SkillID: skillID}, nil
	case inventory.SourceLocalRegistry:
		return Ref{RegistryDir: src.Ref, SkillID: skillID}, nil
	}
	return Ref{}, fmt.Errorf("source: %s: %w (source kind %s)", skillID, ErrNoSource, kindOrDefault(src.Kind))
}

// latestIndex returns the highest version of skillID in the index a
// recorded source names.
func (f *Fetcher) latestIndex(ctx context.Context, src install.Source, skillID string, allowTOFU bool) (string, Ref, error) {
	ref, err := indexRef(src, skillID)
	if err != nil {
		return "", Ref{}, err
	}
	if err := ref.Check(); err != nil {
		return "", Ref{}, err
	}
	cat, _, err := f.catalog(ctx, ref, allowTOFU)
	if err != nil {
		return "", Ref{}, err
	}
	e, ok := cat.Latest(skillID)
	if !ok {
		return "", Ref{}, fmt.Errorf("source: %s is not in the index %s: %w", skillID, cat.Location, ErrNotPublished)
	}
	ref.Version = e.Version
	return e.Version, ref, nil
}

// versionsIndex returns the versions of ref.SkillID in the index, ascending.
func (f *Fetcher) versionsIndex(ctx context.Context, ref Ref, allowTOFU bool) ([]string, error) {
	cat, _, err := f.catalog(ctx, ref, allowTOFU)
	if err != nil {
		return nil, err
	}
	return cat.Versions(ref.SkillID), nil
}
