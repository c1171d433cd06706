package trust_test

import (
	"bytes"
	"context"
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

// FuzzIntegrity: whatever replaces a sealed store's file and its seal, Load
// never panics and returns either an error or exactly the sealed content:
// nobody without the key gets other content trusted.
func FuzzIntegrity(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "trust-store.json")
	sealed := trust.OpenFile(path)
	ctx := context.Background()
	if err := sealed.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", echoKeyHex) }); err != nil {
		f.Fatal(err)
	}
	goodStore, goodSeal := readFile(f, path), readFile(f, sealed.SealPath())
	f.Add(goodStore, goodSeal)
	f.Add([]byte(`{"trusted_publishers":{"acme":["`+echoKeyHex+`"],"evil":["`+hookKeyHex+`"]},"tofu_publishers":{}}`), goodSeal)
	f.Add(goodStore, []byte(`{"version":1,"key_source":"key_file","sealed":[]}`))
	f.Add([]byte(""), []byte("{"))
	f.Fuzz(func(t *testing.T, store, seal []byte) {
		d := t.TempDir()
		p := filepath.Join(d, "trust-store.json")
		if err := os.WriteFile(p, store, 0o600); err != nil {
			t.Fatal(err)
		}
		file := trust.OpenFile(p)
		if err := os.WriteFile(file.SealPath(), seal, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file.IntegrityKeyPath(), readFile(t, sealed.IntegrityKeyPath()), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := file.Load(ctx)
		if err != nil {
			return
		}
		got, err := s.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		empty, _ := trust.NewStore().Marshal()
		if !bytes.Equal(got, goodStore) && !bytes.Equal(got, empty) {
			t.Fatalf("loaded content that was never sealed:\n%s", got)
		}
	})
}
