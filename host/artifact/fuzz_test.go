package artifact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds returns every .palyra-skill under the repository's testdata,
// a freshly built artifact and a few corrupt variants of it.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	root := filepath.Join("..", "..", "testdata")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, Extension) {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			seeds = append(seeds, b)
		}
		return nil
	})
	if err != nil {
		f.Fatalf("walking %s: %v", root, err)
	}
	if len(seeds) == 0 {
		f.Fatalf("no %s files under %s", Extension, root)
	}
	good := buildGood(f).Bytes
	seeds = append(seeds, good,
		messWith(f, good, func(e map[string][]byte) { delete(e, SBOMPath) }),
		messWith(f, good, func(e map[string][]byte) { e["other/x"] = []byte("x") }),
		rawZip(f, rawFromEntries(entriesOf(f, good))), // same entries, level 9
		[]byte("PK\x05\x06"+strings.Repeat("\x00", 18)),
	)
	return seeds
}

// FuzzInspect: Inspect never panics, and whatever it accepts is
// self-consistent (the payload hash recomputes, and the archive reads
// back identically after rezipping).
func FuzzInspect(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Inspect(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "artifact: ") {
				t.Fatalf("error %q lacks the artifact: prefix", err)
			}
			return
		}
		if got := PayloadSHA256(in.Entries); got != in.PayloadSHA256 || got != in.Signature.PayloadSHA256 {
			t.Fatalf("accepted artifact with payload %s, signature says %s", got, in.Signature.PayloadSHA256)
		}
		again, err := writeZip(in.Entries)
		if errors.Is(err, ErrCompressionRatio) {
			return // read from a Stored entry; our Deflate would exceed the ratio
		}
		if err != nil {
			t.Fatalf("rezip: %v", err)
		}
		in2, err := Inspect(again)
		if err != nil || in2.PayloadSHA256 != in.PayloadSHA256 {
			t.Fatalf("rezipped accepted artifact: %v", err)
		}
	})
}

// FuzzRead: Read never panics, and accepted entries obey the limits.
func FuzzRead(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ReadBytes(data)
		if err != nil {
			return
		}
		var total int
		for _, name := range a.Names() {
			b, _ := a.Entry(name)
			if len(b) > MaxEntryBytes {
				t.Fatalf("%s: %d bytes", name, len(b))
			}
			total += len(b)
		}
		if total > MaxArtifactBytes || len(a.Names()) > MaxEntries {
			t.Fatalf("total %d bytes, %d entries", total, len(a.Names()))
		}
	})
}
