package a2ui_test

import (
	"errors"
	"fmt"

	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/errcode"
)

func ExampleValidate() {
	out := []byte(`{"v":1,"surface":"sales","components":[
		{"id":"title","type":"text","props":{"value":"Q3 sales"}},
		{"id":"chart","type":"chart","props":{"kind":"bar","series":[{"label":"EU","value":120},{"label":"US","value":180}]}}]}`)
	if !a2ui.IsDocument(out) {
		return
	}
	doc, err := a2ui.Validate(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range doc.Components {
		fmt.Println(c.ID, c.Type)
	}
	chart := doc.Components[1].Props.(*a2ui.ChartProps)
	fmt.Println(chart.Kind, chart.Series[1].Value)

	// A document with a field type the renderer does not have is refused,
	// not repaired.
	_, err = a2ui.Validate([]byte(`{"v":1,"surface":"s","components":[
		{"id":"f","type":"form","props":{"fields":[{"id":"when","type":"date"}]}}]}`))
	fmt.Println(err)
	fmt.Println(errcode.Of(err), errors.Is(err, a2ui.ErrInvalid))
	// Output:
	// title text
	// chart chart
	// bar 180
	// a2ui: /components/0/props/fields/0/type: unknown field type "date" (want text, email, number, select, checkbox)
	// a2ui_invalid true
}

func ExampleValidate_limit() {
	_, err := a2ui.Validate([]byte(`{"v":1,"surface":"s","components":[
		{"id":"t","type":"table","props":{"columns":["a","b"],"rows":[["1","2","3"]]}}]}`))
	var e *a2ui.Error
	if errors.As(err, &e) {
		fmt.Println(e.Path, e.Limit, e.Seen)
	}
	fmt.Println(errcode.Of(err), errors.Is(err, a2ui.ErrLimit), errors.Is(err, a2ui.ErrInvalid))
	// Output:
	// /components/0/props/rows/0 2 3
	// a2ui_limit_exceeded true true
}

func ExampleDocument_ValidateSubmit() {
	doc, err := a2ui.Validate([]byte(`{"v":1,"surface":"order","components":[
		{"id":"order","type":"form","props":{"title":"Order","fields":[
			{"id":"email","label":"Email","type":"email","required":true},
			{"id":"qty","label":"Quantity","type":"number","min":1,"max":10,"step":1,"default":1},
			{"id":"gift","label":"Gift wrap","type":"checkbox"}]}}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	// What the console posts back when the user submits the form.
	s, err := a2ui.ParseSubmit([]byte(`{"componentId":"order","values":{"email":"jane@example.org","qty":3}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	values, err := doc.ValidateSubmit(s)
	fmt.Println(values, err)

	s, _ = a2ui.ParseSubmit([]byte(`{"componentId":"order","values":{"email":"jane@example.org","qty":2.5}}`))
	_, err = doc.ValidateSubmit(s)
	fmt.Println(err)
	// Output:
	// map[email:jane@example.org qty:3] <nil>
	// a2ui: /values/qty: 2.5 is not on the step grid 1 + k·1
}

func ExampleApply() {
	doc := []byte(`{"v":1,"surface":"s","components":[]}`)
	p, err := a2ui.ParsePatch([]byte(`{"v":1,"ops":[
		{"op":"add","path":"/components/-","value":{"id":"status","type":"text","props":{"value":"working"}}},
		{"op":"replace","path":"/components/0/props/tone","value":"muted"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _, err = a2ui.Apply(doc, p)
	fmt.Println(err)

	p, _ = a2ui.ParsePatch([]byte(`{"v":1,"ops":[
		{"op":"add","path":"/components/-","value":{"id":"status","type":"text","props":{"value":"working"}}},
		{"op":"add","path":"/components/0/props/tone","value":"muted"}]}`))
	out, d, err := a2ui.Apply(doc, p)
	fmt.Println(string(out), len(d.Components), err)
	// Output:
	// a2ui: /ops/1/path: replace "/components/0/props/tone": no key "tone"
	// {"components":[{"id":"status","props":{"tone":"muted","value":"working"},"type":"text"}],"surface":"s","v":1} 1 <nil>
}

func ExampleIsDocument() {
	fmt.Println(a2ui.IsDocument([]byte(`{"v":1,"surface":"s","components":[]}`)))
	fmt.Println(a2ui.IsDocument([]byte(`{"temperature":21.5}`)))
	// Output:
	// true
	// false
}
