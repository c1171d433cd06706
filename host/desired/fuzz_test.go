package desired

import (
	"errors"
	"testing"
)

// FuzzParse: any input is parsed or refused with ErrInvalidDocument,
// never a panic; what parses has a valid version and unique ids.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("version = 1\n"))
	f.Add([]byte("version = 1\n[[skill]]\nid = \"a\"\noci = \"oci://r/a\"\nversion = \">=1, <2\"\n"))
	f.Add([]byte("[[hook]]\nid = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidDocument) {
				t.Fatalf("error %v is not ErrInvalidDocument", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range d.Skills {
			if seen[s.ID] || s.ID == "" {
				t.Fatalf("duplicate or empty skill id %q accepted", s.ID)
			}
			seen[s.ID] = true
			s.Pick([]string{"1.0.0", "2.0.0"})
		}
	})
}
