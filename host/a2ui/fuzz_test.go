package a2ui_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

// expectError fails unless err is an *Error that wraps one of sentinels.
func expectError(t *testing.T, err error, sentinels ...error) {
	t.Helper()
	var e *a2ui.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *a2ui.Error", err, err)
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %v wraps none of %v", err, sentinels)
}

// FuzzValidate: Validate and IsDocument never panic; every error is an
// *Error wrapping ErrInvalid; a valid document is seen by IsDocument, and
// its canonical form validates back to an equal document (unless that form
// is over MaxDocumentBytes: escaping and filled-in defaults can make it
// longer than the input) and is a fixed point.
func FuzzValidate(f *testing.F) {
	fixture, err := os.ReadFile(knownGood)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	for _, d := range goodDocs {
		f.Add([]byte(d))
	}
	for _, d := range badDocs {
		if len(d.data) < 4096 {
			f.Add([]byte(d.data))
		}
	}
	f.Add([]byte(formDoc))
	f.Fuzz(func(t *testing.T, data []byte) {
		isDoc := a2ui.IsDocument(data)
		d, err := a2ui.Validate(data)
		if err != nil {
			expectError(t, err, a2ui.ErrInvalid)
			return
		}
		if !isDoc {
			t.Fatalf("IsDocument is false for a valid document: %q", data)
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		back, err := a2ui.Validate(out)
		if len(out) > a2ui.MaxDocumentBytes {
			expectError(t, err, a2ui.ErrLimit)
			return
		}
		if err != nil {
			t.Fatalf("Validate(Marshal(d)): %v\n%s", err, out)
		}
		if !reflect.DeepEqual(d, back) {
			t.Fatalf("round trip changed the document\n%#v\n%#v", d, back)
		}
		again, _ := json.Marshal(back)
		if string(again) != string(out) {
			t.Fatalf("canonical form is not a fixed point\n%s\n%s", out, again)
		}
	})
}

// FuzzParsePatch: ParsePatch never panics; every error is an *Error
// wrapping ErrInvalidPatch; a parsed patch has a value exactly for add and
// replace, and applies to a document without a panic or an unexpected
// kind of error.
func FuzzParsePatch(f *testing.F) {
	for _, p := range badPatches {
		if len(p.data) < 4096 {
			f.Add([]byte(p.data))
		}
	}
	f.Add([]byte(`{"v":1,"ops":[{"op":"add","path":"/components/-","value":{"id":"n","type":"text","props":{"value":"N"}}}]}`))
	f.Add([]byte(`{"v":1,"ops":[{"op":"replace","path":"/components/1/props/items/0","value":[1,{"a":null}]},{"op":"remove","path":"/components/0"}]}`))
	f.Add([]byte(`{"v":1,"ops":[{"op":"replace","path":"","value":{"v":1,"surface":"s","components":[]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := a2ui.ParsePatch(data)
		if err != nil {
			expectError(t, err, a2ui.ErrInvalidPatch)
			return
		}
		if len(p.Ops) == 0 || len(p.Ops) > a2ui.MaxPatchOps {
			t.Fatalf("%d ops", len(p.Ops))
		}
		for _, o := range p.Ops {
			if (o.Op == "remove") != (o.Value == nil) || (o.Value != nil && !json.Valid(o.Value)) {
				t.Fatalf("op %+v (value %q)", o, o.Value)
			}
		}
		applyChecked(t, []byte(base), p)
	})
}

// FuzzApply: Apply never panics on any document and patch; every error is
// an *Error of the documented kinds; a result is a valid document whose
// JSON Validate reads as the returned Document.
func FuzzApply(f *testing.F) {
	f.Add([]byte(base), []byte(`{"v":1,"ops":[{"op":"add","path":"/components/-","value":{"id":"n","type":"text","props":{"value":"N"}}}]}`))
	f.Add([]byte(`{"v":1,"surface":"s","components":[]}`), []byte(`{"v":1,"ops":[{"op":"add","path":"/components/0","value":{"id":"n","type":"markdown","props":{}}}]}`))
	f.Add([]byte(goodDocs["all types"]), []byte(`{"v":1,"ops":[{"op":"remove","path":"/components/4/props/fields/2"},{"op":"replace","path":"/components/5/props/series/0/value","value":7}]}`))
	f.Add([]byte(base), []byte(`{"v":1,"ops":[{"op":"replace","path":"/components/99","value":{}}]}`))
	f.Add([]byte(`[[[1]]]`), []byte(`{"v":1,"ops":[{"op":"add","path":"/0/0/-","value":2}]}`))
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		p, err := a2ui.ParsePatch(patch)
		if err != nil {
			return
		}
		applyChecked(t, doc, p)
	})
}

func applyChecked(t *testing.T, doc []byte, p *a2ui.Patch) {
	t.Helper()
	out, d, err := a2ui.Apply(doc, p)
	if err != nil {
		expectError(t, err, a2ui.ErrInvalid, a2ui.ErrPatchConflict, a2ui.ErrInvalidPatch)
		return
	}
	if !a2ui.IsDocument(out) {
		t.Fatalf("IsDocument is false for a patched document: %s", out)
	}
	back, err := a2ui.Validate(out)
	if err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("the patched JSON does not give the returned document: %v", err)
	}
}

// FuzzParseSubmit: ParseSubmit and ValidateSubmit never panic; every error
// is an *Error wrapping ErrInvalidSubmit; normalized values validate again
// to themselves.
func FuzzParseSubmit(f *testing.F) {
	d, err := a2ui.Validate([]byte(formDoc))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range badSubmits {
		if len(s.data) < 4096 {
			f.Add([]byte(s.data))
		}
	}
	f.Add([]byte(submit("")))
	f.Add([]byte(submit(`"note":"","email":"a.b+c@sub.example.org","ratio":-0.3,"big":123456.789012,"color":"red","news":true`)))
	f.Add([]byte(submit(`"email":"Jane <jane@example.org>"`)))
	f.Add([]byte(submit(`"ratio":0.05`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := a2ui.ParseSubmit(data)
		if err != nil {
			expectError(t, err, a2ui.ErrInvalidSubmit)
			return
		}
		values, err := d.ValidateSubmit(s)
		if err != nil {
			expectError(t, err, a2ui.ErrInvalidSubmit)
			return
		}
		again, err := d.ValidateSubmit(&a2ui.Submit{ComponentID: s.ComponentID, Values: values})
		if err != nil || !reflect.DeepEqual(again, values) {
			t.Fatalf("normalized values do not validate to themselves: %v\n%#v\n%#v", err, values, again)
		}
	})
}
