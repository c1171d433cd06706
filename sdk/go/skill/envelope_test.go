package skill

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// jsonDecode is the reference: encoding/json into an inputDocument.
func jsonDecode(b []byte) (*inputDocument, error) {
	var doc inputDocument
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

func TestParseInputDocumentMatchesEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		`null`,
		` {"abi":"palyra.skills.abi.v1","invocation_id":"inv-1","skill_id":"acme.echo","tool_id":"acme.echo","input":{"text":"hello"},"grants":{"http":[],"secrets":[],"storage":[],"channels":[]},"deadline_unix_ms":1700000000000} `,
		`{"tool_id":"t","input":null}`,
		`{"tool_id":"t","input":[1,-2.5e+3,"x",true,false,null,{"a":{"b":[{}]}}]}`,
		`{"tool_id":"t","input":"just a string"}`,
		`{"tool_id":"t","input":0}`,
		`{"grants":{"http":[{"handle":3,"host":"api.example.com"},{"handle":4,"host":"*.example.org"}],"secrets":[{"handle":7,"key":"skill:acme.x/token"}],"storage":[{"handle":9,"prefix":"counters"}],"channels":[{"handle":11,"channel":"alerts"}]}}`,
		`{"grants":{"http":null,"secrets":[{"key":null,"handle":null}]}}`,
		`{"grants":{"http":[{"handle":1,"host":"a","future":{"x":[1]}}],"future":[1,2]}}`,
		`{"tool_id":"first","tool_id":"second"}`,
		`{"future_member":{"deep":[[[]]]},"tool_id":"t"}`,
		`{"tool_id":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u20AC \ud83d\ude00 end"}`,
		`{"tool_id":"lone \ud800 surrogate \udc00 x \ud800\u0041"}`,
		"{\"tool_id\":\"utf8 é and invalid \xff\xfe bytes\"}",
		`{"deadline_unix_ms":-9223372036854775808}`,
		`{"deadline_unix_ms":null,"abi":null}`,
		"{\n\t\"tool_id\" :\r\n \"t\" ,\n\"input\" : { } }",
	} {
		want, err := jsonDecode([]byte(doc))
		if err != nil {
			t.Fatalf("reference rejects %s: %v", doc, err)
		}
		got, err := parseInputDocument([]byte(doc))
		if err != nil {
			t.Errorf("parseInputDocument(%s): %v", doc, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parseInputDocument(%s)\n got %+v\nwant %+v", doc, got, want)
		}
	}
}

func TestParseInputDocumentRejects(t *testing.T) {
	for _, c := range []struct{ doc, msg string }{
		{``, "want an object at byte 0"},
		{`[]`, "want an object at byte 0"},
		{`{"tool_id":"t"} x`, "data after the document at byte 16"},
		{`{"tool_id":"t"`, "unterminated object"},
		{`{"tool_id" "t"}`, "want ':' after a member name at byte 11"},
		{`{"tool_id":"t",}`, "want a string at byte 15"},
		{`{"tool_id":"t" "x":1}`, "want ',' or '}' in an object"},
		{`{"tool_id":5}`, "want a string at byte 11"},
		{`{"tool_id":"a` + "\x01" + `"}`, "control character in a string"},
		{`{"tool_id":"\x"}`, "invalid escape in a string at byte 12"},
		{`{"tool_id":"\u12"}`, "invalid \\u escape"},
		{`{"tool_id":"abc`, "unterminated string"},
		{`{"deadline_unix_ms":1.5}`, "1.5 is not an int64 at byte 20"},
		{`{"deadline_unix_ms":9223372036854775808}`, "is not an int64"},
		{`{"deadline_unix_ms":01}`, "want ',' or '}' in an object"},
		{`{"deadline_unix_ms":-}`, "invalid number"},
		{`{"grants":{"http":[{"handle":2147483648,"host":"a"}]}}`, "2147483648 is not an int32"},
		{`{"grants":{"http":{}}}`, "want an array"},
		{`{"grants":{"http":[1]}}`, "want an object"},
		{`{"grants":{"http":[{"handle":1}`, "unterminated"},
		{`{"input":[1,]}`, "invalid value"},
		{`{"input":[1 2]}`, "want ',' or ']' in an array"},
		{`{"input":tru}`, "invalid value"},
		{`{"input":1.}`, "invalid number"},
		{`{"input":1e}`, "invalid number"},
		{`{"input":` + strings.Repeat("[", maxEnvelopeDepth+1), "nested deeper than 10000"},
	} {
		_, err := parseInputDocument([]byte(c.doc))
		var ee *envelopeError
		if !errors.As(err, &ee) {
			t.Errorf("parseInputDocument(%q) = %v, want an *envelopeError", c.doc, err)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("parseInputDocument(%q) = %q, want it to contain %q", c.doc, err, c.msg)
		}
		if json.Valid([]byte(c.doc)) && !strings.Contains(c.msg, "not an int") && !strings.Contains(c.msg, "want a") && !strings.Contains(c.msg, "nested") {
			t.Errorf("%q is valid JSON but the test expects a syntax error", c.doc)
		}
	}
}

// FuzzParseInputDocument checks that the decoder never panics, accepts
// nothing that is not JSON, and agrees with encoding/json on every
// document encoding/json writes.
func FuzzParseInputDocument(f *testing.F) {
	f.Add([]byte(`{"abi":"palyra.skills.abi.v1","tool_id":"t","input":{"a":[1,"x"]},"grants":{"http":[{"handle":1,"host":"h"}]},"deadline_unix_ms":5}`), "t", "h\u00e9\U0001F600", int64(5), int32(1))
	f.Add([]byte(`{"input":"\ud800"}`), "", "\xff", int64(-1), int32(-7))
	f.Fuzz(func(t *testing.T, raw []byte, tool, host string, deadline int64, handle int32) {
		if doc, err := parseInputDocument(raw); err == nil {
			if !json.Valid(raw) {
				t.Fatalf("accepted invalid JSON %q", raw)
			}
			if doc.Input != nil && !json.Valid(doc.Input) {
				t.Fatalf("input %q of %q is not JSON", doc.Input, raw)
			}
		}
		in := json.RawMessage(`null`)
		if json.Valid(raw) {
			in = raw
		}
		want := inputDocument{ABI: "palyra.skills.abi.v1", ToolID: tool, SkillID: host, Input: in, DeadlineUnixMS: deadline,
			Grants: Grants{HTTP: []HTTPGrant{{Handle: handle, Host: host}}, Channels: []ChannelGrant{{Handle: handle, Channel: tool}}}}
		b, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := jsonDecode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseInputDocument(b)
		if err != nil {
			t.Fatalf("parseInputDocument(%s): %v", b, err)
		}
		// Compact both inputs: encoding/json keeps the raw bytes too, so
		// they are equal as bytes as well.
		if !reflect.DeepEqual(got, ref) {
			t.Fatalf("parseInputDocument(%s)\n got %+v\nwant %+v", b, got, ref)
		}
	})
}
