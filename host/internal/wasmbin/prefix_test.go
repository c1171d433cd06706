package wasmbin_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

// sectionEnds returns the offsets at which the sections of a valid module
// end (and the end of the header): the only places a prefix of it can
// itself be a module.
func sectionEnds(t testing.TB, data []byte) map[int]bool {
	t.Helper()
	ends := map[int]bool{8: true}
	pos := 9
	for pos < len(data) {
		var size, shift uint
		for {
			c := data[pos]
			pos++
			size |= uint(c&0x7F) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		pos += int(size)
		ends[pos] = true
		pos++ // the next section id
	}
	return ends
}

// checkPrefixes parses every prefix of a valid module (every step-th one,
// plus those near section ends): each must fail as invalid, except a
// prefix that ends at a section end, which may also parse.
func checkPrefixes(t *testing.T, data []byte, step int) {
	t.Helper()
	mustParse(t, data)
	ends := sectionEnds(t, data)
	for n := 0; n < len(data); n++ {
		if n%step != 0 && !ends[n] && !ends[n+1] && !ends[n-1] {
			continue
		}
		m, err := wasmbin.Parse(data[:n], wasmbin.Limits{})
		if ends[n] {
			if err != nil && !errors.Is(err, wasmbin.ErrInvalid) {
				t.Fatalf("prefix of %d bytes: %v", n, err)
			}
			continue
		}
		if err == nil || m != nil {
			t.Fatalf("prefix of %d bytes (of %d) parsed", n, len(data))
		}
		checkErr(t, err, wasmbin.ErrInvalid)
	}
}

func TestTruncatedEverywhere(t *testing.T) {
	checkPrefixes(t, fullModule(), 1)
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "vectors", "derived", "*.wasm"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { checkPrefixes(t, data, 1) })
	}
}

func TestTruncatedGoModule(t *testing.T) {
	data := goReactor.build(t, "reactor", reactorSrc, "-buildmode=c-shared")
	checkPrefixes(t, data, 7919)
}
