package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
)

// Fetch gets the artifact ref names. allowTOFU applies to a registry
// index's key (pinned on first use when true). The bytes are checked
// against what the source said (the index entry's sha256 and identity, the
// OCI digest and annotations); the artifact's own signature is the
// installer's to verify.
func (f *Fetcher) Fetch(ctx context.Context, ref Ref, allowTOFU bool) (*Fetched, error) {
	if err := ref.Check(); err != nil {
		return nil, err
	}
	if ref.OCI != "" {
		return f.fetchOCI(ctx, ref)
	}
	return f.fetchIndex(ctx, ref, allowTOFU)
}

// Latest returns the highest version published at a recorded source for
// skillID, and the Ref that fetches it. A source of kind local_artifact or
// managed_artifact has none: ErrNoSource.
func (f *Fetcher) Latest(ctx context.Context, src install.Source, skillID string, allowTOFU bool) (string, Ref, error) {
	switch src.Kind {
	case inventory.SourceOCI:
		return f.latestOCI(ctx, src, skillID)
	case inventory.SourceRemoteRegistry, inventory.SourceLocalRegistry:
		return f.latestIndex(ctx, src, skillID, allowTOFU)
	default:
		return "", Ref{}, fmt.Errorf("source: %s: %w (installed from %s %q)", skillID, ErrNoSource, kindOrDefault(src.Kind), src.Ref)
	}
}

// Versions lists the versions published for a skill, in ascending semver
// order: for an OCI ref, the repository's semver tags (its tag or digest,
// if any, is ignored); for an index, the entries of ref.SkillID (its
// Version is ignored). RefAt gives the Ref that fetches one of them.
func (f *Fetcher) Versions(ctx context.Context, ref Ref, allowTOFU bool) ([]string, error) {
	if err := ref.Check(); err != nil {
		return nil, err
	}
	if ref.OCI != "" {
		return f.versionsOCI(ctx, ref)
	}
	return f.versionsIndex(ctx, ref, allowTOFU)
}

// RefAt returns the Ref that fetches version of the skill at ref's source
// (the same index or repository; for OCI the tag is the version).
func RefAt(ref Ref, version string) Ref {
	if ref.OCI != "" {
		ref.OCI = ociRepository(ref.OCI) + ":" + version
		return ref
	}
	ref.Version = version
	return ref
}

// ociRepository returns an oci:// reference without its tag or digest.
func ociRepository(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// Check reports whether ref names exactly one kind of source, with what
// that kind needs.
func (r Ref) Check() error {
	n := 0
	for _, s := range []string{r.OCI, r.RegistryURL, r.RegistryDir} {
		if strings.TrimSpace(s) != "" {
			n++
		}
	}
	switch {
	case n != 1:
		return fmt.Errorf("source: %w: give exactly one of an oci:// reference, a registry URL and a registry directory (got %d)", ErrInvalidRef, n)
	case r.OCI != "" && (r.SkillID != "" || r.Version != ""):
		return fmt.Errorf("source: %w: an oci:// reference names its version by tag or digest; skill id and version are for a registry index", ErrInvalidRef)
	case r.OCI == "" && strings.TrimSpace(r.SkillID) == "":
		return fmt.Errorf("source: %w: a registry index needs the skill id", ErrInvalidRef)
	case r.OCI == "" && r.PlainHTTP:
		return fmt.Errorf("source: %w: plain HTTP is for OCI registries on loopback only; a registry index is https only", ErrInvalidRef)
	case r.OCI != "" && r.RegistryCACert != "":
		return fmt.Errorf("source: %w: the registry CA certificate applies to a registry URL, not to an OCI reference", ErrInvalidRef)
	}
	return nil
}

// String returns the reference as a user would type it.
func (r Ref) String() string {
	switch {
	case r.OCI != "":
		return r.OCI
	case r.Version != "":
		return fmt.Sprintf("%s%s %s %s", r.RegistryURL, r.RegistryDir, r.SkillID, r.Version)
	default:
		return fmt.Sprintf("%s%s %s", r.RegistryURL, r.RegistryDir, r.SkillID)
	}
}

func kindOrDefault(k inventory.SourceKind) inventory.SourceKind {
	if k == "" {
		return inventory.SourceLocalArtifact
	}
	return k
}
