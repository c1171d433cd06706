package manifest_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

// FuzzParse: Parse never panics, every error is a *FieldError wrapping
// ErrParse or ErrValidation, and whatever parses survives Marshal and a
// second Parse unchanged. Seeded with every manifest in testdata.
func FuzzParse(f *testing.F) {
	for _, root := range []string{manifestsDir, vectorsDir} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".toml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err == nil {
				f.Add(data)
			}
			return err
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	for _, a := range []string{"acme.echo_http-1.0.0.palyra-skill", "acme.hook_skill-1.0.0.palyra-skill"} {
		f.Add(artifactManifest(f, a))
	}
	// The [config] table, in its table form and its JSON-string form.
	f.Add([]byte(problemsBase + configTOML))
	f.Add([]byte(problemsBase + "[config]\nsensitive = [\"k\"]\nschema = '{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"},\"n\":{\"type\":\"number\",\"default\":1.5}}}'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := manifest.Parse(data)
		if err != nil {
			var fe *manifest.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FieldError", err, err)
			}
			if !errors.Is(err, manifest.ErrParse) && !errors.Is(err, manifest.ErrValidation) {
				t.Fatalf("error %v wraps neither ErrParse nor ErrValidation", err)
			}
			return
		}
		out, err := manifest.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of a parsed manifest: %v", err)
		}
		back, err := manifest.Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(m)): %v\n%s", err, out)
		}
		if !reflect.DeepEqual(m, back) {
			t.Fatalf("round trip changed the manifest\nbefore: %#v\nafter:  %#v\ntext:\n%s", m, back, out)
		}
		_ = m.Warnings()
		_ = m.CapabilityGrants()
		_ = m.PolicyBindings()
		_ = manifest.CheckCompat(m)
		for _, tl := range m.Entrypoints.Tools {
			s, err := m.ToolSchemas(tl.ID)
			if err != nil {
				t.Fatalf("ToolSchemas(%q) of a parsed manifest: %v", tl.ID, err)
			}
			_ = s.ValidateInputJSON([]byte(`{"a": [1, "b", null, 2.5]}`))
		}
	})
}
