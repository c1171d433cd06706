package a2ui_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

// formDoc has a text component "t" and a form "f" of every field type.
var formDoc = doc(txt("t", "Order"), comp("f", "form", `{"fields":[`+
	`{"id":"name","type":"text","required":true},`+
	`{"id":"note","type":"text"},`+
	`{"id":"email","type":"email"},`+
	`{"id":"email2","type":"email","required":true},`+
	`{"id":"qty","type":"number","min":1,"max":10,"step":0.5,"required":true},`+
	`{"id":"ratio","type":"number","min":-1,"max":1,"step":0.1},`+
	`{"id":"big","type":"number","min":-1000000,"max":1000000,"step":0.000001},`+
	`{"id":"size","type":"select","required":true,"options":[{"label":"S","value":"s"},{"label":"L","value":"l"}]},`+
	`{"id":"color","type":"select","options":[{"label":"Red","value":"red"}]},`+
	`{"id":"ok","type":"checkbox","required":true},`+
	`{"id":"news","type":"checkbox"}]}`))

// submit returns a submit of form "f" with the required values and extra.
func submit(extra string) string {
	v := `"name":"Jane","email2":"jane@example.org","qty":2,"size":"l","ok":false`
	if extra != "" {
		v += "," + extra
	}
	return `{"componentId":"f","values":{` + v + `}}`
}

var badSubmits = []struct {
	name string
	data string
	want want
}{
	{"too large", `{"componentId":"f","values":{"name":"` + s("x", a2ui.MaxSubmitBytes) + `"}}`, want{a2ui.ErrLimit, "", "submit size in bytes", 65536, 65536 + 40}},
	{"not JSON", `{"componentId":`, want{a2ui.ErrInvalidSubmit, "", "invalid JSON", 0, 0}},
	{"array", `[]`, want{a2ui.ErrInvalidSubmit, "", "want an object", 0, 0}},
	{"unknown key", `{"componentId":"f","values":{},"action":"x"}`, want{a2ui.ErrInvalidSubmit, "/action", "unknown key (want componentId, values)", 0, 0}},
	{"snake_case id", `{"component_id":"f","values":{}}`, want{a2ui.ErrInvalidSubmit, "/component_id", "unknown key", 0, 0}},
	{"missing componentId", `{"values":{}}`, want{a2ui.ErrInvalidSubmit, "/componentId", "required key is missing", 0, 0}},
	{"componentId not an id", `{"componentId":"f f","values":{}}`, want{a2ui.ErrInvalidSubmit, "/componentId", "has the character ' '", 0, 0}},
	{"componentId 65", `{"componentId":"` + s("f", 65) + `","values":{}}`, want{a2ui.ErrLimit, "/componentId", "length", 64, 65}},
	{"missing values", `{"componentId":"f"}`, want{a2ui.ErrInvalidSubmit, "/values", "required key is missing", 0, 0}},
	{"values array", `{"componentId":"f","values":[]}`, want{a2ui.ErrInvalidSubmit, "/values", "want an object, got array", 0, 0}},
	{"value null", `{"componentId":"f","values":{"a":1,"b":null}}`, want{a2ui.ErrInvalidSubmit, "/values/b", "want a string, number or boolean, got null", 0, 0}},
	{"value object", `{"componentId":"f","values":{"a/b":{}}}`, want{a2ui.ErrInvalidSubmit, "/values/a~1b", "got object", 0, 0}},
	{"value 513", `{"componentId":"f","values":{"name":"` + s("é", 513) + `"}}`, want{a2ui.ErrLimit, "/values/name", "length", 512, 513}},
	{"33 values", `{"componentId":"f","values":{` + repeat(33, func(i int) string { return fmt.Sprintf(`"f%d":1`, i) }) + `}}`, want{a2ui.ErrLimit, "/values", "value count", 32, 33}},
	{"duplicate value", `{"componentId":"f","values":{"a":1,"a":2}}`, want{a2ui.ErrInvalidSubmit, "/values/a", "duplicate key", 0, 0}},
}

func TestParseSubmitBad(t *testing.T) {
	for _, tt := range badSubmits {
		t.Run(tt.name, func(t *testing.T) {
			s, err := a2ui.ParseSubmit([]byte(tt.data))
			if s != nil {
				t.Fatal("a submit came back with the error")
			}
			checkErr(t, err, tt.want, a2ui.ErrInvalidSubmit)
		})
	}
}

func TestValidateSubmit(t *testing.T) {
	d, err := a2ui.Validate([]byte(formDoc))
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]any{"name": "Jane", "email2": "jane@example.org", "qty": 2.0, "size": "l", "ok": false}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range required {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name   string
		data   string
		values map[string]any // the normalized values, or nil for an error
		want   want
	}{
		{"required only", submit(""), required, want{}},
		{"every field", submit(`"note":"","email":"a.b+c@sub.example.org","ratio":-0.3,"big":123456.789012,"color":"red","news":true`),
			with("note", "", "email", "a.b+c@sub.example.org", "ratio", -0.3, "big", 123456.789012, "color", "red", "news", true), want{}},
		{"empty optional email", submit(`"email":""`), with("email", ""), want{}},
		{"number bounds and grid", `{"componentId":"f","values":{"name":"J","email2":"j@e.org","qty":10,"size":"s","ok":true,"ratio":1,"big":-1000000}}`,
			map[string]any{"name": "J", "email2": "j@e.org", "qty": 10.0, "size": "s", "ok": true, "ratio": 1.0, "big": -1e6}, want{}},
		{"grid with float error", submit(`"ratio":0.7`), with("ratio", 0.7), want{}},

		{"no such component", `{"componentId":"g","values":{}}`, nil, want{a2ui.ErrInvalidSubmit, "/componentId", `no component "g" in surface "s"`, 0, 0}},
		{"not a form", `{"componentId":"t","values":{}}`, nil, want{a2ui.ErrInvalidSubmit, "/componentId", `component "t" is a text, not a form`, 0, 0}},
		{"unknown field", submit(`"age":3`), nil, want{a2ui.ErrInvalidSubmit, "/values/age", `form "f" has no field "age"`, 0, 0}},
		{"text number", submit(`"note":3`), nil, want{a2ui.ErrInvalidSubmit, "/values/note", "want a string, got number", 0, 0}},
		{"email with a name", submit(`"email":"Jane <jane@example.org>"`), nil, want{a2ui.ErrInvalidSubmit, "/values/email", "not an email address", 0, 0}},
		{"email without @", submit(`"email":"jane"`), nil, want{a2ui.ErrInvalidSubmit, "/values/email", `"jane" is not an email address`, 0, 0}},
		{"email in brackets", submit(`"email":"<jane@example.org>"`), nil, want{a2ui.ErrInvalidSubmit, "/values/email", "not an email address", 0, 0}},
		{"email with a comment", submit(`"email":"jane@example.org (J)"`), nil, want{a2ui.ErrInvalidSubmit, "/values/email", "not an email address", 0, 0}},
		{"two emails", submit(`"email":"a@b.org, c@d.org"`), nil, want{a2ui.ErrInvalidSubmit, "/values/email", "not an email address", 0, 0}},
		{"email number", submit(`"email":1`), nil, want{a2ui.ErrInvalidSubmit, "/values/email", "want a string", 0, 0}},
		{"number string", submit(`"ratio":"0.5"`), nil, want{a2ui.ErrInvalidSubmit, "/values/ratio", "want a finite number, got string", 0, 0}},
		{"number below min", submit(`"ratio":-1.1`), nil, want{a2ui.ErrInvalidSubmit, "/values/ratio", "-1.1 is outside [-1, 1]", 0, 0}},
		{"number above max", `{"componentId":"f","values":{"name":"J","email2":"j@e.org","qty":10.5,"size":"s","ok":true}}`, nil, want{a2ui.ErrInvalidSubmit, "/values/qty", "10.5 is outside [1, 10]", 0, 0}},
		{"number off grid", submit(`"ratio":0.05`), nil, want{a2ui.ErrInvalidSubmit, "/values/ratio", "0.05 is not on the step grid -1 + k·0.1", 0, 0}},
		{"number off a fine grid", submit(`"big":0.0000005`), nil, want{a2ui.ErrInvalidSubmit, "/values/big", "not on the step grid", 0, 0}},
		{"select not an option", submit(`"color":"blue"`), nil, want{a2ui.ErrInvalidSubmit, "/values/color", `"blue" is not an option value of field "color"`, 0, 0}},
		{"select bool", submit(`"color":true`), nil, want{a2ui.ErrInvalidSubmit, "/values/color", "want a string, got boolean", 0, 0}},
		{"checkbox string", submit(`"news":"on"`), nil, want{a2ui.ErrInvalidSubmit, "/values/news", "want a boolean, got string", 0, 0}},
		{"required missing", `{"componentId":"f","values":{"name":"J","email2":"j@e.org","qty":1,"size":"s"}}`, nil, want{a2ui.ErrInvalidSubmit, "/values/ok", `required field "ok" is missing`, 0, 0}},
		{"required blank", `{"componentId":"f","values":{"name":" ","email2":"j@e.org","qty":1,"size":"s","ok":true}}`, nil, want{a2ui.ErrInvalidSubmit, "/values/name", `required field "name" is blank`, 0, 0}},
		{"required email empty", `{"componentId":"f","values":{"name":"J","email2":"","qty":1,"size":"s","ok":true}}`, nil, want{a2ui.ErrInvalidSubmit, "/values/email2", "is blank", 0, 0}},
		{"first error in key order", submit(`"color":"blue","news":"on"`), nil, want{a2ui.ErrInvalidSubmit, "/values/color", "not an option value", 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := a2ui.ParseSubmit([]byte(tt.data))
			if err != nil {
				t.Fatalf("ParseSubmit: %v", err)
			}
			values, err := d.ValidateSubmit(s)
			if tt.values == nil {
				if values != nil {
					t.Fatal("values came back with the error")
				}
				checkErr(t, err, tt.want, a2ui.ErrInvalidSubmit)
				return
			}
			if err != nil {
				t.Fatalf("ValidateSubmit: %v", err)
			}
			if !reflect.DeepEqual(values, tt.values) {
				t.Fatalf("values = %#v\nwant %#v", values, tt.values)
			}
		})
	}
}

// TestValidateSubmitHandBuilt: a Submit built in Go, not parsed, is held
// to the same rules, with Go number types accepted as numbers.
func TestValidateSubmitHandBuilt(t *testing.T) {
	d, err := a2ui.Validate([]byte(formDoc))
	if err != nil {
		t.Fatal(err)
	}
	values, err := d.ValidateSubmit(&a2ui.Submit{ComponentID: "f", Values: map[string]any{"name": "J", "email2": "j@e.org", "qty": 3, "size": "s", "ok": true, "ratio": int64(0)}})
	if err != nil {
		t.Fatal(err)
	}
	if values["qty"] != 3.0 || values["ratio"] != 0.0 {
		t.Fatalf("numbers not normalized: %#v", values)
	}
	_, err = d.ValidateSubmit(nil)
	checkErr(t, err, want{a2ui.ErrInvalidSubmit, "", "no submit", 0, 0}, a2ui.ErrInvalidSubmit)
	_, err = d.ValidateSubmit(&a2ui.Submit{ComponentID: "f", Values: map[string]any{"qty": []int{1}}})
	checkErr(t, err, want{a2ui.ErrInvalidSubmit, "/values/qty", "want a finite number", 0, 0}, a2ui.ErrInvalidSubmit)
	many := map[string]any{}
	for i := range 12 {
		many[fmt.Sprint("x", i)] = true
	}
	_, err = d.ValidateSubmit(&a2ui.Submit{ComponentID: "f", Values: many})
	checkErr(t, err, want{a2ui.ErrLimit, "/values", "value count", 11, 12}, a2ui.ErrInvalidSubmit)
}

// TestValidateSubmitSelectDefault: a select the submit omits takes the
// default the form declares, before the required check; a submitted
// value wins over the default; a select without a default and other
// field types stay absent.
func TestValidateSubmitSelectDefault(t *testing.T) {
	d, err := a2ui.Validate([]byte(doc(comp("f", "form", `{"fields":[`+
		`{"id":"ship","type":"select","required":true,"default":"std","options":[{"label":"Standard","value":"std"},{"label":"Express","value":"exp"}]},`+
		`{"id":"gift","type":"select","default":"no","options":[{"label":"No","value":"no"},{"label":"Yes","value":"yes"}]},`+
		`{"id":"color","type":"select","options":[{"label":"Red","value":"red"}]},`+
		`{"id":"note","type":"text","default":"hello"},`+
		`{"id":"news","type":"checkbox","default":true}]}`))))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values string
		want   map[string]any
	}{
		{"nothing submitted", `{}`, map[string]any{"ship": "std", "gift": "no"}},
		{"a submitted choice wins", `{"ship":"exp","color":"red"}`, map[string]any{"ship": "exp", "gift": "no", "color": "red"}},
		{"every field", `{"ship":"exp","gift":"yes","color":"red","note":"x","news":false}`,
			map[string]any{"ship": "exp", "gift": "yes", "color": "red", "note": "x", "news": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := a2ui.ParseSubmit([]byte(`{"componentId":"f","values":` + tt.values + `}`))
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.ValidateSubmit(s)
			if err != nil {
				t.Fatalf("ValidateSubmit: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("values = %#v\nwant %#v", got, tt.want)
			}
		})
	}
	// A submitted value that is not an option is still refused, default
	// or not.
	s, err := a2ui.ParseSubmit([]byte(`{"componentId":"f","values":{"ship":"drone"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.ValidateSubmit(s)
	checkErr(t, err, want{a2ui.ErrInvalidSubmit, "/values/ship", `"drone" is not an option value of field "ship"`, 0, 0}, a2ui.ErrInvalidSubmit)
}
