package storage

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		reason string // "" when the key is valid; else a substring of KeyError.Reason
	}{
		{"parent first", "../x", `segment ".." is not allowed`},
		{"parent inside", "a/../../b", `segment ".." is not allowed`},
		{"absolute", "/etc/passwd", "leading '/' is not allowed"},
		{"double slash", "a//b", `empty segment at offset 2 ("//") is not allowed`},
		{"trailing slash", "a/", "trailing '/' is not allowed"},
		{"dot first", "./a", `segment "." is not allowed`},
		{"dot inside", "a/./b", `segment "." is not allowed`},
		{"dot dot", "..", `segment ".." is not allowed`},
		{"dot", ".", `segment "." is not allowed`},
		{"empty", "", "must not be empty"},
		{"NUL", "a\x00b", "byte 0x00 at offset 1 is not allowed"},
		{"backslash traversal", `a\..\b`, "byte 0x5c at offset 1 is not allowed"},
		{"space", "a b", "byte 0x20 at offset 1 is not allowed"},
		{"non-ASCII", "ä", "byte 0xc3 at offset 0 is not allowed"},
		{"too long", strings.Repeat("k", MaxKeyBytes+1), "257 bytes is over the limit of 256 bytes"},
		{"percent", "%", "byte 0x25 at offset 0 is not allowed"},
		{"star", "*", "byte 0x2a at offset 0 is not allowed"},
		{"question mark", "a?b", "byte 0x3f at offset 1 is not allowed"},
		{"colon", "c:x", "byte 0x3a at offset 1 is not allowed"},
		{"newline", "a\nb", "byte 0x0a at offset 1 is not allowed"},
		{"only slash", "/", "leading '/' is not allowed"},

		{"one byte", "a", ""},
		{"dotted", "a.b", ""},
		{"all classes", "a-b_c/d.e", ""},
		{"hidden segment", ".hidden", ""},
		{"dots in name", "a/..x/b...", ""},
		{"digits and upper", "Z9/0", ""},
		{"underscore", "_", ""},
		{"at the limit", strings.Repeat("k", MaxKeyBytes), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateKey(tt.key)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("ValidateKey(%q) = %v, want nil", tt.key, err)
				}
				return
			}
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("ValidateKey(%q) = %v, want a *KeyError", tt.key, err)
			}
			if !errors.Is(err, ErrInvalidKey) || errcode.Of(err) != "storage_invalid_key" {
				t.Fatalf("ValidateKey(%q): code %q, want storage_invalid_key", tt.key, errcode.Of(err))
			}
			if !strings.Contains(ke.Reason, tt.reason) {
				t.Fatalf("ValidateKey(%q) reason %q, want it to contain %q", tt.key, ke.Reason, tt.reason)
			}
			if ke.Kind != "key" || len(ke.Key) > 64 {
				t.Fatalf("KeyError kind %q, key %d bytes", ke.Kind, len(ke.Key))
			}
		})
	}
}

func TestKeyErrorMessage(t *testing.T) {
	err := ValidateKey("a\x00b")
	if got, want := err.Error(), `storage: invalid key "a\x00b": byte 0x00 at offset 1 is not allowed`; !strings.HasPrefix(got, want) {
		t.Fatalf("message %q, want prefix %q", got, want)
	}
	long := strings.Repeat("x", 100) + "\n"
	var ke *KeyError
	if !errors.As(ValidateKey(long), &ke) {
		t.Fatal("want a *KeyError")
	}
	if ke.Key != strings.Repeat("x", 64) || !ke.Cut {
		t.Fatalf("Key %q Cut %v, want 64 x and cut", ke.Key, ke.Cut)
	}
	if msg := ke.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, `"...`) {
		t.Fatalf("message %q: want the key quoted, cut and marked", msg)
	}
}

func TestValidatePrefixAndJoinKey(t *testing.T) {
	tests := []struct {
		prefix, key string
		want        string // the full key, or "" when refused
		kind        string // KeyError.Kind when refused
	}{
		{"counters", "visits", "counters/visits", ""},
		{"skills/cache", "a/b.json", "skills/cache/a/b.json", ""},
		{"counters", "../x", "", "key"},
		{"counters", "", "", "key"},
		{"", "x", "", "prefix"},
		{"../etc", "x", "", "prefix"},
		{"a/", "x", "", "prefix"},
		{"/a", "x", "", "prefix"},
		{"a%", "x", "", "prefix"},
		{strings.Repeat("p", MaxPrefixBytes+1), "x", "", "prefix"},
		{strings.Repeat("p", MaxPrefixBytes), "x", strings.Repeat("p", MaxPrefixBytes) + "/x", ""},
		{strings.Repeat("p", 300), strings.Repeat("k", 250), "", "full key"},
	}
	for _, tt := range tests {
		got, err := JoinKey(tt.prefix, tt.key)
		if tt.want != "" {
			if err != nil || got != tt.want {
				t.Errorf("JoinKey(%.20q, %.20q) = %.40q, %v; want %.40q", tt.prefix, tt.key, got, err, tt.want)
			}
			continue
		}
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Kind != tt.kind || got != "" {
			t.Errorf("JoinKey(%.20q, %.20q) = %q, %v; want a *KeyError of kind %q", tt.prefix, tt.key, got, err, tt.kind)
		}
	}
	if err := ValidatePrefix("a/./b"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf(`ValidatePrefix("a/./b") = %v, want ErrInvalidKey`, err)
	}
}

func TestValidateListPrefixAndCursor(t *testing.T) {
	tests := []struct {
		prefix string
		ok     bool
	}{
		{"", true},
		{"counters/", true},
		{"counters/a", true},
		{"counters/.", true},  // a partial last segment, e.g. of ".hidden"
		{"counters/..", true}, // a partial last segment, e.g. of "..x"
		{"a_", true},
		{"counters/../", false},
		{"../", false},
		{"/", false},
		{"a//", false},
		{"a%", false},
		{strings.Repeat("a", MaxFullKeyBytes+1), false},
	}
	for _, tt := range tests {
		err := validateListPrefix(tt.prefix)
		if (err == nil) != tt.ok {
			t.Errorf("validateListPrefix(%.20q) = %v, want ok %v", tt.prefix, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidKey) {
			t.Errorf("validateListPrefix(%.20q) = %v, want ErrInvalidKey", tt.prefix, err)
		}
	}
	for _, c := range []string{"", "a/b", "a/", "..", "x"} {
		if err := validateCursor(c); err != nil {
			t.Errorf("validateCursor(%q) = %v", c, err)
		}
	}
	for _, c := range []string{"a\x00", "a*", strings.Repeat("c", MaxFullKeyBytes+1)} {
		if err := validateCursor(c); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("validateCursor(%.20q) = %v, want ErrInvalidKey", c, err)
		}
	}
}

func TestPrefixUpperBound(t *testing.T) {
	tests := []struct {
		prefix, upper string
		ok            bool
	}{
		{"", "", false},
		{"a", "b", true},
		{"a_", "a`", true},
		{"counters/", "counters0", true},
		{"a\xff", "b", true},
		{"\xff\xff", "", false},
	}
	for _, tt := range tests {
		upper, ok := prefixUpperBound(tt.prefix)
		if upper != tt.upper || ok != tt.ok {
			t.Errorf("prefixUpperBound(%q) = %q, %v; want %q, %v", tt.prefix, upper, ok, tt.upper, tt.ok)
		}
	}
}

func TestValidateSkillID(t *testing.T) {
	for _, id := range []string{"acme.x", "a", "acme.echo_http", "pub:skill-1"} {
		if err := ValidateSkillID(id); err != nil {
			t.Errorf("ValidateSkillID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", "Acme.x", "a/b", "a b", "a%", "a\x00", strings.Repeat("s", MaxSkillIDBytes+1)} {
		if err := ValidateSkillID(id); !errors.Is(err, ErrInvalidSkillID) {
			t.Errorf("ValidateSkillID(%.20q) = %v, want ErrInvalidSkillID", id, err)
		}
	}
}

// FuzzValidateKey checks that validation never panics and that an accepted
// key cannot name anything outside its prefix.
func FuzzValidateKey(f *testing.F) {
	for _, k := range []string{"a", "../x", "a/../../b", "/etc/passwd", "a//b", "a/", ".hidden",
		"a\x00b", `a\..\b`, "ä", "%", "a_b/c.d-e", strings.Repeat("k", 257)} {
		f.Add("counters", k)
	}
	f.Add("a/..", "b")
	f.Fuzz(func(t *testing.T, prefix, key string) {
		err := ValidateKey(key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("ValidateKey(%q) = %v, not ErrInvalidKey", key, err)
			}
			if _, jerr := JoinKey("counters", key); jerr == nil {
				t.Fatalf("JoinKey accepted invalid key %q", key)
			}
			return
		}
		if len(key) == 0 || len(key) > MaxKeyBytes || strings.IndexByte(key, 0) >= 0 {
			t.Fatalf("accepted key %q: empty, too long or has NUL", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted key %q has segment %q", key, seg)
			}
		}
		for i := 0; i < len(key); i++ {
			if !keyByte(key[i]) {
				t.Fatalf("accepted key %q has byte 0x%02x", key, key[i])
			}
		}
		full, err := JoinKey("counters", key)
		if err != nil || !strings.HasPrefix(full, "counters/") || validateFullKey(full) != nil {
			t.Fatalf(`JoinKey("counters", %q) = %q, %v`, key, full, err)
		}
		if ValidatePrefix(prefix) == nil {
			full, err := JoinKey(prefix, key)
			if err == nil && !strings.HasPrefix(full, prefix+"/") {
				t.Fatalf("JoinKey(%q, %q) = %q does not start with the prefix", prefix, key, full)
			}
			if err == nil && validateFullKey(full) != nil {
				t.Fatalf("JoinKey(%q, %q) = %q is not a valid full key", prefix, key, full)
			}
		}
	})
}

// FuzzListRange checks that the range scan List uses matches exactly the
// keys that start with the prefix, for any prefix and key, and that list
// prefix and cursor validation never panic.
func FuzzListRange(f *testing.F) {
	f.Add("a_", "ab")
	f.Add("a", "a")
	f.Add("", "x")
	f.Add("a\xff", "a\xff\x00")
	f.Add("\xff", "\xff\xff")
	f.Add("counters/", "counters0")
	f.Fuzz(func(t *testing.T, prefix, key string) {
		_ = validateListPrefix(prefix)
		_ = validateCursor(key)
		upper, ok := prefixUpperBound(prefix)
		inRange := key >= prefix && (!ok || key < upper)
		if inRange != strings.HasPrefix(key, prefix) {
			t.Fatalf("prefix %q, upper %q (%v), key %q: range says %v", prefix, upper, ok, key, inRange)
		}
	})
}
