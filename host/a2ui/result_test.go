package a2ui_test

import (
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

func TestReadResult(t *testing.T) {
	shown, err := a2ui.ReadResult([]byte(doc(comp("a", "text", `{"value":"A"}`))), nil)
	if err != nil || shown == nil || shown.Patch != nil || len(shown.Doc.Components) != 1 {
		t.Fatalf("document: %+v, %v", shown, err)
	}
	add := `{"a2ui_update":{"surface":"s","patch":{"v":1,"ops":[{"op":"add","path":"/components/-","value":{"id":"b","type":"text","props":{"value":"B"}}}]}}}`
	for _, tt := range []struct {
		name  string
		out   string
		base  *a2ui.Result
		comps int  // components of the result; -1: no result
		err   want // err.err nil: no error
	}{
		{"plain output", `{"x":1}`, nil, -1, want{}},
		{"update on base", add, shown, 2, want{}},
		{"update without base", add, nil, 1, want{}},
		{"update of another surface", `{"a2ui_update":{"surface":"t","patch":{"v":1,"ops":[{"op":"remove","path":"/components/0"}]}}}`, shown, -1,
			want{a2ui.ErrSurfaceMismatch, "/a2ui_update/surface", `surface "t", the document is on "s"`, 0, 0}},
		{"update that does not apply", `{"a2ui_update":{"surface":"s","patch":{"v":1,"ops":[{"op":"remove","path":"/components/5"}]}}}`, shown, -1,
			want{a2ui.ErrPatchConflict, "/ops/0/path", "remove", 0, 0}},
		{"invalid document", doc(comp("c", "clock", `{}`)), nil, -1, want{a2ui.ErrInvalid, "/components/0/type", "clock", 0, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := a2ui.ReadResult([]byte(tt.out), tt.base)
			if tt.err.err != nil {
				if r != nil {
					t.Fatalf("a result with the error: %+v", r)
				}
				checkErr(t, err, tt.err, tt.err.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.comps < 0 {
				if r != nil {
					t.Fatalf("result %+v for a plain output", r)
				}
				return
			}
			if r == nil || r.Patch == nil || len(r.Doc.Components) != tt.comps {
				t.Fatalf("result %+v", r)
			}
			if again, err := a2ui.Validate(r.JSON); err != nil || len(again.Components) != tt.comps {
				t.Fatalf("result JSON %s: %v", r.JSON, err)
			}
		})
	}
	if len(shown.Doc.Components) != 1 {
		t.Fatal("the base was modified")
	}
}
