package registry

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/testskill"
)

// TestBuildScansSortsAndSigns builds over a tree with nested artifacts, a
// symlinked file and directory (skipped) and other files (ignored), and
// checks the entries, their order, paths, hashes, and that the written
// index reads back and verifies through ReadDir.
func TestBuildScansSortsAndSigns(t *testing.T) {
	dir := t.TempDir()
	key := testskill.Key(7)
	a10 := skillBytes(t, "acme.alpha", "1.10.0", "", testskill.Key(1))
	a9 := skillBytes(t, "acme.alpha", "1.9.0", "", testskill.Key(1))
	b1 := skillBytes(t, "acme.beta", "1.0.0", "", testskill.Key(1))
	writeFile(t, dir, "z/alpha-1.10.0.palyra-skill", a10)
	writeFile(t, dir, "alpha-1.9.0.palyra-skill", a9)
	writeFile(t, dir, "deep/er/beta.palyra-skill", b1)
	writeFile(t, dir, "notes.txt", []byte("not an artifact"))
	outside := t.TempDir()
	writeFile(t, outside, "x/gamma.palyra-skill", skillBytes(t, "acme.gamma", "1.0.0", "", testskill.Key(1)))
	if err := os.Symlink(filepath.Join(outside, "x", "gamma.palyra-skill"), filepath.Join(dir, "link.palyra-skill")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}

	b := buildDir(t, dir, key)
	var got [][3]string
	for _, e := range b.Document.Index.Entries {
		got = append(got, [3]string{e.SkillID, e.Version, e.Artifact})
	}
	want := [][3]string{
		{"acme.alpha", "1.9.0", "alpha-1.9.0.palyra-skill"},
		{"acme.alpha", "1.10.0", "z/alpha-1.10.0.palyra-skill"},
		{"acme.beta", "1.0.0", "deep/er/beta.palyra-skill"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("entries = %v, want %v", got, want)
	}
	e := b.Document.Index.Entries[1]
	sum := sha256.Sum256(a10)
	if e.ArtifactSHA256 != hex.EncodeToString(sum[:]) || e.ArtifactBytes == nil || *e.ArtifactBytes != uint64(len(a10)) || e.Publisher != "acme" {
		t.Fatalf("entry = %+v, want sha256 %x and %d bytes by acme", e, sum, len(a10))
	}
	sig := b.Document.Signature
	if sig.Publisher != "acme" || sig.KeyID != artifact.KeyID(key.Public().(ed25519.PublicKey)) || sig.SignedAtUnixMS != buildTime.UnixMilli() {
		t.Fatalf("signature = %+v", sig)
	}

	cat, err := ReadDir(context.Background(), dir, trustingKey(t, "acme", key), false)
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	if vs := cat.Versions("acme.alpha"); !slices.Equal(vs, []string{"1.9.0", "1.10.0"}) {
		t.Fatalf("Versions = %v", vs)
	}
	latest, ok := cat.Latest("acme.alpha")
	if !ok || latest.Version != "1.10.0" {
		t.Fatalf("Latest = %v %v", latest, ok)
	}
	c, err := NewClient(ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.Artifact(context.Background(), cat, latest)
	if err != nil || !slices.Equal(data, a10) {
		t.Fatalf("Artifact: %v (same bytes: %v)", err, slices.Equal(data, a10))
	}
}

// TestBuildRefusals: a file that fails inspection aborts the build naming
// it; several publishers need the publisher named.
func TestBuildRefusals(t *testing.T) {
	t.Run("broken artifact", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "ok.palyra-skill", skillBytes(t, "acme.ok", "1.0.0", "", testskill.Key(1)))
		bad := writeFile(t, dir, "sub/bad.palyra-skill", []byte("not a zip"))
		_, err := Build(dir, testskill.Key(7), "", buildTime)
		if !errors.Is(err, ErrBuild) || !errors.Is(err, artifact.ErrInvalidZip) || !strings.Contains(err.Error(), bad) {
			t.Fatalf("err = %v, want %s naming %s", err, ErrBuild.Code(), bad)
		}
	})
	t.Run("several publishers", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "a.palyra-skill", skillBytes(t, "acme.a", "1.0.0", "", testskill.Key(1)))
		writeFile(t, dir, "b.palyra-skill", skillBytes(t, "other.b", "1.0.0", "other", testskill.Key(2)))
		if _, err := Build(dir, testskill.Key(7), "", buildTime); errcode.Of(err) != ErrBuild.Code() {
			t.Fatalf("err = %v, want %s", err, ErrBuild.Code())
		}
		b, err := Build(dir, testskill.Key(7), "mirror", buildTime)
		if err != nil || b.Document.Signature.Publisher != "mirror" || len(b.Document.Index.Entries) != 2 {
			t.Fatalf("Build with a publisher: %v", err)
		}
	})
	t.Run("duplicate version", func(t *testing.T) {
		dir := t.TempDir()
		a := skillBytes(t, "acme.a", "1.0.0", "", testskill.Key(1))
		writeFile(t, dir, "a.palyra-skill", a)
		writeFile(t, dir, "copy/a.palyra-skill", a)
		if _, err := Build(dir, testskill.Key(7), "", buildTime); !errors.Is(err, ErrDuplicateEntry) {
			t.Fatalf("err = %v, want %s", err, ErrDuplicateEntry.Code())
		}
	})
}
