package registry

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// Catalog is a verified index: every page's entries, and who signed it.
type Catalog struct {
	// Location is the index URL, or the registry directory (absolute).
	Location string
	// Local is true for a registry directory.
	Local bool
	// Publisher and KeyID are the index signature's; PublicKey is the key.
	Publisher, KeyID string
	PublicKey        ed25519.PublicKey
	// TrustDecision is the trust callback's decision on the key.
	TrustDecision string
	// Entries are every page's entries, in index order.
	Entries []Located
}

// Located is an entry and the page that listed it.
type Located struct {
	Entry
	// Page is the URL of the page that listed the entry ("" in a
	// registry directory); the artifact URL is resolved against it.
	Page string
}

// Versions returns the versions of skillID in the index, ascending.
func (c *Catalog) Versions(skillID string) []string {
	var out []string
	for _, e := range c.Entries {
		if e.SkillID == skillID {
			out = append(out, e.Version)
		}
	}
	sortVersions(out)
	return out
}

// Find returns the entry of skillID at version (compared numerically, so
// "1.0.0" finds "01.0.0"), or false.
func (c *Catalog) Find(skillID, version string) (*Located, bool) {
	want, err := manifest.ParseVersion(version)
	if err != nil {
		return nil, false
	}
	for i := range c.Entries {
		e := &c.Entries[i]
		if e.SkillID != skillID {
			continue
		}
		if v, err := manifest.ParseVersion(e.Version); err == nil && v == want {
			return e, true
		}
	}
	return nil, false
}

// Latest returns the entry of skillID with the highest version, or false.
func (c *Catalog) Latest(skillID string) (*Located, bool) {
	var best *Located
	for i := range c.Entries {
		e := &c.Entries[i]
		if e.SkillID == skillID && (best == nil || CompareVersions(e.Version, best.Version) > 0) {
			best = e
		}
	}
	return best, best != nil
}

func sortVersions(vs []string) {
	for i := 1; i < len(vs); i++ {
		for j := i; j > 0 && CompareVersions(vs[j-1], vs[j]) > 0; j-- {
			vs[j-1], vs[j] = vs[j], vs[j-1]
		}
	}
}

// catalogOf starts a Catalog from the first verified page.
func catalogOf(location string, local bool, v *Verified) *Catalog {
	return &Catalog{
		Location:      location,
		Local:         local,
		Publisher:     v.Document.Signature.Publisher,
		KeyID:         v.Document.Signature.KeyID,
		PublicKey:     v.PublicKey,
		TrustDecision: v.TrustDecision,
	}
}

// ReadDir reads and verifies <dir>/index.json of a local registry (the
// same Parse and Verify as a served page; a local index has one page, so
// next_page is refused).
func ReadDir(ctx context.Context, dir string, trust TrustFunc, allowTOFU bool) (*Catalog, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: %s: %w: %w", dir, ErrFetch, err)
	}
	path := filepath.Join(abs, IndexFile)
	data, err := fsutil.ReadLimited(path, MaxIndexPageBytes, ErrPageTooLarge, "MaxIndexPageBytes")
	if err != nil {
		return nil, fmt.Errorf("registry: read %s: %w: %w", path, ErrFetch, err)
	}
	doc, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("registry: %s: %w", path, err)
	}
	if doc.Index.NextPage != nil {
		return nil, fmt.Errorf("registry: %s: %w", path, invalid("a registry directory's index has no next_page"))
	}
	v, err := Verify(ctx, doc, trust, allowTOFU)
	if err != nil {
		return nil, fmt.Errorf("registry: %s: %w", path, err)
	}
	cat := catalogOf(abs, true, v)
	for _, e := range doc.Index.Entries {
		cat.Entries = append(cat.Entries, Located{Entry: e})
	}
	return cat, nil
}

// readLocal reads the artifact of e from the registry directory dir: the
// path must be relative, without "..", and must not leave dir through a
// symbolic link; at most MaxArtifactDownloadBytes.
func readLocal(dir string, e *Located) ([]byte, error) {
	a := e.Artifact
	unsafe := func(why string) error {
		return fmt.Errorf("registry: artifact %q of %s %s %s: %w", a, e.SkillID, e.Version, why, ErrUnsafePath)
	}
	if filepath.IsAbs(a) || strings.HasPrefix(a, "/") || strings.HasPrefix(a, `\`) {
		return nil, unsafe("is absolute")
	}
	for _, seg := range strings.FieldsFunc(a, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return nil, unsafe("climbs out with \"..\"")
		}
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: %s: %w: %w", dir, ErrFetch, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(a)))
	if err != nil {
		return nil, fmt.Errorf("registry: artifact %q of %s %s: %w: %w", a, e.SkillID, e.Version, ErrFetch, err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, unsafe("leaves the registry directory through a symbolic link")
	}
	data, err := fsutil.ReadLimited(real, MaxArtifactDownloadBytes, ErrArtifactTooLarge, "MaxArtifactDownloadBytes")
	if err != nil {
		return nil, fmt.Errorf("registry: artifact of %s %s: %w", e.SkillID, e.Version, err)
	}
	return data, nil
}

// checkSHA256 compares data's sha256 with the entry's.
func checkSHA256(data []byte, e *Located) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, e.ArtifactSHA256) {
		return fmt.Errorf("registry: artifact of %s %s has sha256 %s, the index says %s: %w", e.SkillID, e.Version, got, e.ArtifactSHA256, ErrSHA256Mismatch)
	}
	return nil
}
