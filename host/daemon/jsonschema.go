package daemon

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// schemaGen derives JSON Schemas (draft 2020-12, the dialect of OpenAPI
// 3.1) from the Go types the API encodes with encoding/json, so the
// document describes what the handlers really write. Named struct types
// become components (#/components/schemas/pkg.Type), referenced with $ref,
// which also makes recursive types finite.
//
// A request body is decoded more loosely than a response is written: every
// field may be left out, null leaves the field zero, and an unknown field
// is refused (the decoder's DisallowUnknownFields). An input generator
// (input) writes those schemas, as components named pkg.TypeInput.
type schemaGen struct {
	defs  map[string]any
	names map[reflect.Type]string
	input bool
}

func newSchemaGen(input bool) *schemaGen {
	return &schemaGen{defs: map[string]any{}, names: map[reflect.Type]string{}, input: input}
}

// inputGen is the input generator sharing g's components.
func (g *schemaGen) inputGen() *schemaGen {
	return &schemaGen{defs: g.defs, names: map[reflect.Type]string{}, input: true}
}

var (
	typeTime          = reflect.TypeFor[time.Time]()
	typeDuration      = reflect.TypeFor[time.Duration]()
	typeRawMessage    = reflect.TypeFor[json.RawMessage]()
	typeJSONMarshaler = reflect.TypeFor[json.Marshaler]()
	typeTextMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemaOf is the schema of the JSON encoding/json writes for a value of
// v's type (v is a zero value standing for its type).
func (g *schemaGen) schemaOf(v any) map[string]any {
	return g.schema(reflect.TypeOf(v))
}

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	if t == nil {
		return map[string]any{}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case typeTime:
		return map[string]any{"type": "string", "format": "date-time"}
	case typeDuration:
		return map[string]any{"type": "integer", "description": "nanoseconds"}
	case typeRawMessage:
		return map[string]any{"description": "any JSON value"}
	}
	if t.Implements(typeJSONMarshaler) || reflect.PointerTo(t).Implements(typeJSONMarshaler) {
		return map[string]any{"description": "a JSON value with its own encoding (" + t.String() + ")"}
	}
	if t.Implements(typeTextMarshaler) || reflect.PointerTo(t).Implements(typeTextMarshaler) {
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem()), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		name, ok := g.names[t]
		if !ok {
			name = g.componentName(t)
			g.names[t] = name
			g.defs[name] = map[string]any{} // placeholder for recursion
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	// Channels, funcs and complex numbers do not encode.
	return map[string]any{"not": map[string]any{}}
}

// componentName is pkg.Type, with a numeric suffix on the rare clash of
// two packages of the same name.
func (g *schemaGen) componentName(t reflect.Type) string {
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := pkg + "." + t.Name()
	if g.input {
		name += "Input"
	}
	if i := strings.IndexAny(name, "[]"); i >= 0 {
		name = name[:i] // generic instances: keep the readable part
	}
	base := name
	for n := 2; ; n++ {
		if _, taken := g.defs[name]; !taken {
			return name
		}
		name = base + "_" + strconv.Itoa(n)
	}
}

// object is the schema of a struct's fields as encoding/json writes them:
// exported fields by their json name, embedded structs promoted, fields
// without omitempty/omitzero required (a nil slice, map or pointer of
// those is null).
func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required, map[string]bool{}, false)
	out := map[string]any{"type": "object", "properties": props}
	if g.input {
		out["additionalProperties"] = false
	} else if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// The fields promoted from an embedded pointer (viaPointer) are absent
// when it is nil: none of them is required.
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string, seen map[string]bool, viaPointer bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et, ptr := ft, viaPointer
			if et.Kind() == reflect.Pointer {
				et, ptr = et.Elem(), true
			}
			if et.Kind() == reflect.Struct {
				g.fields(et, props, required, seen, ptr)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if seen[name] {
			continue // the shallower field wins, as in encoding/json
		}
		seen[name] = true
		s := g.schema(ft)
		optional := viaPointer || strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		if strings.Contains(","+opts+",", ",string,") {
			s = map[string]any{"type": "string"}
		}
		if !optional && !g.input {
			*required = append(*required, name)
			if nullable(ft) {
				s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
			}
		}
		props[name] = s
	}
}

// nullable reports whether encoding/json writes null for a zero value of t.
func nullable(t reflect.Type) bool {
	if t == typeRawMessage {
		return false // its own schema is already any JSON value
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface:
		return true
	case reflect.Slice:
		return true
	}
	return false
}
