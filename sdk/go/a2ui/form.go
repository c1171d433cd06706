package a2ui

import (
	"encoding/json"
	"fmt"
	"math"
)

// FormProps are the props of a form component. The client reports a submit
// as {componentId, values: {<field id>: string|number|boolean}}.
type FormProps struct {
	// Title defaults to "Form" in the renderer.
	Title string `json:"title,omitempty"`
	// SubmitLabel defaults to "Submit" in the renderer.
	SubmitLabel string  `json:"submit_label,omitempty"`
	Fields      []Field `json:"fields"`
}

// Form returns a form component.
func Form(id, title, submitLabel string, fields ...Field) Component {
	if fields == nil {
		fields = []Field{}
	}
	return Component{ID: id, Type: TypeForm, Props: FormProps{Title: title, SubmitLabel: submitLabel, Fields: fields}}
}

// FieldType is the type of a form field.
type FieldType string

// The field types.
const (
	FieldText     FieldType = "text"
	FieldEmail    FieldType = "email"
	FieldNumber   FieldType = "number"
	FieldSelect   FieldType = "select"
	FieldCheckbox FieldType = "checkbox"
)

// Field is one form field. Only the props of its Type are encoded:
// Placeholder for text and email, Min/Max/Step for number, Options for
// select. Default must suit the type: a string for text, email and select
// (one of the option values), a number in [Min, Max] for number, a bool for
// checkbox.
type Field struct {
	ID          string
	Label       string
	Type        FieldType
	Hint        string
	Required    bool
	Default     any
	Placeholder string
	Min         float64
	Max         float64
	Step        float64
	Options     []Option
}

// Option is one choice of a select field.
type Option struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// TextField returns a text field.
func TextField(id, label string) Field { return Field{ID: id, Label: label, Type: FieldText} }

// EmailField returns an email field.
func EmailField(id, label string) Field { return Field{ID: id, Label: label, Type: FieldEmail} }

// NumberField returns a number field over [min, max] in steps of step.
func NumberField(id, label string, min, max, step float64) Field {
	return Field{ID: id, Label: label, Type: FieldNumber, Min: min, Max: max, Step: step}
}

// SelectField returns a select field.
func SelectField(id, label string, options ...Option) Field {
	return Field{ID: id, Label: label, Type: FieldSelect, Options: options}
}

// CheckboxField returns a checkbox field.
func CheckboxField(id, label string) Field { return Field{ID: id, Label: label, Type: FieldCheckbox} }

// MarshalJSON encodes the field with the props of its type.
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

func (FormProps) componentType() Type { return TypeForm }

func (p FormProps) check(at string) error {
	if err := maxLen(at, "form title length", p.Title, MaxString); err != nil {
		return err
	}
	if err := maxLen(at, "submit label length", p.SubmitLabel, MaxSubmitLabel); err != nil {
		return err
	}
	if len(p.Fields) > MaxFormFields {
		return &LimitError{At: at, Limit: "form fields", Max: MaxFormFields, Size: len(p.Fields)}
	}
	seen := make(map[string]int, len(p.Fields))
	for i, f := range p.Fields {
		fat := fmt.Sprintf("%s fields[%d]", at, i)
		if err := checkID(fat, "field id", f.ID, MaxFieldID); err != nil {
			return err
		}
		if j, dup := seen[f.ID]; dup {
			return invalid(fat, "field id %q already used by fields[%d]", f.ID, j)
		}
		seen[f.ID] = i
		if err := f.check(fmt.Sprintf("%s (%s %q)", fat, f.Type, f.ID)); err != nil {
			return err
		}
	}
	return nil
}

func (f Field) check(at string) error {
	if err := maxLen(at, "field label length", f.Label, MaxFieldLabel); err != nil {
		return err
	}
	if err := maxLen(at, "field hint length", f.Hint, MaxFieldHint); err != nil {
		return err
	}
	switch f.Type {
	case FieldText, FieldEmail:
		if err := maxLen(at, "placeholder length", f.Placeholder, MaxPlaceholder); err != nil {
			return err
		}
		if f.Default != nil {
			s, ok := f.Default.(string)
			if !ok {
				return invalid(at, "default %v is not a string", f.Default)
			}
			return maxLen(at, "default length", s, MaxString)
		}
	case FieldNumber:
		for _, v := range []float64{f.Min, f.Max, f.Step} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return invalid(at, "min, max and step must be finite")
			}
		}
		if math.Abs(f.Min) > MaxNumberRange || math.Abs(f.Max) > MaxNumberRange {
			return invalid(at, "min %v or max %v is outside ±%d", f.Min, f.Max, MaxNumberRange)
		}
		if f.Max < f.Min {
			return invalid(at, "max %v is below min %v", f.Max, f.Min)
		}
		if f.Step < MinNumberStep || f.Step > MaxNumberStep {
			return invalid(at, "step %v is outside [%g, %g]", f.Step, MinNumberStep, MaxNumberStep)
		}
		if f.Default != nil {
			d, ok := number(f.Default)
			if !ok {
				return invalid(at, "default %v is not a number", f.Default)
			}
			if d < f.Min || d > f.Max {
				return invalid(at, "default %v is outside [%v, %v]", d, f.Min, f.Max)
			}
		}
	case FieldSelect:
		if len(f.Options) == 0 {
			return invalid(at, "select has no options")
		}
		if len(f.Options) > MaxSelectOptions {
			return &LimitError{At: at, Limit: "select options", Max: MaxSelectOptions, Size: len(f.Options)}
		}
		values := make(map[string]bool, len(f.Options))
		for i, o := range f.Options {
			if err := maxLen(at, fmt.Sprintf("option %d label length", i), o.Label, MaxOptionLabel); err != nil {
				return err
			}
			if err := checkID(at, fmt.Sprintf("option %d value", i), o.Value, MaxOptionValue); err != nil {
				return err
			}
			if values[o.Value] {
				return invalid(at, "option value %q repeats", o.Value)
			}
			values[o.Value] = true
		}
		if f.Default != nil {
			s, ok := f.Default.(string)
			if !ok || !values[s] {
				return invalid(at, "default %v is not an option value", f.Default)
			}
		}
	case FieldCheckbox:
		if f.Default != nil {
			if _, ok := f.Default.(bool); !ok {
				return invalid(at, "default %v is not a bool", f.Default)
			}
		}
	default:
		return invalid(at, "unknown field type %q", f.Type)
	}
	return nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}
