package storage

import (
	"errors"
	"testing"
)

// TestSpaceEncoding: a key space survives Encode and DecodeSpace with its
// usage, EncodedLen is the encoded length, and damaged encodings are
// refused with ErrCorruptSpace instead of read as some other key space.
func TestSpaceEncoding(t *testing.T) {
	var s Space
	for _, kv := range [][2]string{{"c/b", "2"}, {"c/a", ""}, {"c/long", string(make([]byte, 300))}} {
		if err := s.Put("acme.x", kv[0], []byte(kv[1]), Quota{}); err != nil {
			t.Fatal(err)
		}
	}
	enc := s.Encode()
	if len(enc) != s.EncodedLen() {
		t.Fatalf("EncodedLen %d, encoded %d bytes", s.EncodedLen(), len(enc))
	}
	back, err := DecodeSpace(enc)
	if err != nil {
		t.Fatal(err)
	}
	if back.Usage() != s.Usage() || back.Usage() != (Usage{Keys: 3, Bytes: 3 + 3 + 1 + 6 + 300}) {
		t.Fatalf("usage %+v, want %+v", back.Usage(), s.Usage())
	}
	if v, ok := back.Get("c/a"); !ok || v == nil || len(v) != 0 {
		t.Fatalf("empty value back as %q %v", v, ok)
	}
	if empty, err := DecodeSpace(nil); err != nil || empty.Usage() != (Usage{}) {
		t.Fatalf("nil decodes to %+v %v", empty, err)
	}
	swapped := (&Space{entries: []spaceEntry{{"b", nil}, {"a", nil}}}).Encode()
	for name, b := range map[string][]byte{
		"version":      append([]byte{9}, enc[1:]...),
		"truncated":    enc[:len(enc)-1],
		"length":       {spaceVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"out of order": swapped,
		"missing":      {spaceVersion, 1, 'a'},
	} {
		if _, err := DecodeSpace(b); !errors.Is(err, ErrCorruptSpace) {
			t.Errorf("%s: %v, want ErrCorruptSpace", name, err)
		}
	}
}
