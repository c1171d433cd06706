package registry

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// IndexFile is the name of a registry directory's index.
const IndexFile = "index.json"

// ArtifactExt is the extension Build scans for.
const ArtifactExt = ".palyra-skill"

// Built is a signed index built over a directory.
type Built struct {
	// Document is the signed index.
	Document *Document
	// Bytes is Document as written to index.json.
	Bytes []byte
}

// Build scans dir recursively for *.palyra-skill files (symbolic links,
// to files or directories, are skipped), inspects each with package
// artifact (a file that fails aborts the build, naming it), and returns the
// index of them signed with key: entries sorted by skill id then version,
// artifact the path relative to dir with forward slashes, artifact_sha256
// and artifact_bytes of the file, generated_at and signed_at now. The
// signature's publisher is publisher, or when "" the one publisher of all
// the artifacts (several publishers, or none, need publisher). Build
// writes nothing; WriteIndex does.
func Build(dir string, key ed25519.PrivateKey, publisher string, now time.Time) (*Built, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("registry: build %s: signing key is %d bytes, want an Ed25519 private key: %w", dir, len(key), ErrBuild)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("registry: build: %w: %w", ErrBuild, err)
	}
	var entries []Entry
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("registry: build: scan %s: %w: %w", path, ErrBuild, err)
		}
		if d.Type()&fs.ModeSymlink != 0 || d.IsDir() || !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ArtifactExt) {
			return nil
		}
		e, err := indexFile(root, path)
		if err != nil {
			return err
		}
		entries = append(entries, e)
		if len(entries) > MaxEntries {
			return fmt.Errorf("registry: build %s: more than %d artifacts, over the limit MaxEntries = %d: %w", dir, MaxEntries, MaxEntries, ErrTooManyEntries)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	SortEntries(entries)
	if publisher == "" {
		pubs := map[string]bool{}
		for _, e := range entries {
			pubs[e.Publisher] = true
		}
		if len(pubs) != 1 {
			return nil, fmt.Errorf("registry: build %s: the artifacts have %d publishers; name the index's publisher: %w", dir, len(pubs), ErrBuild)
		}
		publisher = entries[0].Publisher
	}
	if err := CheckEntries(entries); err != nil {
		return nil, fmt.Errorf("registry: build %s: %w", dir, err)
	}
	if entries == nil {
		entries = []Entry{}
	}
	idx := Index{SchemaVersion: SchemaVersion, GeneratedAtUnixMS: now.UnixMilli(), Entries: entries}
	doc := &Document{SchemaVersion: SchemaVersion, Index: idx, Signature: Sign(&idx, key, publisher, now)}
	b, err := Marshal(doc)
	if err != nil {
		return nil, err
	}
	return &Built{Document: doc, Bytes: b}, nil
}

// indexFile reads and inspects one artifact and returns its entry.
func indexFile(dir, path string) (Entry, error) {
	data, err := fsutil.ReadLimited(path, artifact.MaxArtifactBytes, ErrArtifactTooLarge, "artifact.MaxArtifactBytes")
	if err != nil {
		return Entry{}, fmt.Errorf("registry: build: %s: %w: %w", path, ErrBuild, err)
	}
	in, err := artifact.Inspect(data)
	if err != nil {
		return Entry{}, fmt.Errorf("registry: build: %s fails inspection: %w: %w", path, ErrBuild, err)
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return Entry{}, fmt.Errorf("registry: build: %s: %w: %w", path, ErrBuild, err)
	}
	sum := sha256.Sum256(data)
	n := uint64(len(data))
	m := in.Manifest
	return Entry{
		SkillID:        m.SkillID,
		Version:        m.Version,
		Publisher:      m.Publisher,
		Artifact:       filepath.ToSlash(rel),
		ArtifactSHA256: hex.EncodeToString(sum[:]),
		ArtifactBytes:  &n,
	}, nil
}

// SortEntries orders entries by skill id, then version (numerically), then
// artifact path.
func SortEntries(entries []Entry) {
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := &entries[i], &entries[j]
		if a.SkillID != b.SkillID {
			return a.SkillID < b.SkillID
		}
		if c := CompareVersions(a.Version, b.Version); c != 0 {
			return c < 0
		}
		return a.Artifact < b.Artifact
	})
}

// CompareVersions orders two entry versions numerically; a version that
// does not parse sorts below every one that does.
func CompareVersions(a, b string) int {
	va, ea := manifest.ParseVersion(a)
	vb, eb := manifest.ParseVersion(b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return va.Compare(vb)
}

// WriteIndex writes b to <dir>/index.json atomically (a temporary file,
// fsync, rename) and returns its path.
func WriteIndex(dir string, b []byte) (string, error) {
	path := filepath.Join(dir, IndexFile)
	if err := fsutil.WriteAtomic(path, b, 0o644); err != nil {
		return "", fmt.Errorf("registry: write %s: %w", path, err)
	}
	return path, nil
}
