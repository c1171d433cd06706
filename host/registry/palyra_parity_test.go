package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/internal/testskill"
)

// TestPalyraSymlinkCycleSkipped is the symlink-cycle case of Palyra's
// registry tests (facts §11): a directory that links back to itself and
// to its parent is not followed, so the scan ends and indexes each
// artifact once. docs/palyra-parity.md cites it.
func TestPalyraSymlinkCycleSkipped(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sub/a.palyra-skill", skillBytes(t, "acme.alpha", "1.0.0", "", testskill.Key(1)))
	for link, target := range map[string]string{"self": ".", "sub/up": "..", "sub/loop": filepath.Join(dir, "sub")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	b := buildDir(t, dir, testskill.Key(7))
	if es := b.Document.Index.Entries; len(es) != 1 || es[0].Artifact != "sub/a.palyra-skill" {
		t.Fatalf("entries = %+v, want sub/a.palyra-skill once", es)
	}
}
