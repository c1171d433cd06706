package skillpath_test

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/internal/skillpath"
)

// FuzzNormalize checks the rule's properties on any string: a normalized
// path is a fixed point (idempotent), stays under any root it is joined to
// (never escapes), is already clean, and holds nothing the rule forbids; a
// refusal is an *Error wrapping ErrInvalid that quotes the raw path.
//
// The seeds are the paths real artifacts, manifests and policies carry
// (testdata/skills, the examples' skill.toml) and the refusals of the
// hostile-artifact corpus.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		// accepted in real artifacts and manifests
		"skill.toml", "modules/module.wasm", "module.wasm", "assets/prompt.txt", "skills/*", "skills/cache",
		"SIGNATURE.json", "  assets\\prompt.txt ", "a b/c", "dir/\u00e9t\u00e9.txt",
		// refused: the hostile-artifact forms
		"", " ", "/etc/passwd", "\\abs", "../../etc/passwd", "a/../../b", "..\\..\\x", "a\x00b", "c:temp", "C:\\Windows",
		"a//b", "a/", "./a", "a/.", "a/..", "*//foo", "\t..\t", "a/ ../b", "a/..\u00a0", "\u2028a", "\xff\xfe/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := skillpath.Normalize(raw)
		if err != nil {
			var pe *skillpath.Error
			if !errors.Is(err, skillpath.ErrInvalid) || !errors.As(err, &pe) || pe.Raw != raw || pe.Reason == "" || p != "" {
				t.Fatalf("Normalize(%q) = %q, %v: want \"\" and an *Error wrapping ErrInvalid", raw, p, err)
			}
			// What was refused stays refused however it is respelled
			// by the two steps Normalize applies itself.
			if _, err2 := skillpath.Normalize(strings.ReplaceAll(strings.TrimSpace(raw), `\`, "/")); err2 == nil {
				t.Fatalf("Normalize(%q) refused, its own respelling accepted", raw)
			}
			return
		}
		again, err := skillpath.Normalize(p)
		if err != nil || again != p {
			t.Fatalf("not idempotent: Normalize(%q) = %q; Normalize(%q) = %q, %v", raw, p, p, again, err)
		}
		if p == "" || strings.ContainsAny(p, "\\:\x00") || strings.HasPrefix(p, "/") {
			t.Fatalf("Normalize(%q) = %q holds what the rule forbids", raw, p)
		}
		if path.Clean(p) != p || !filepath.IsLocal(p) {
			t.Fatalf("Normalize(%q) = %q is not a clean local path (Clean: %q)", raw, p, path.Clean(p))
		}
		const root = "/state/skills/x"
		if j := path.Join(root, p); !strings.HasPrefix(j, root+"/") {
			t.Fatalf("Normalize(%q) = %q escapes %s: %s", raw, p, root, j)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("Normalize(%q) = %q has segment %q", raw, p, seg)
			}
		}
	})
}
