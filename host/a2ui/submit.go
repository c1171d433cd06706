package a2ui

import (
	"encoding/json"
	"math"
	"net/mail"
	"sort"
	"strings"
)

var submitErrs = errs{kind: ErrInvalidSubmit}

// Submit is a form submit from a client, in Palyra's shape: the form
// component's id and the values of its fields by field id. ParseSubmit
// reads it; values are strings, float64 numbers and bools.
type Submit struct {
	ComponentID string         `json:"componentId"`
	Values      map[string]any `json:"values"`
}

// ParseSubmit parses data as a form submit: at most MaxSubmitBytes of
// strict JSON (as Validate reads) with exactly the keys componentId (an id
// of [A-Za-z0-9:_-]{1,64}) and values (an object of at most MaxFormFields
// strings of at most MaxString UTF-16 code units, numbers and booleans).
// It does not look at the form; Document.ValidateSubmit does. Errors wrap
// ErrInvalidSubmit and name the JSON Pointer in the submit, e.g.
// "/values/email".
func ParseSubmit(data []byte) (*Submit, error) {
	c := submitErrs
	if len(data) > MaxSubmitBytes {
		return nil, c.limit("", "submit size in bytes", MaxSubmitBytes, len(data))
	}
	tree, err := c.decodeJSON(data)
	if err != nil {
		return nil, err
	}
	m, err := c.object("", tree, "componentId", "values")
	if err != nil {
		return nil, err
	}
	idv, _, err := c.get("", m, "componentId", true)
	if err != nil {
		return nil, err
	}
	s := &Submit{}
	if s.ComponentID, err = c.id("/componentId", idv, MaxComponentID); err != nil {
		return nil, err
	}
	vv, _, err := c.get("", m, "values", true)
	if err != nil {
		return nil, err
	}
	vm, ok := vv.(map[string]any)
	if !ok {
		return nil, c.invalid("/values", "want an object, got %s", kindOf(vv))
	}
	if len(vm) > MaxFormFields {
		return nil, c.limit("/values", "value count", MaxFormFields, len(vm))
	}
	s.Values = make(map[string]any, len(vm))
	for _, k := range sortedKeys(vm) {
		p := ptr("/values", k)
		switch v := vm[k].(type) {
		case string:
			if _, err := c.strValue(p, v, MaxString); err != nil {
				return nil, err
			}
			s.Values[k] = v
		case json.Number:
			s.Values[k] = float(v)
		case bool:
			s.Values[k] = v
		default:
			return nil, c.invalid(p, "want a string, number or boolean, got %s", kindOf(v))
		}
	}
	return s, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValidateSubmit checks a submit against the form it names and returns the
// values to hand to the tool: the submitted values of the form's fields,
// checked and normalized (numbers as float64). A select field that was not
// submitted takes its declared default (the choice the form showed); any
// other field that was not submitted is absent (no default is filled in).
//
// The component must exist and be a form; every value must belong to one
// of its fields; a text or email value is a string of at most MaxString
// UTF-16 code units, and a non-empty email value is a bare address
// (net/mail, no display name or angle brackets); a number value is finite,
// within [Min, Max] and on the grid Min + k·Step within StepTolerance; a
// select value is one of the option values; a checkbox value is a bool. A
// required field must be present, and a required text, email or select
// field non-blank. Errors wrap ErrInvalidSubmit and name the JSON Pointer
// in the submit. Values are checked in sorted key order, then required
// fields in form order.
func (d *Document) ValidateSubmit(s *Submit) (map[string]any, error) {
	c := submitErrs
	if s == nil {
		return nil, c.invalid("", "no submit")
	}
	comp, ok := d.Component(s.ComponentID)
	if !ok {
		return nil, c.invalid("/componentId", "no component %s in surface %s", quote(s.ComponentID), quote(d.Surface))
	}
	form, ok := comp.Props.(*FormProps)
	if !ok {
		return nil, c.invalid("/componentId", "component %s is a %s, not a form", quote(s.ComponentID), comp.Type)
	}
	if len(s.Values) > len(form.Fields) {
		return nil, c.limit("/values", "value count (at most the field count)", len(form.Fields), len(s.Values))
	}
	out := make(map[string]any, len(s.Values))
	for _, k := range sortedKeys(s.Values) {
		p := ptr("/values", k)
		f, ok := form.Field(k)
		if !ok {
			return nil, c.invalid(p, "form %s has no field %s", quote(s.ComponentID), quote(k))
		}
		v, err := submitValue(p, f, s.Values[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	// A select always shows a choice: the one it declares as its default
	// until the user picks another. An omitted select therefore submits
	// that default, as Palyra's renderer does, before the required check.
	for _, f := range form.Fields {
		if _, ok := out[f.ID]; !ok && f.Type == FieldSelect && f.Default != nil {
			out[f.ID] = f.Default
		}
	}
	for _, f := range form.Fields {
		if !f.Required {
			continue
		}
		v, ok := out[f.ID]
		if !ok {
			return nil, c.invalid(ptr("/values", f.ID), "required field %s is missing", quote(f.ID))
		}
		if s, isStr := v.(string); isStr && strings.TrimSpace(s) == "" {
			return nil, c.invalid(ptr("/values", f.ID), "required field %s is blank", quote(f.ID))
		}
	}
	return out, nil
}

// submitValue checks one submitted value against its field.
func submitValue(p string, f *Field, v any) (any, error) {
	c := submitErrs
	switch f.Type {
	case FieldText, FieldEmail, FieldSelect:
		s, err := c.strValue(p, v, MaxString)
		if err != nil {
			return nil, err
		}
		switch {
		case f.Type == FieldEmail && s != "" && !isEmail(s):
			return nil, c.invalid(p, "%s is not an email address", quote(s))
		case f.Type == FieldSelect && !hasOption(f.Options, s):
			return nil, c.invalid(p, "%s is not an option value of field %s", quote(s), quote(f.ID))
		}
		return s, nil
	case FieldNumber:
		n, ok := number(v)
		if !ok {
			return nil, c.invalid(p, "want a finite number, got %s", kindOf(v))
		}
		if n < f.Min || n > f.Max {
			return nil, c.invalid(p, "%v is outside [%v, %v]", n, f.Min, f.Max)
		}
		k := math.Round((n - f.Min) / f.Step)
		if math.Abs(n-(f.Min+k*f.Step)) > StepTolerance {
			return nil, c.invalid(p, "%v is not on the step grid %v + k·%v", n, f.Min, f.Step)
		}
		return n, nil
	case FieldCheckbox:
		b, ok := v.(bool)
		if !ok {
			return nil, c.invalid(p, "want a boolean, got %s", kindOf(v))
		}
		return b, nil
	}
	return nil, c.invalid(p, "field %s has the unknown type %s", quote(f.ID), quote(string(f.Type)))
}

// number reads a finite number from a value of a Submit, which may have
// been built by hand.
func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// isEmail reports whether s is a bare address: local@domain with nothing
// net/mail would strip (a display name, angle brackets, a comment).
func isEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s && strings.Contains(s, "@")
}
