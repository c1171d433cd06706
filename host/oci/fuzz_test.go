package oci

import (
	"errors"
	"testing"
)

// FuzzParseReference checks that the parser never panics, that every
// refusal is ErrInvalidReference, and that an accepted reference prints
// back to a string that parses to the same reference.
func FuzzParseReference(f *testing.F) {
	for _, s := range []string{
		"oci://127.0.0.1:5000/skills/acme:1.0.0",
		"oci://localhost/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"oci://r.example/a:t@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"oci://[::1]:5000/x", "oci:///x", "oci://r/", "oci://r/A", "docker://r/x", "oci://r/x:", "oci://r/x@md5:00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReference(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidReference) {
				t.Fatalf("%q: %v is not oci_invalid_reference", s, err)
			}
			return
		}
		again, err := ParseReference(r.String())
		if err != nil || again != r {
			t.Fatalf("%q parsed to %+v, printed %q, reparsed to %+v, %v", s, r, r.String(), again, err)
		}
	})
}

// TestParseReference lists accepted and refused references.
func TestParseReference(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		in   string
		want Reference
		ok   bool
	}{
		{"oci://127.0.0.1:5000/skills/acme:1.0.0", Reference{"127.0.0.1:5000", "skills/acme", "1.0.0", ""}, true},
		{"oci://r.example/a/b@sha256:" + hex, Reference{"r.example", "a/b", "", "sha256:" + hex}, true},
		{"oci://r.example/a:1.0.0@sha256:" + hex, Reference{"r.example", "a", "1.0.0", "sha256:" + hex}, true},
		{"oci://r.example/a", Reference{"r.example", "a", "", ""}, true},
		{"r.example/a:1", Reference{}, false},
		{"oci://r.example", Reference{}, false},
		{"oci://r.example/A", Reference{}, false},
		{"oci://r.example/a:", Reference{}, false},
		{"oci://r.example/a@sha256:abc", Reference{}, false},
		{"oci://r.example/a@sha512:" + hex, Reference{}, false},
		{"oci://r.example/a:bad/tag", Reference{}, false},
	} {
		got, err := ParseReference(tc.in)
		if tc.ok != (err == nil) || (tc.ok && got != tc.want) {
			t.Errorf("ParseReference(%q) = %+v, %v; want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidReference) {
			t.Errorf("ParseReference(%q): %v is not oci_invalid_reference", tc.in, err)
		}
	}
	for _, tc := range []struct {
		host string
		want bool
	}{{"127.0.0.1:5000", true}, {"127.8.9.1", true}, {"localhost:80", true}, {"[::1]:5000", true}, {"10.0.0.1:5000", false}, {"registry.example.com", false}, {"localhost.evil.com", false}} {
		if got := IsLoopback(tc.host); got != tc.want {
			t.Errorf("IsLoopback(%q) = %v", tc.host, got)
		}
	}
}
