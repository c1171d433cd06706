package toolschema_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/toolschema"
)

func TestValidator(t *testing.T) {
	in := []byte(`{"type":"object","required":["msg"],"properties":{"msg":{"type":"string","maxLength":3}}}`)
	out := []byte(`{"type":"object","required":["n"]}`)
	v, err := toolschema.New(in, out)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		doc    string
		input  bool
		reject string // a part of the message; "" accepts
	}{
		{"input ok", `{"msg":"hi"}`, true, ""},
		{"input missing field", `{}`, true, "msg"},
		{"input wrong type", `{"msg":1}`, true, "string"},
		{"input too long", `{"msg":"abcd"}`, true, "maxLength"},
		{"output ok", `{"n":1}`, false, ""},
		{"output missing field", `{"m":1}`, false, "n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := toolschema.Decode([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if tt.input {
				err = v.ValidateInput(doc)
			} else {
				err = v.ValidateOutput(doc)
			}
			switch {
			case tt.reject == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tt.reject != "" && (err == nil || !strings.Contains(err.Error(), tt.reject)):
				t.Fatalf("err = %v, want one naming %q", err, tt.reject)
			}
		})
	}
	if !v.HasInput() || !v.HasOutput() {
		t.Error("HasInput/HasOutput false with both schemas")
	}
	none, err := toolschema.New(nil, []byte("  "))
	if err != nil || none.HasInput() || none.HasOutput() || none.ValidateInput(42) != nil {
		t.Errorf("empty schemas: %v %+v", err, none)
	}
}

func TestInvalidSchemas(t *testing.T) {
	for _, doc := range []string{`{`, `{"type":3}`, `{"$ref":"https://example.com/s.json"}`, `{"$ref":"file:///etc/passwd"}`} {
		_, err := toolschema.New([]byte(doc), nil)
		if !errors.Is(err, toolschema.ErrInvalidSchema) || errcode.Of(err) != "invalid_tool_schema" || !strings.Contains(err.Error(), "input schema") {
			t.Errorf("%s: err = %v", doc, err)
		}
	}
}

func TestDecode(t *testing.T) {
	v, err := toolschema.Decode([]byte(`{"a":12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := v.(map[string]any)["a"]; n.(interface{ String() string }).String() != "12345678901234567890" {
		t.Errorf("number %v not kept exact", n)
	}
	if _, err := toolschema.Decode([]byte(`{} {}`)); err == nil {
		t.Error("two values decoded as one")
	}
}
