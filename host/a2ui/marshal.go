package a2ui

import (
	"encoding/json"
)

// MarshalJSON writes d in canonical form: {"v":1,"surface","components",
// "experimental"?}, props under their canonical keys (value, submit_label,
// snake_case governance), empty lists as [] and absent optional props
// omitted. It is the form sdk/go/a2ui writes. For a Document that Validate
// returned, Validate accepts the output and returns an equal Document,
// unless the output is over MaxDocumentBytes: HTML-safe escaping ("<" is
// written \u003c, as encoding/json and the SDK write it) and filled-in
// defaults can make it longer than the input was.
func (d *Document) MarshalJSON() ([]byte, error) {
	comps := d.Components
	if comps == nil {
		comps = []Component{}
	}
	return json.Marshal(struct {
		V            int           `json:"v"`
		Surface      string        `json:"surface"`
		Components   []Component   `json:"components"`
		Experimental *Experimental `json:"experimental,omitempty"`
	}{Version, d.Surface, comps, d.Experimental})
}

// MarshalJSON writes the component as {"id","type","props"}.
func (c Component) MarshalJSON() ([]byte, error) {
	var props any = struct{}{}
	switch p := c.Props.(type) {
	case *ListProps:
		if p != nil && p.Items == nil {
			props = &ListProps{Ordered: p.Ordered, Items: []any{}}
		} else {
			props = p
		}
	case *TableProps:
		if p != nil && p.Rows == nil {
			props = &TableProps{Columns: p.Columns, Rows: [][]any{}}
		} else {
			props = p
		}
	case *FormProps:
		if p != nil && p.Fields == nil {
			props = &FormProps{Title: p.Title, SubmitLabel: p.SubmitLabel, Fields: []Field{}}
		} else {
			props = p
		}
	case *ChartProps:
		if p != nil && p.Series == nil {
			props = &ChartProps{Title: p.Title, Kind: p.Kind, Series: []Point{}}
		} else {
			props = p
		}
	case nil:
	default:
		props = p
	}
	return json.Marshal(struct {
		ID    string `json:"id"`
		Type  Type   `json:"type"`
		Props any    `json:"props"`
	}{c.ID, c.Type, props})
}

// MarshalJSON writes the field with the keys of its type only, as
// sdk/go/a2ui does: placeholder for text and email, min, max and step for
// number, options for select.
func (f Field) MarshalJSON() ([]byte, error) {
	m := map[string]any{"id": f.ID, "label": f.Label, "type": f.Type}
	if f.Hint != "" {
		m["hint"] = f.Hint
	}
	if f.Required {
		m["required"] = true
	}
	if f.Default != nil {
		m["default"] = f.Default
	}
	switch f.Type {
	case FieldText, FieldEmail:
		if f.Placeholder != "" {
			m["placeholder"] = f.Placeholder
		}
	case FieldNumber:
		m["min"], m["max"], m["step"] = f.Min, f.Max, f.Step
	case FieldSelect:
		opts := f.Options
		if opts == nil {
			opts = []Option{}
		}
		m["options"] = opts
	}
	return json.Marshal(m)
}
