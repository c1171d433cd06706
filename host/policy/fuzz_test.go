package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse checks that Parse never panics, that whatever it accepts
// Validates and survives Marshal then Parse unchanged, and that evaluating
// it against the echo manifest works. Seeds: every profile in
// testdata/policy, the default profile and a few edge cases.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "policy", "*.toml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	def, err := Default().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(def)
	for _, s := range []string{
		"",
		"[http]\nallowed_hosts = [\"*.Example.COM.\", \"*\", \" a.b \"]\nallowed_schemes = [\"http\"]\n",
		"secrets.allowed = [\"skill:*/api_*\", \"*/*\", \"principal:a:b/k\"]\n",
		"storage.allowed_prefixes = [\"a\\\\b\", \"*\"]\nquotas.max_capability_calls = 1\n",
		"capabilities = { allow_wildcards = true }\nhttp.allowed_ports = [1, 65535]\n",
		"[quotas]\nmax_fuel = 9223372036854775807\n",
		"http.max_redirects = 0\nchannels.allowed = []\n",
	} {
		f.Add([]byte(s))
	}
	m := echoManifest(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse accepted a profile Validate refuses: %v", err)
		}
		out, err := p.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		q, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(p)): %v\n%s", err, out)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v\n%s", p, q, out)
		}
		d, err := p.Evaluate(m)
		if err != nil {
			t.Fatalf("Evaluate: %v", err)
		}
		if d.Limits.Fuel == 0 || d.Limits.WallClock <= 0 {
			t.Fatalf("limits %+v", d.Limits)
		}
	})
}

// FuzzGlob checks glob against a regular expression on plain strings, and
// its soundness on patterns: when glob(p, s) holds for a string s holding
// '*', p must match every string s stands for (here: s with each '*'
// replaced by "", "x*y" and "-:.").
func FuzzGlob(f *testing.F) {
	f.Add("skill:*/api_*", "skill:acme/api_token")
	f.Add("a*b*c", "a*bc")
	f.Add("*", "")
	f.Add("**a", "ba*")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		// Profile patterns and manifest values are short ASCII; the
		// regexp reference needs valid UTF-8.
		if len(pattern) > 64 || len(s) > 64 || !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			return
		}
		got := glob(pattern, s)
		if !strings.Contains(s, "*") {
			parts := strings.Split(pattern, "*")
			for i := range parts {
				parts[i] = regexp.QuoteMeta(parts[i])
			}
			re := regexp.MustCompile(`\A(?s:` + strings.Join(parts, ".*") + `)\z`)
			if want := re.MatchString(s); got != want {
				t.Fatalf("glob(%q, %q) = %v, regexp says %v", pattern, s, got, want)
			}
			return
		}
		if !got {
			return
		}
		for _, w := range []string{"", "x*y", "-:."} {
			if inst := strings.ReplaceAll(s, "*", w); !glob(pattern, inst) {
				t.Fatalf("glob(%q, %q) holds but not for its instance %q", pattern, s, inst)
			}
		}
	})
}
