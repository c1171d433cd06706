package a2ui

import (
	"encoding/json"
	"math"
	"strings"
)

var fieldTypes = []string{"text", "email", "number", "select", "checkbox"}

// fieldKeys are the keys a field of each type may have.
var fieldKeys = map[FieldType][]string{
	FieldText:     {"id", "label", "type", "hint", "required", "default", "placeholder"},
	FieldEmail:    {"id", "label", "type", "hint", "required", "default", "placeholder"},
	FieldNumber:   {"id", "label", "type", "hint", "required", "default", "min", "max", "step"},
	FieldSelect:   {"id", "label", "type", "hint", "required", "default", "options"},
	FieldCheckbox: {"id", "label", "type", "hint", "required", "default"},
}

func formProps(path string, v any) (*FormProps, error) {
	c := docErrs
	m, err := c.object(path, v, "title", "submit_label", "submitLabel", "fields")
	if err != nil {
		return nil, err
	}
	p := &FormProps{Fields: []Field{}}
	if p.Title, _, err = c.str(path, m, "title", false, MaxString); err != nil {
		return nil, err
	}
	key, err := c.alias(path, m, "submit_label", "submitLabel")
	if err != nil {
		return nil, err
	}
	if p.SubmitLabel, _, err = c.str(path, m, key, false, MaxSubmitLabel); err != nil {
		return nil, err
	}
	fields, _, err := c.arr(path, m, "fields", false, MaxFormFields, "field count")
	if err != nil {
		return nil, err
	}
	seen := make(map[string]int, len(fields))
	for i, fv := range fields {
		fp := ptrIndex(path+"/fields", i)
		f, err := field(fp, fv)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[f.ID]; dup {
			return nil, c.invalid(fp+"/id", "field id %s is already used by %s/fields/%d", quote(f.ID), path, j)
		}
		seen[f.ID] = i
		p.Fields = append(p.Fields, f)
	}
	return p, nil
}

func field(path string, v any) (Field, error) {
	c := docErrs
	var f Field
	m, ok := v.(map[string]any)
	if !ok {
		return f, c.invalid(path, "want an object, got %s", kindOf(v))
	}
	// The type decides which keys are allowed, so it is read first.
	t, _, err := c.str(path, m, "type", true, MaxString)
	if err != nil {
		return f, err
	}
	if err := c.oneOf(path+"/type", "field type", t, fieldTypes...); err != nil {
		return f, err
	}
	f.Type = FieldType(t)
	if k, ok := unknownKey(m, fieldKeys[f.Type]); ok {
		return f, c.invalid(ptr(path, k), "unknown key for a %s field (want %s)", t, strings.Join(fieldKeys[f.Type], ", "))
	}
	idv, _, err := c.get(path, m, "id", true)
	if err != nil {
		return f, err
	}
	if f.ID, err = c.id(path+"/id", idv, MaxFieldID); err != nil {
		return f, err
	}
	if f.Label, _, err = c.str(path, m, "label", false, MaxFieldLabel); err != nil {
		return f, err
	}
	if f.Hint, _, err = c.str(path, m, "hint", false, MaxFieldHint); err != nil {
		return f, err
	}
	if f.Required, _, err = c.boolean(path, m, "required"); err != nil {
		return f, err
	}
	def, hasDef := m["default"]
	dp := path + "/default"
	switch f.Type {
	case FieldText, FieldEmail:
		if f.Placeholder, _, err = c.str(path, m, "placeholder", false, MaxPlaceholder); err != nil {
			return f, err
		}
		if hasDef {
			if f.Default, err = c.strValue(dp, def, MaxString); err != nil {
				return f, err
			}
		}
	case FieldNumber:
		if err := numberField(path, m, &f); err != nil {
			return f, err
		}
		if hasDef {
			n, ok := def.(json.Number)
			if !ok {
				return f, c.invalid(dp, "want a number, got %s", kindOf(def))
			}
			d := float(n)
			if d < f.Min || d > f.Max {
				return f, c.invalid(dp, "%v is outside [min, max] = [%v, %v]", d, f.Min, f.Max)
			}
			f.Default = d
		}
	case FieldSelect:
		if err := selectField(path, m, &f); err != nil {
			return f, err
		}
		if hasDef {
			s, ok := def.(string)
			if !ok {
				return f, c.invalid(dp, "want a string, got %s", kindOf(def))
			}
			if !hasOption(f.Options, s) {
				return f, c.invalid(dp, "%s is not an option value", quote(s))
			}
			f.Default = s
		}
	case FieldCheckbox:
		if hasDef {
			b, ok := def.(bool)
			if !ok {
				return f, c.invalid(dp, "want a boolean, got %s", kindOf(def))
			}
			f.Default = b
		}
	}
	return f, nil
}

// numberField reads min, max and step, with Palyra's defaults 0, 100 and 1.
func numberField(path string, m map[string]any, f *Field) error {
	c := docErrs
	f.Min, f.Max, f.Step = 0, 100, 1
	for _, k := range []struct {
		key string
		v   *float64
	}{{"min", &f.Min}, {"max", &f.Max}, {"step", &f.Step}} {
		n, ok, err := c.num(path, m, k.key, false)
		if err != nil {
			return err
		}
		if ok {
			*k.v = n
		}
	}
	if math.Abs(f.Min) > MaxNumberRange {
		return c.invalid(path+"/min", "%v is outside ±%d", f.Min, MaxNumberRange)
	}
	if math.Abs(f.Max) > MaxNumberRange {
		return c.invalid(path+"/max", "%v is outside ±%d", f.Max, MaxNumberRange)
	}
	if f.Max < f.Min {
		return c.invalid(path+"/max", "%v is below min %v", f.Max, f.Min)
	}
	if f.Step < MinNumberStep || f.Step > MaxNumberStep {
		return c.invalid(path+"/step", "%v is outside [%g, %g]", f.Step, MinNumberStep, MaxNumberStep)
	}
	return nil
}

func selectField(path string, m map[string]any, f *Field) error {
	c := docErrs
	opts, _, err := c.arr(path, m, "options", true, MaxSelectOptions, "option count")
	if err != nil {
		return err
	}
	op := path + "/options"
	if len(opts) == 0 {
		return c.invalid(op, "no options (want 1 to %d)", MaxSelectOptions)
	}
	f.Options = make([]Option, len(opts))
	seen := make(map[string]int, len(opts))
	for i, ov := range opts {
		p := ptrIndex(op, i)
		om, err := c.object(p, ov, "label", "value")
		if err != nil {
			return err
		}
		o := &f.Options[i]
		if o.Label, _, err = c.str(p, om, "label", true, MaxOptionLabel); err != nil {
			return err
		}
		vv, _, err := c.get(p, om, "value", true)
		if err != nil {
			return err
		}
		if o.Value, err = c.id(p+"/value", vv, MaxOptionValue); err != nil {
			return err
		}
		if j, dup := seen[o.Value]; dup {
			return c.invalid(p+"/value", "option value %s is already used by %s/%d", quote(o.Value), op, j)
		}
		seen[o.Value] = i
	}
	return nil
}

func hasOption(opts []Option, v string) bool {
	for _, o := range opts {
		if o.Value == v {
			return true
		}
	}
	return false
}
