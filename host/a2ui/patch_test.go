package a2ui_test

import (
	"encoding/json"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

// badPatches are invalid patches with the error each must give.
var badPatches = []struct {
	name string
	data string
	want want
}{
	{"too large", `{"v":1,"ops":[{"op":"add","path":"","value":"` + s("x", a2ui.MaxPatchBytes) + `"}]}`, want{a2ui.ErrLimit, "", "patch size in bytes", 262144, 262144 + 49}},
	{"not JSON", `{"v":1,`, want{a2ui.ErrInvalidPatch, "", "invalid JSON", 0, 0}},
	{"array", `[]`, want{a2ui.ErrInvalidPatch, "", "want an object, got array", 0, 0}},
	{"unknown key", `{"v":1,"ops":[],"id":"x"}`, want{a2ui.ErrInvalidPatch, "/id", "unknown key (want v, ops)", 0, 0}},
	{"missing v", `{"ops":[]}`, want{a2ui.ErrInvalidPatch, "/v", "required key is missing", 0, 0}},
	{"v 2", `{"v":2,"ops":[{"op":"remove","path":"/a"}]}`, want{a2ui.ErrInvalidPatch, "/v", "want 1, got 2", 0, 0}},
	{"missing ops", `{"v":1}`, want{a2ui.ErrInvalidPatch, "/ops", "required key is missing", 0, 0}},
	{"no ops", `{"v":1,"ops":[]}`, want{a2ui.ErrInvalidPatch, "/ops", "no ops", 0, 0}},
	{"257 ops", `{"v":1,"ops":[` + repeat(257, func(int) string { return `{"op":"remove","path":"/a"}` }) + `]}`, want{a2ui.ErrLimit, "/ops", "op count", 256, 257}},
	{"op not object", `{"v":1,"ops":["add"]}`, want{a2ui.ErrInvalidPatch, "/ops/0", "want an object, got string", 0, 0}},
	{"op unknown key", `{"v":1,"ops":[{"op":"add","path":"/a","value":1,"from":"/b"}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/from", "unknown key (want op, path, value)", 0, 0}},
	{"op missing", `{"v":1,"ops":[{"path":"/a"}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/op", "required key is missing", 0, 0}},
	{"op move", `{"v":1,"ops":[{"op":"remove","path":"/a"},{"op":"move","path":"/a"}]}`, want{a2ui.ErrInvalidPatch, "/ops/1/op", `unknown op "move" (want add, replace, remove)`, 0, 0}},
	{"path missing", `{"v":1,"ops":[{"op":"remove"}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", "required key is missing", 0, 0}},
	{"path number", `{"v":1,"ops":[{"op":"remove","path":0}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", "want a string, got number", 0, 0}},
	{"add without value", `{"v":1,"ops":[{"op":"add","path":"/a"}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/value", "required key is missing (add takes a value)", 0, 0}},
	{"replace without value", `{"v":1,"ops":[{"op":"replace","path":"/a"}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/value", "replace takes a value", 0, 0}},
	{"remove with value", `{"v":1,"ops":[{"op":"remove","path":"/a","value":null}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/value", "remove takes no value", 0, 0}},
	{"remove root", `{"v":1,"ops":[{"op":"remove","path":""}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", "remove of the root", 0, 0}},
	{"relative path", `{"v":1,"ops":[{"op":"add","path":"a","value":1}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", `"a" does not start with /`, 0, 0}},
	{"escape ~2", `{"v":1,"ops":[{"op":"add","path":"/a~2","value":1}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", "a ~ that is not ~0 or ~1", 0, 0}},
	{"trailing ~", `{"v":1,"ops":[{"op":"add","path":"/a~","value":1}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", "not ~0 or ~1", 0, 0}},
	{"__proto__", `{"v":1,"ops":[{"op":"add","path":"/__proto__/x","value":1}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", `forbidden token "__proto__"`, 0, 0}},
	{"prototype", `{"v":1,"ops":[{"op":"remove","path":"/a/prototype"}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", `forbidden token "prototype"`, 0, 0}},
	{"constructor", `{"v":1,"ops":[{"op":"replace","path":"/constructor","value":1}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", `forbidden token "constructor"`, 0, 0}},
	{"escaped forbidden token", `{"v":1,"ops":[{"op":"add","path":"/x/__pro\u0074o__","value":1}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/path", "forbidden token", 0, 0}},
	{"path 513", `{"v":1,"ops":[{"op":"add","path":"/` + s("a", 512) + `","value":1}]}`, want{a2ui.ErrLimit, "/ops/0/path", "length", 512, 513}},
	{"path 513 UTF-16", `{"v":1,"ops":[{"op":"add","path":"/` + s("😀", 256) + `","value":1}]}`, want{a2ui.ErrLimit, "/ops/0/path", "length", 512, 513}},
	{"duplicate key in value", `{"v":1,"ops":[{"op":"add","path":"/a","value":{"k":1,"k":2}}]}`, want{a2ui.ErrInvalidPatch, "/ops/0/value/k", "duplicate key", 0, 0}},
}

func TestParsePatchBad(t *testing.T) {
	for _, tt := range badPatches {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a2ui.ParsePatch([]byte(tt.data))
			if p != nil {
				t.Fatal("a patch came back with the error")
			}
			checkErr(t, err, tt.want, a2ui.ErrInvalidPatch)
		})
	}
}

func TestParsePatch(t *testing.T) {
	p, err := a2ui.ParsePatch([]byte(`{"ops":[{"value":{"b":[1.50,"x"]},"path":"/a~1b/~0c/-","op":"add"},{"op":"replace","path":"","value":null},{"op":"remove","path":"/` + s("😀", 255) + `a"}],"v":1}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []a2ui.Op{
		{Op: "add", Path: "/a~1b/~0c/-", Value: json.RawMessage(`{"b":[1.50,"x"]}`)},
		{Op: "replace", Path: "", Value: json.RawMessage(`null`)},
		{Op: "remove", Path: "/" + s("😀", 255) + "a"},
	}
	if len(p.Ops) != len(want) {
		t.Fatalf("ops: %+v", p.Ops)
	}
	for i := range want {
		got := p.Ops[i]
		if got.Op != want[i].Op || got.Path != want[i].Path || string(got.Value) != string(want[i].Value) || (got.Value == nil) != (want[i].Value == nil) {
			t.Fatalf("op %d = %+v (value %s), want %+v", i, got, got.Value, want[i])
		}
	}
}

const base = `{"v":1,"surface":"s","components":[{"id":"a","type":"text","props":{"value":"A"}},{"id":"b","type":"list","props":{"items":["x","y"]}}]}`

// TestApply is the table of patch semantics (Palyra's, as Apply documents
// them): each patch applied to base gives the document want (compact, keys
// sorted) or the error.
func TestApply(t *testing.T) {
	const (
		compA = `{"id":"a","props":{"value":"A"},"type":"text"}`
		compB = `{"id":"b","props":{"items":["x","y"]},"type":"list"}`
		compN = `{"id":"n","props":{"value":"N"},"type":"text"}`
	)
	wrap := func(comps string) string { return `{"components":[` + comps + `],"surface":"s","v":1}` }
	nText := `{"id":"n","type":"text","props":{"value":"N"}}`
	tests := []struct {
		name string
		base string
		ops  string
		doc  string // the patched document, or "" for an error
		want want
	}{
		{"append with -", base, `{"op":"add","path":"/components/-","value":` + nText + `}`, wrap(compA + "," + compB + "," + compN), want{}},
		{"insert at 0", base, `{"op":"add","path":"/components/0","value":` + nText + `}`, wrap(compN + "," + compA + "," + compB), want{}},
		{"insert at len", base, `{"op":"add","path":"/components/2","value":` + nText + `}`, wrap(compA + "," + compB + "," + compN), want{}},
		{"insert into a nested array", base, `{"op":"add","path":"/components/1/props/items/1","value":"new"}`, wrap(compA + `,{"id":"b","props":{"items":["x","new","y"]},"type":"list"}`), want{}},
		{"add sets a key", base, `{"op":"add","path":"/components/0/props/tone","value":"muted"}`, wrap(`{"id":"a","props":{"tone":"muted","value":"A"},"type":"text"}` + "," + compB), want{}},
		{"add replaces an existing key", base, `{"op":"add","path":"/components/0/props/value","value":"Z"}`, wrap(`{"id":"a","props":{"value":"Z"},"type":"text"}` + "," + compB), want{}},
		{"replace a key", base, `{"op":"replace","path":"/surface","value":"t"}`, `{"components":[` + compA + "," + compB + `],"surface":"t","v":1}`, want{}},
		{"replace an element", base, `{"op":"replace","path":"/components/1/props/items/0","value":2}`, wrap(compA + `,{"id":"b","props":{"items":[2,"y"]},"type":"list"}`), want{}},
		{"remove an element", base, `{"op":"remove","path":"/components/0"}`, wrap(compB), want{}},
		{"remove a key", base, `{"op":"add","path":"/components/0/props/tone","value":"muted"},{"op":"remove","path":"/components/0/props/tone"}`, wrap(compA + "," + compB), want{}},
		{"replace the root", base, `{"op":"replace","path":"","value":{"v":1,"surface":"r","components":[` + nText + `]}}`, `{"components":[` + compN + `],"surface":"r","v":1}`, want{}},
		{"ops apply in order", base, `{"op":"add","path":"/components/-","value":` + nText + `},{"op":"remove","path":"/components/0"},{"op":"replace","path":"/components/1/props/value","value":"M"}`, wrap(compB + `,{"id":"n","props":{"value":"M"},"type":"text"}`), want{}},
		{"from Palyra's empty document", `{"v":1,"surface":"s","components":[]}`, `{"op":"add","path":"/components/-","value":` + nText + `}`, `{"components":[` + compN + `],"surface":"s","v":1}`, want{}},
		{"escaped key", `{"v":1,"surface":"s","components":[{"id":"l","type":"list","props":{"items":[{"a/b":{"~":1}}]}}]}`, `{"op":"replace","path":"/components/0/props/items/0/a~1b/~0","value":2}`, `{"components":[{"id":"l","props":{"items":[{"a/b":{"~":2}}]},"type":"list"}],"surface":"s","v":1}`, want{}},
		{"number literals kept", base, `{"op":"replace","path":"/components/1/props/items/0","value":1.50}`, wrap(compA + `,{"id":"b","props":{"items":[1.50,"y"]},"type":"list"}`), want{}},

		{"replace at index 99", base, `{"op":"replace","path":"/components/99","value":{}}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", "no index 99 (length 2)", 0, 0}},
		{"add beyond len", base, `{"op":"add","path":"/components/3","value":{}}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", "index 3 is beyond the length 2", 0, 0}},
		{"remove beyond len", base, `{"op":"remove","path":"/components/2"}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", "no index 2", 0, 0}},
		{"replace -", base, `{"op":"replace","path":"/components/-","value":{}}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", `"-" is not a canonical array index`, 0, 0}},
		{"leading zero", base, `{"op":"remove","path":"/components/01"}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", `"01" is not a canonical array index`, 0, 0}},
		{"sign", base, `{"op":"remove","path":"/components/+1"}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", "not a canonical array index", 0, 0}},
		{"huge index", base, `{"op":"add","path":"/components/99999999999999999999","value":1}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", "out of range", 0, 0}},
		{"replace missing key", base, `{"op":"replace","path":"/experimental","value":{}}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", `no key "experimental"`, 0, 0}},
		{"remove missing key", base, `{"op":"remove","path":"/components/0/props/tone"}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", `no key "tone"`, 0, 0}},
		{"missing parent", base, `{"op":"add","path":"/components/0/style/x","value":1}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", `at "/components/0/style": no key "style"`, 0, 0}},
		{"through a string", base, `{"op":"add","path":"/surface/x","value":1}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", `"/surface" is a string, not an object or array`, 0, 0}},
		{"through a string deeper", base, `{"op":"add","path":"/surface/x/y","value":1}`, "", want{a2ui.ErrPatchConflict, "/ops/0/path", "a string has no members", 0, 0}},
		{"second op conflicts", base, `{"op":"remove","path":"/components/1"},{"op":"remove","path":"/components/1"}`, "", want{a2ui.ErrPatchConflict, "/ops/1/path", "no index 1 (length 1)", 0, 0}},

		{"result invalid", base, `{"op":"replace","path":"/components/0/type","value":"video"}`, "", want{a2ui.ErrInvalid, "/components/0/type", `unknown component type "video"`, 0, 0}},
		{"result over a limit", base, `{"op":"replace","path":"/components/0/props/value","value":"` + s("x", 513) + `"}`, "", want{a2ui.ErrLimit, "/components/0/props/value", "length", 512, 513}},
		{"result has a duplicate id", base, `{"op":"add","path":"/components/-","value":{"id":"a","type":"text","props":{}}}`, "", want{a2ui.ErrInvalid, "/components/2/id", "already used", 0, 0}},
		{"result empties components", base, `{"op":"remove","path":"/components/1"},{"op":"remove","path":"/components/0"}`, "", want{a2ui.ErrInvalid, "/components", "no components", 0, 0}},
		{"root replaced by a non-object", base, `{"op":"replace","path":"","value":[]}`, "", want{a2ui.ErrInvalid, "", "want an object, got array", 0, 0}},
		{"base not JSON", `{"v":1`, `{"op":"remove","path":"/v"}`, "", want{a2ui.ErrInvalid, "", "invalid JSON", 0, 0}},
		{"base too large", `{"s":"` + s("x", a2ui.MaxDocumentBytes) + `"}`, `{"op":"remove","path":"/s"}`, "", want{a2ui.ErrLimit, "", "document size in bytes", a2ui.MaxDocumentBytes, a2ui.MaxDocumentBytes + 8}},
		{"base duplicate key", `{"v":1,"v":1}`, `{"op":"remove","path":"/v"}`, "", want{a2ui.ErrInvalid, "/v", "duplicate key", 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := a2ui.ParsePatch([]byte(`{"v":1,"ops":[` + tt.ops + `]}`))
			if err != nil {
				t.Fatalf("ParsePatch: %v", err)
			}
			baseCopy := tt.base
			out, d, err := a2ui.Apply([]byte(tt.base), p)
			if tt.base != baseCopy {
				t.Fatal("Apply changed its input")
			}
			if tt.doc == "" {
				if out != nil || d != nil {
					t.Fatal("a result came back with the error")
				}
				kind := a2ui.ErrInvalid
				if tt.want.err == a2ui.ErrPatchConflict {
					kind = a2ui.ErrPatchConflict
				}
				checkErr(t, err, tt.want, kind)
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if string(out) != tt.doc {
				t.Fatalf("got\n  %s\nwant\n  %s", out, tt.doc)
			}
			again, err := a2ui.Validate(out)
			if err != nil || len(again.Components) != len(d.Components) {
				t.Fatalf("the returned document does not match the returned JSON: %v", err)
			}
		})
	}
}

// TestApplyHandBuilt: Apply checks a Patch that did not come from
// ParsePatch as ParsePatch would.
func TestApplyHandBuilt(t *testing.T) {
	tests := []struct {
		name string
		p    *a2ui.Patch
		want want
	}{
		{"nil", nil, want{a2ui.ErrInvalidPatch, "/ops", "no ops", 0, 0}},
		{"no ops", &a2ui.Patch{}, want{a2ui.ErrInvalidPatch, "/ops", "no ops", 0, 0}},
		{"too many ops", &a2ui.Patch{Ops: make([]a2ui.Op, 257)}, want{a2ui.ErrLimit, "/ops", "op count", 256, 257}},
		{"bad op", &a2ui.Patch{Ops: []a2ui.Op{{Op: "copy", Path: "/a"}}}, want{a2ui.ErrInvalidPatch, "/ops/0/op", "unknown op", 0, 0}},
		{"remove root", &a2ui.Patch{Ops: []a2ui.Op{{Op: "remove", Path: ""}}}, want{a2ui.ErrInvalidPatch, "/ops/0/path", "remove of the root", 0, 0}},
		{"forbidden token", &a2ui.Patch{Ops: []a2ui.Op{{Op: "add", Path: "/__proto__", Value: json.RawMessage(`1`)}}}, want{a2ui.ErrInvalidPatch, "/ops/0/path", "forbidden", 0, 0}},
		{"value not JSON", &a2ui.Patch{Ops: []a2ui.Op{{Op: "add", Path: "/x", Value: json.RawMessage(`{`)}}}, want{a2ui.ErrInvalidPatch, "/ops/0/value", "invalid JSON", 0, 0}},
		{"empty value", &a2ui.Patch{Ops: []a2ui.Op{{Op: "add", Path: "/x", Value: json.RawMessage{}}}}, want{a2ui.ErrInvalidPatch, "/ops/0/value", "invalid JSON", 0, 0}},
		{"value with a duplicate key", &a2ui.Patch{Ops: []a2ui.Op{{Op: "add", Path: "/x", Value: json.RawMessage(`{"a":{"b":1,"b":2}}`)}}}, want{a2ui.ErrInvalidPatch, "/ops/0/value/a/b", "duplicate key", 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := a2ui.Apply([]byte(base), tt.p)
			checkErr(t, err, tt.want, a2ui.ErrInvalidPatch)
		})
	}

	// The same value added twice is two values: changing one leaves the
	// other alone.
	v := json.RawMessage(`{"id":"n","type":"text","props":{"value":"N"}}`)
	p := &a2ui.Patch{Ops: []a2ui.Op{
		{Op: "add", Path: "/components/-", Value: v},
		{Op: "add", Path: "/components/-", Value: v},
		{Op: "replace", Path: "/components/3/id", Value: json.RawMessage(`"m"`)},
	}}
	_, d, err := a2ui.Apply([]byte(base), p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Components[2].ID != "n" || d.Components[3].ID != "m" {
		t.Fatalf("ids %q %q", d.Components[2].ID, d.Components[3].ID)
	}
}
