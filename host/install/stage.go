package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// Names inside <state>/skills/<skill_id>/. Version directories are named
// by the canonical version ("1.2.0"); every other name starts with a dot,
// which no version and no artifact entry at the top level can.
const (
	lockName       = ".lock"
	stagingPrefix  = ".tmp-install-"
	setAsidePrefix = ".replaced-"
	// ArtifactFile is the verified artifact, byte for byte, inside a
	// version directory.
	ArtifactFile = "artifact.palyra-skill"
	// MetadataFile is the install metadata inside a version directory
	// (Palyra's install-metadata.json).
	MetadataFile = "install-metadata.json"
)

// crashPoint is called at every step boundary of an install and a remove,
// with the step's name. It does nothing; the crash-consistency test
// replaces it, in a child process, to SIGKILL itself at a chosen step.
var crashPoint = func(step string) {}

// Metadata is install-metadata.json, Palyra's shape (schema_version 1).
type Metadata struct {
	SchemaVersion  int                   `json:"schema_version"`
	InstalledAtMS  int64                 `json:"installed_at_unix_ms"`
	Source         Source                `json:"source"`
	ArtifactSHA256 string                `json:"artifact_sha256"`
	PayloadSHA256  string                `json:"payload_sha256"`
	Publisher      string                `json:"publisher"`
	SignatureKeyID string                `json:"signature_key_id"`
	TrustDecision  string                `json:"trust_decision"`
	MissingSecrets []inventory.SecretRef `json:"missing_secrets"`
}

// checkLayout refuses entries that would collide with the files the
// install directory reserves, or with each other on disk (an entry "a" and
// an entry "a/b"). Entry names already passed the artifact path rule.
func checkLayout(entries map[string][]byte) error {
	for name := range entries {
		if name == ArtifactFile || name == MetadataFile {
			return fmt.Errorf("%w: entry %q", ErrReservedEntry, name)
		}
		for i := strings.IndexByte(name, '/'); i >= 0; i = next(name, i) {
			if _, ok := entries[name[:i]]; ok {
				return fmt.Errorf("%w: entry %q is also a directory of %q", ErrReservedEntry, name[:i], name)
			}
		}
	}
	return nil
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// stage writes a version directory under a fresh staging name inside
// skillDir: the artifact file, every entry, and the metadata, each fsynced,
// then every directory it made, the staging directory and skillDir. It
// returns the staging directory. On error the staging directory is
// removed.
func stage(skillDir string, data []byte, ins *artifact.Inspection, meta Metadata) (dir string, err error) {
	if err := checkLayout(ins.Entries); err != nil {
		return "", err
	}
	dir, err = os.MkdirTemp(skillDir, stagingPrefix)
	if err != nil {
		return "", fmt.Errorf("install: create staging directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	crashPoint("stage:created")
	if err := writeSynced(filepath.Join(dir, ArtifactFile), data); err != nil {
		return "", err
	}
	crashPoint("stage:artifact")
	dirs := map[string]bool{dir: true}
	for _, name := range slices.Sorted(maps.Keys(ins.Entries)) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		parent := filepath.Dir(p)
		if !dirs[parent] {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return "", fmt.Errorf("install: %w", err)
			}
			for d := parent; !dirs[d]; d = filepath.Dir(d) {
				dirs[d] = true
			}
		}
		if err := writeSynced(p, ins.Entries[name]); err != nil {
			return "", err
		}
	}
	crashPoint("stage:entries")
	mj, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return "", fmt.Errorf("install: encode metadata: %w", err)
	}
	if err := writeSynced(filepath.Join(dir, MetadataFile), append(mj, '\n')); err != nil {
		return "", err
	}
	// Directories deepest first, so each entry is durable in its parent.
	all := slices.Collect(maps.Keys(dirs))
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) })
	for _, d := range all {
		if err := syncDir(d); err != nil {
			return "", err
		}
	}
	if err := syncDir(skillDir); err != nil {
		return "", err
	}
	crashPoint("stage:synced")
	return dir, nil
}

// writeSynced creates path (which must not exist) with data and fsyncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("install: write %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	if err := fsutil.SyncDir(dir); err != nil {
		return fmt.Errorf("install: sync %s: %w", dir, err)
	}
	return nil
}

// fileSHA256 returns the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readArtifact reads the installed artifact of a version directory and
// checks it against the SHA-256 recorded at install. A missing file or a
// different hash is ErrInstalledArtifact.
func readArtifact(versionDir, wantSHA string) ([]byte, error) {
	p := filepath.Join(versionDir, ArtifactFile)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is missing", ErrInstalledArtifact, p)
	}
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, artifact.MaxArtifactBytes+1))
	if err != nil {
		return nil, fmt.Errorf("install: read %s: %w", p, err)
	}
	if len(data) > artifact.MaxArtifactBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrInstalledArtifact, p, artifact.MaxArtifactBytes)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != wantSHA {
		return nil, fmt.Errorf("%w: %s has sha256 %s, installed as %s", ErrInstalledArtifact, p, got, wantSHA)
	}
	return data, nil
}
