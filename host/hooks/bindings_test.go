package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

var update = flag.Bool("update", false, "rewrite testdata/current.json from the parser's output")

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseCurrentRoundTrip checks that the current form parses unchanged
// and that Marshal writes it back byte for byte.
func TestParseCurrentRoundTrip(t *testing.T) {
	data := readTestdata(t, "current.json")
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Migrated {
		t.Error("current form marked as migrated")
	}
	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", "current.json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(out, data) {
		t.Errorf("Marshal changed the current form:\n%s", out)
	}
	want := []Binding{
		{
			HookID: "audit.quarantine", Event: EventSkillQuarantined, PluginID: "acme.auditor", Enabled: true,
			Operator:        Operator{DisplayName: "Quarantine audit", OwnerPrincipal: "admin:ops"},
			CreatedAtUnixMs: 1700000000000, UpdatedAtUnixMs: 1700000000000,
		},
		{
			HookID: "guard.tools", Event: EventRunBeforeTool, PluginID: "acme.guard", ToolID: "acme.guard.check", TimeoutMs: 5000,
			CreatedAtUnixMs: 1700000000001, UpdatedAtUnixMs: 1700000000002,
		},
	}
	if len(f.Entries) != len(want) {
		t.Fatalf("got %d entries, want %d", len(f.Entries), len(want))
	}
	for i := range want {
		if f.Entries[i] != want[i] {
			t.Errorf("entries[%d] = %+v\nwant %+v", i, f.Entries[i], want[i])
		}
	}
	if f.SchemaVersion != SchemaVersion || f.UpdatedAtUnixMs != 1700000000000 {
		t.Errorf("header = %d, %d", f.SchemaVersion, f.UpdatedAtUnixMs)
	}
}

// TestParseLegacy checks that every legacy fixture migrates to the current
// form of the same bindings.
func TestParseLegacy(t *testing.T) {
	want := readTestdata(t, "current.json")
	for _, name := range []string{"legacy_bare_array.json", "legacy_no_version.json", "legacy_version0.json"} {
		t.Run(name, func(t *testing.T) {
			f, err := Parse(readTestdata(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if !f.Migrated {
				t.Error("legacy form not marked as migrated")
			}
			f.UpdatedAtUnixMs = 1700000000000
			out, err := Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("migrated form differs from testdata/current.json:\n%s", out)
			}
			again, err := Parse(out)
			if err != nil || again.Migrated {
				t.Errorf("re-parse of migrated form: migrated=%v, %v", again != nil && again.Migrated, err)
			}
		})
	}
}

func TestParseMigratesSingleLegacySpelling(t *testing.T) {
	entry := func(extra string) string {
		return `{"schema_version":1,"updated_at_unix_ms":1,"entries":[{"hook_id":"h","enabled":true,` + extra + `}]}`
	}
	tests := []struct {
		name     string
		in       string
		migrated bool
	}{
		{"current", entry(`"event":"skill:enabled","plugin_id":"s"`), false},
		{"skill_id", entry(`"event":"skill:enabled","skill_id":"s"`), true},
		{"upper-case event", entry(`"event":"SKILL:ENABLED","plugin_id":"s"`), true},
		{"dotted event", entry(`"event":"skill.enabled","plugin_id":"s"`), true},
		{"run phase without prefix", entry(`"event":"after_run","plugin_id":"s"`), true},
		{"upper-case ids are normalized, not a legacy form", entry(`"event":"skill:enabled","plugin_id":"S"`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if f.Migrated != tt.migrated {
				t.Errorf("Migrated = %v, want %v", f.Migrated, tt.migrated)
			}
			if f.Entries[0].PluginID != "s" {
				t.Errorf("plugin id %q", f.Entries[0].PluginID)
			}
		})
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "  \n\t", `{"schema_version":1,"entries":[]}`, `[]`} {
		f, err := Parse([]byte(in))
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if len(f.Entries) != 0 || f.SchemaVersion != SchemaVersion {
			t.Errorf("Parse(%q) = %+v", in, f)
		}
	}
}

func TestParseSchemaTooNew(t *testing.T) {
	_, err := Parse(readTestdata(t, "too_new.json"))
	if !errors.Is(err, ErrSchemaTooNew) || errcode.Of(err) != "hook_bindings_schema_too_new" {
		t.Fatalf("err = %v", err)
	}
}

// TestParseErrors checks that strict decoding refuses what it must, with a
// FieldError naming the entry and the field.
func TestParseErrors(t *testing.T) {
	const ok0 = `{"hook_id":"a","event":"skill:enabled","plugin_id":"s","enabled":true}`
	file := func(entries ...string) string {
		return `{"schema_version":1,"updated_at_unix_ms":0,"entries":[` + strings.Join(entries, ",") + `]}`
	}
	entry := func(fields string) string { return `{` + fields + `}` }
	base := `"hook_id":"b","event":"skill:enabled","plugin_id":"s","enabled":true`
	tests := []struct {
		name  string
		in    string
		index int
		field string
		also  error // another sentinel in the chain, if any
	}{
		{"not json", `{`, -1, "", nil},
		{"trailing data", `{"schema_version":1,"entries":[]} []`, -1, "", nil},
		{"scalar", `42`, -1, "", nil},
		{"unknown top-level key", `{"schema_version":1,"entries":[],"plugins":[]}`, -1, "plugins", nil},
		{"duplicate top-level key", `{"schema_version":1,"entries":[],"entries":[]}`, -1, "entries", nil},
		{"missing entries", `{"schema_version":1}`, -1, "entries", nil},
		{"null entries", `{"schema_version":1,"entries":null}`, -1, "entries", nil},
		{"schema_version string", `{"schema_version":"1","entries":[]}`, -1, "schema_version", nil},
		{"schema_version negative", `{"schema_version":-1,"entries":[]}`, -1, "schema_version", nil},
		{"schema_version float", `{"schema_version":1.0,"entries":[]}`, -1, "schema_version", nil},
		{"updated_at negative", `{"schema_version":1,"updated_at_unix_ms":-5,"entries":[]}`, -1, "updated_at_unix_ms", nil},
		{"entry not object", file(ok0, `[]`), 1, "", nil},
		{"unknown entry key", file(ok0, entry(base+`,"colour":"red"`)), 1, "colour", nil},
		{"duplicate entry key", file(entry(base + `,"enabled":false`)), 0, "enabled", nil},
		{"duplicate operator key", file(entry(base + `,"operator":{"notes":"a","notes":"b"}`)), 0, "operator.notes", nil},
		{"missing hook_id", file(entry(`"event":"skill:enabled","plugin_id":"s","enabled":true`)), 0, "hook_id", nil},
		{"missing event", file(entry(`"hook_id":"b","plugin_id":"s","enabled":true`)), 0, "event", nil},
		{"missing plugin_id", file(entry(`"hook_id":"b","event":"skill:enabled","enabled":true`)), 0, "plugin_id", nil},
		{"missing enabled", file(entry(`"hook_id":"b","event":"skill:enabled","plugin_id":"s"`)), 0, "enabled", nil},
		{"enabled null", file(entry(`"hook_id":"b","event":"skill:enabled","plugin_id":"s","enabled":null`)), 0, "enabled", nil},
		{"enabled string", file(entry(`"hook_id":"b","event":"skill:enabled","plugin_id":"s","enabled":"yes"`)), 0, "enabled", nil},
		{"hook_id null", file(entry(`"hook_id":null,"event":"skill:enabled","plugin_id":"s","enabled":true`)), 0, "hook_id", nil},
		{"hook_id bad char", file(ok0, entry(`"hook_id":"a/b","event":"skill:enabled","plugin_id":"s","enabled":true`)), 1, "hook_id", nil},
		{"hook_id colon", file(entry(`"hook_id":"a:b","event":"skill:enabled","plugin_id":"s","enabled":true`)), 0, "hook_id", nil},
		{"hook_id too long", file(entry(`"hook_id":"` + strings.Repeat("a", MaxIDLength+1) + `","event":"skill:enabled","plugin_id":"s","enabled":true`)), 0, "hook_id", nil},
		{"hook_id empty", file(entry(`"hook_id":"  ","event":"skill:enabled","plugin_id":"s","enabled":true`)), 0, "hook_id", nil},
		{"plugin_id bad", file(entry(`"hook_id":"b","event":"skill:enabled","plugin_id":"s p","enabled":true`)), 0, "plugin_id", nil},
		{"plugin_id and skill_id", file(entry(base + `,"skill_id":"s"`)), 0, "skill_id", nil},
		{"unknown event", file(ok0, ok0[:0]+entry(`"hook_id":"b","event":"skill:exploded","plugin_id":"s","enabled":true`)), 1, "event", ErrUnknownEvent},
		{"tool_id bad", file(entry(base + `,"tool_id":"Acme.Tool"`)), 0, "tool_id", nil},
		{"timeout too long", file(entry(base + fmt.Sprintf(`,"timeout_ms":%d`, MaxHookTimeout.Milliseconds()+1))), 0, "timeout_ms", nil},
		{"timeout negative", file(entry(base + `,"timeout_ms":-1`)), 0, "timeout_ms", nil},
		{"created_at string", file(entry(base + `,"created_at_unix_ms":"1"`)), 0, "created_at_unix_ms", nil},
		{"operator unknown key", file(entry(base + `,"operator":{"tags":[]}`)), 0, "operator.tags", nil},
		{"operator not object", file(entry(base + `,"operator":"me"`)), 0, "operator", nil},
		{"operator field number", file(entry(base + `,"operator":{"notes":1}`)), 0, "operator.notes", nil},
		{"operator field too long", file(entry(base + `,"operator":{"notes":"` + strings.Repeat("n", MaxOperatorFieldBytes+1) + `"}`)), 0, "operator.notes", nil},
		{"duplicate hook id", file(ok0, entry(`"hook_id":" A ","event":"skill:enabled","plugin_id":"s","enabled":true`)), 1, "hook_id", nil},
		{"legacy array entry bad", `[` + ok0 + `,{"hook_id":"x"}]`, 1, "event", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", f)
			}
			if !errors.Is(err, ErrInvalidBindings) || errcode.Of(err) != "invalid_hook_bindings" {
				t.Fatalf("err = %v, want ErrInvalidBindings", err)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.also)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v has no FieldError", err)
			}
			if fe.Index != tt.index || fe.Field != tt.field {
				t.Errorf("FieldError at entries[%d].%q, want entries[%d].%q: %v", fe.Index, fe.Field, tt.index, tt.field, err)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	big := append([]byte(`{"schema_version":1,"entries":[]}`), bytes.Repeat([]byte(" "), MaxBindingsFileBytes)...)
	if _, err := Parse(big); !errors.Is(err, ErrInvalidBindings) || !strings.Contains(err.Error(), fmt.Sprint(MaxBindingsFileBytes)) {
		t.Errorf("oversized file: %v", err)
	}
	var entries []string
	for i := range MaxEntries + 1 {
		entries = append(entries, fmt.Sprintf(`{"hook_id":"h%d","event":"skill:enabled","plugin_id":"s","enabled":true}`, i))
	}
	all := `{"schema_version":1,"entries":[` + strings.Join(entries, ",") + `]}`
	if _, err := Parse([]byte(all)); !errors.Is(err, ErrInvalidBindings) {
		t.Errorf("%d entries: %v", MaxEntries+1, err)
	}
	most := `{"schema_version":1,"entries":[` + strings.Join(entries[:MaxEntries], ",") + `]}`
	f, err := Parse([]byte(most))
	if err != nil || len(f.Entries) != MaxEntries {
		t.Fatalf("%d entries: %v", MaxEntries, err)
	}
	f.Entries = append(f.Entries, Binding{HookID: "zz", Event: EventSkillEnabled, PluginID: "s"})
	if _, err := Marshal(f); !errors.Is(err, ErrTooManyHooks) {
		t.Errorf("Marshal of %d entries: %v", len(f.Entries), err)
	}
}

func TestMarshalValidates(t *testing.T) {
	f := &File{Entries: []Binding{
		{HookID: "b", Event: EventSkillEnabled, PluginID: "s"},
		{HookID: "a", Event: "nope", PluginID: "s"},
	}}
	_, err := Marshal(f)
	var fe *FieldError
	if !errors.Is(err, ErrInvalidBinding) || !errors.As(err, &fe) || fe.Index != 1 || fe.Field != "event" {
		t.Errorf("Marshal: %v", err)
	}
	f.Entries[1].Event = "skill:enabled"
	f.Entries[1].HookID = "B"
	if _, err := Marshal(f); !errors.Is(err, ErrInvalidBinding) || !errors.As(err, &fe) || fe.Index != 1 || fe.Field != "hook_id" {
		t.Errorf("Marshal with duplicate: %v", err)
	}
	f.Entries[1].HookID = "A"
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Entries[0]["hook_id"] != "a" || got.Entries[1]["hook_id"] != "b" {
		t.Errorf("entries not normalized and sorted: %s", data)
	}
	if _, ok := got.Entries[0]["tool_id"]; ok {
		t.Errorf("empty tool_id written: %s", data)
	}
	if f.Entries[1].HookID != "A" {
		t.Error("Marshal changed its argument")
	}
}

func TestFieldErrorText(t *testing.T) {
	cause := errors.New("bad")
	tests := []struct {
		e    FieldError
		want string
	}{
		{FieldError{Index: 3, Field: "event", Err: cause}, "entries[3].event: bad"},
		{FieldError{Index: 0, Err: cause}, "entries[0]: bad"},
		{FieldError{Index: -1, Field: "hook_id", Err: cause}, "hook_id: bad"},
		{FieldError{Index: -1, Err: cause}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
