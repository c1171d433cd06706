package a2ui_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

// badUpdates are invalid update outputs with the error each must give.
var badUpdates = []struct {
	name string
	data string
	want want
}{
	{"too large", `{"a2ui_update":{"surface":"s","patch_json":"` + s("x", a2ui.MaxPatchBytes) + `"}}`, want{a2ui.ErrLimit, "", "update size in bytes", 262144, 262144 + 47}},
	{"not JSON", `{"a2ui_update":`, want{a2ui.ErrInvalidPatch, "", "invalid JSON", 0, 0}},
	{"other key", `{"a2ui_update":{},"v":1}`, want{a2ui.ErrInvalidPatch, "/v", "unknown key (want a2ui_update)", 0, 0}},
	{"missing", `{}`, want{a2ui.ErrInvalidPatch, "/a2ui_update", "required key is missing", 0, 0}},
	{"not object", `{"a2ui_update":[]}`, want{a2ui.ErrInvalidPatch, "/a2ui_update", "want an object, got array", 0, 0}},
	{"unknown key", `{"a2ui_update":{"surface":"s","patch":{},"id":1}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update/id", "unknown key", 0, 0}},
	{"no surface", `{"a2ui_update":{"patch":{}}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update/surface", "required key is missing", 0, 0}},
	{"blank surface", `{"a2ui_update":{"surface":"  ","patch":{}}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update/surface", "empty surface", 0, 0}},
	{"surface 129", `{"a2ui_update":{"surface":"` + s("s", 129) + `","patch":{}}}`, want{a2ui.ErrLimit, "/a2ui_update/surface", "length", 128, 129}},
	{"neither patch", `{"a2ui_update":{"surface":"s"}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update", "exactly one of patch and patch_json", 0, 0}},
	{"both patches", `{"a2ui_update":{"surface":"s","patch":{},"patch_json":"{}"}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update", "exactly one of patch and patch_json", 0, 0}},
	{"patch_json not string", `{"a2ui_update":{"surface":"s","patch_json":{}}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update/patch_json", "want a string, got object", 0, 0}},
	{"bad op", `{"a2ui_update":{"surface":"s","patch":{"v":1,"ops":[{"op":"move","path":"/a"}]}}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update/patch/ops/0/op", `unknown op "move"`, 0, 0}},
	{"bad op in patch_json", `{"a2ui_update":{"surface":"s","patch_json":"{\"v\":1,\"ops\":[{\"op\":\"remove\",\"path\":\"\"}]}"}}`, want{a2ui.ErrInvalidPatch, "/a2ui_update/patch_json/ops/0/path", "remove of the root", 0, 0}},
}

func TestParseUpdateBad(t *testing.T) {
	for _, tt := range badUpdates {
		t.Run(tt.name, func(t *testing.T) {
			u, err := a2ui.ParseUpdate([]byte(tt.data))
			if u != nil {
				t.Fatal("an update came back with the error")
			}
			checkErr(t, err, tt.want, a2ui.ErrInvalidPatch)
		})
	}
}

func TestParseUpdate(t *testing.T) {
	const ops = `[{"op":"add","path":"/components/-","value":{"id":"n","type":"text","props":{"value":"N"}}},{"op":"remove","path":"/components/0"}]`
	for _, data := range []string{
		`{"a2ui_update":{"surface":" s ","patch":{"v":1,"ops":` + ops + `}}}`,
		`{"a2ui_update":{"surface":"s","patch_json":` + strconv.Quote(`{"v":1,"ops":`+ops+`}`) + `}}`,
	} {
		if !a2ui.IsUpdate([]byte(data)) || a2ui.IsDocument([]byte(data)) {
			t.Fatalf("IsUpdate/IsDocument wrong for %s", data)
		}
		u, err := a2ui.ParseUpdate([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if u.Surface != "s" || len(u.Patch.Ops) != 2 {
			t.Fatalf("update %+v", u)
		}
		// The patch encodes back as the protocol's JSON and applies.
		b, err := json.Marshal(u.Patch)
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(`{"v":1,"ops":`+ops+`}`), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("patch JSON\n got %s\nwant %s", b, ops)
		}
		out, d, err := a2ui.Apply([]byte(doc(comp("a", "text", `{"value":"A"}`))), u.Patch)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Components) != 1 || d.Components[0].ID != "n" {
			t.Fatalf("patched %s", out)
		}
	}
}

func TestIsUpdate(t *testing.T) {
	for data, want := range map[string]bool{
		`{"a2ui_update":{}}`:                              true,
		` {"x":[1,{"a2ui_update":1}],"a2ui_update":null}`: true,
		`{"x":{"a2ui_update":{}}}`:                        false,
		`["a2ui_update"]`:                                 false,
		`{"v":1,"surface":"s","components":[]}`:           false,
		``:                                                false,
	} {
		if got := a2ui.IsUpdate([]byte(data)); got != want {
			t.Errorf("IsUpdate(%s) = %v, want %v", data, got, want)
		}
	}
}

// FuzzParseUpdate: ParseUpdate never panics; every error is an *Error of
// the patch kind; an update has a surface and a patch that encodes back to
// a patch ParsePatch accepts.
func FuzzParseUpdate(f *testing.F) {
	for _, u := range badUpdates {
		if len(u.data) < 4096 {
			f.Add([]byte(u.data))
		}
	}
	f.Add([]byte(`{"a2ui_update":{"surface":"s","patch":{"v":1,"ops":[{"op":"replace","path":"/components/0/props/value","value":"x"}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, err := a2ui.ParseUpdate(data)
		if err != nil {
			expectError(t, err, a2ui.ErrInvalidPatch)
			return
		}
		if u.Surface == "" || u.Patch == nil {
			t.Fatalf("update %+v", u)
		}
		b, err := json.Marshal(u.Patch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a2ui.ParsePatch(b); err != nil {
			t.Fatalf("re-encoded patch %s: %v", b, err)
		}
	})
}
