package hooks

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzParseBindings checks that Parse never panics and that whatever it
// accepts is written by Marshal in a form it reads back unchanged and
// unmigrated. Seeds: every file in testdata/ and a few hand-made edge cases.
func FuzzParseBindings(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		``, `[]`, `{}`, `null`, `{"entries":[]}`,
		`[{"hook_id":"A","event":"before_tool","skill_id":"S","enabled":true}]`,
		`{"schema_version":1,"entries":[{"hook_id":"a","event":"skill:enabled","plugin_id":"s","enabled":true,"operator":{"notes":"\u0000"}}]}`,
		`{"schema_version":1,"entries":[{"hook_id":"a","event":"skill:enabled","plugin_id":"s","enabled":true,"timeout_ms":60000,"tool_id":"a:b"}]}`,
		`{"schema_version":4294967296,"entries":[]}`,
		`{"schema_version":1,"entries":[],"entries":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		if len(file.Entries) > MaxEntries {
			t.Fatalf("%d entries accepted", len(file.Entries))
		}
		out, err := Marshal(file)
		if err != nil {
			t.Fatalf("Marshal of a parsed file: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse of Marshal output: %v\n%s", err, out)
		}
		if again.Migrated {
			t.Fatalf("Marshal output is a legacy form:\n%s", out)
		}
		if !slices.Equal(again.Entries, file.Entries) {
			t.Fatalf("entries changed in a round trip:\n%+v\n%+v", file.Entries, again.Entries)
		}
		out2, err := Marshal(again)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("Marshal is not stable: %v\n%s\n%s", err, out, out2)
		}
	})
}

// FuzzNormalizeEvent checks that NormalizeEvent never panics, returns only
// known events, and is idempotent.
func FuzzNormalizeEvent(f *testing.F) {
	for _, s := range append(Events(), "", " Skill.Enabled ", "before_tool", "run:", ":", ".", "run.run:x", "\u0130", "SKİLL:ENABLED") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := NormalizeEvent(s)
		if err != nil {
			return
		}
		if !slices.Contains(Events(), e) {
			t.Fatalf("NormalizeEvent(%q) = %q, not a known event", s, e)
		}
		if again, err := NormalizeEvent(e); err != nil || again != e {
			t.Fatalf("NormalizeEvent(%q) = %q, %v; not idempotent", e, again, err)
		}
	})
}
