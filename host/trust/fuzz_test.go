package trust_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/trust"
)

// addSeeds adds every file matching the patterns as a fuzz seed.
func addSeeds(f *testing.F, patterns ...string) {
	for _, pattern := range patterns {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// FuzzParse: Parse never panics, and whatever it accepts re-encodes to a
// fixed point that parses to the same store.
func FuzzParse(f *testing.F) {
	addSeeds(f, filepath.Join(vectorsDir, "trust-store.*.json"), "../../testdata/trust/store-*.json")
	f.Add([]byte(""))
	f.Add([]byte(" \n"))
	f.Add([]byte(`{"trusted_publishers":{" Acme ":["` + echoKeyHex + `"]},"tofu_publishers":{"b":"` + hookKeyHex + `"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := trust.Parse(data)
		if err != nil {
			return
		}
		out, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		s2, err := trust.Parse(out)
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v\n%s", err, out)
		}
		out2, err := s2.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("Marshal is not a fixed point:\n%s\n%s", out, out2)
		}
		// Every entry decides as listed.
		for _, p := range s.Publishers() {
			if len(p.TrustedKeys) == 0 && p.TOFUKey == "" {
				t.Fatalf("publisher %q with no key", p.Publisher)
			}
		}
	})
}

// FuzzParseRotation: ParseRotation and Verify never panic, and an accepted
// statement round-trips through Marshal with the same digest.
func FuzzParseRotation(f *testing.F) {
	addSeeds(f, "../../testdata/trust/rotation-*.json")
	f.Add([]byte(`{"schema_version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := trust.ParseRotation(data)
		if err != nil {
			return
		}
		verr := r.Verify()
		out, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r2, err := trust.ParseRotation(out)
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v\n%s", err, out)
		}
		if r2.Digest() != r.Digest() {
			t.Fatalf("digest changed: %s != %s", r2.Digest(), r.Digest())
		}
		if (r2.Verify() == nil) != (verr == nil) {
			t.Fatalf("Verify differs after a round trip: %v", verr)
		}
		out2, _ := r2.Marshal()
		if !bytes.Equal(out, out2) {
			t.Fatalf("Marshal is not a fixed point:\n%s\n%s", out, out2)
		}
	})
}
