package manifest

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// PropertyOrders is, for each tool id, the order in which skill.toml writes
// the properties of each object schema of the tool's input_schema: a map
// from the RFC 6901 JSON Pointer of the object schema inside input_schema
// ("" for input_schema itself, "/properties/rows/items" for the items of
// rows, "/oneOf/0" for the first oneOf branch) to its property names in
// the order the manifest declares them.
//
// Tool.InputSchema is a map and loses that order (and JSON encodes maps
// with sorted keys); a form generated from the schema uses this to show
// the fields as the author wrote them.
type PropertyOrders map[string]map[string][]string

// InputPropertyOrders reads the order of the properties of every tool's
// input_schema from the text of a skill.toml (one that Parse accepts). A
// document that does not parse as TOML is an error wrapping ErrParse; a
// tool without an id or an input_schema table is left out.
func InputPropertyOrders(data []byte) (PropertyOrders, error) {
	tools, err := sourceTools(data)
	if err != nil {
		return nil, err
	}
	out := PropertyOrders{}
	for id, t := range tools {
		schema, _ := t.get("input_schema").(*otable)
		if schema == nil {
			continue
		}
		orders := map[string][]string{}
		collectOrders(schema, "", orders, 0)
		out[id] = orders
	}
	return out, nil
}

// sourceTools reads the [[entrypoints.tools]] tables of a skill.toml as
// ordered trees, by tool id (a tool without an id is left out).
func sourceTools(data []byte) (map[string]*otable, error) {
	if len(data) > MaxManifestBytes {
		return nil, fmt.Errorf("%w: skill.toml is %d bytes, above the limit of %d", ErrParse, len(data), MaxManifestBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if fe := checkNesting(data); fe != nil {
		return nil, fe
	}
	root, err := orderedTree(data)
	if err != nil {
		return nil, err
	}
	out := map[string]*otable{}
	ep, _ := root.get("entrypoints").(*otable)
	if ep == nil {
		return out, nil
	}
	tools, _ := ep.get("tools").(*oarray)
	if tools == nil {
		return out, nil
	}
	for _, el := range tools.items {
		t, _ := el.(*otable)
		if t == nil {
			continue
		}
		if id, _ := t.get("id").(ostring); id != "" {
			if _, dup := out[string(id)]; !dup {
				out[string(id)] = t
			}
		}
	}
	return out, nil
}

// MarshalOrdered is Marshal, except that the tables of each tool's
// input_schema and output_schema keep the key order of source, the
// skill.toml m was parsed from (keys source does not have follow, sorted).
// Marshal sorts them, which loses the order in which the author listed a
// schema's properties: the order a form generated from the schema shows
// its fields in (see InputPropertyOrders). The content is the same as
// Marshal's: Parse(MarshalOrdered(m, source)) equals m. A source that does
// not parse as TOML is an error wrapping ErrParse.
func MarshalOrdered(m *Manifest, source []byte) ([]byte, error) {
	tools, err := sourceTools(source)
	if err != nil {
		return nil, err
	}
	return marshal(m, func(out *outManifest) (any, error) {
		return orderedManifest(out, tools), nil
	})
}

// orderedManifest is out with each tool's schemas replaced by values that
// encode in the source's key order. Go's TOML encoder sorts map keys but
// writes struct fields in their order, so an ordered table is a struct
// made at run time (reflect.StructOf) whose fields, in order, carry the
// keys in their toml tags; the structs that hold the schemas are remade
// the same way, with every other field (and tag) as it is.
func orderedManifest(out *outManifest, src map[string]*otable) any {
	tools := make([]any, len(out.Entrypoints.Tools))
	for i, tl := range out.Entrypoints.Tools {
		t := src[tl.ID]
		in, _ := t.getOK("input_schema")
		outSchema, _ := t.getOK("output_schema")
		tools[i] = replaceFields(reflect.ValueOf(tl), map[string]any{
			"InputSchema":  orderedValue(tl.InputSchema, in, 0),
			"OutputSchema": orderedValue(tl.OutputSchema, outSchema, 0),
		})
	}
	ep := replaceFields(reflect.ValueOf(out.Entrypoints), map[string]any{"Tools": tools})
	return replaceFields(reflect.ValueOf(*out), map[string]any{"Entrypoints": ep})
}

// replaceFields copies the struct v into a new struct type whose fields
// named in repl hold those values (with their types) instead.
func replaceFields(v reflect.Value, repl map[string]any) any {
	t := v.Type()
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		fields[i] = reflect.StructField{Name: f.Name, PkgPath: f.PkgPath, Type: f.Type, Tag: f.Tag}
		if r, ok := repl[f.Name]; ok && r != nil {
			fields[i].Type = reflect.TypeOf(r)
		}
	}
	nv := reflect.New(reflect.StructOf(fields)).Elem()
	for i := range fields {
		if r, ok := repl[t.Field(i).Name]; ok && r != nil {
			nv.Field(i).Set(reflect.ValueOf(r))
		} else {
			nv.Field(i).Set(v.Field(i))
		}
	}
	return nv.Interface()
}

// orderedValue returns v (a decoded schema value) in the key order of its
// source node: maps become ordered structs, lists keep their elements in
// order. A table with a key a struct tag cannot carry (empty, "-", or with
// a comma, quote or backslash) stays a map, encoded sorted; the tables in
// it keep their order.
func orderedValue(v any, src any, depth int) any {
	if depth > 2*MaxNesting {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		t, _ := src.(*otable)
		keys := make([]string, 0, len(x))
		if t != nil {
			for _, k := range t.keys {
				if _, ok := x[k]; ok {
					keys = append(keys, k)
				}
			}
		}
		rest := make([]string, 0, len(x)-len(keys))
		for k := range x {
			if !slices.Contains(keys, k) {
				rest = append(rest, k)
			}
		}
		slices.Sort(rest)
		keys = append(keys, rest...)
		fields := make([]reflect.StructField, len(keys))
		vals := make([]any, len(keys))
		tagged := true
		for i, k := range keys {
			var sub any
			if t != nil {
				sub = t.vals[k]
			}
			vals[i] = orderedValue(x[k], sub, depth+1)
			if k == "" || k == "-" || strings.ContainsAny(k, ",\"\\") || vals[i] == nil {
				tagged = false
				continue
			}
			fields[i] = reflect.StructField{Name: "F" + strconv.Itoa(i), Type: reflect.TypeOf(vals[i]), Tag: reflect.StructTag(`toml:"` + k + `"`)}
		}
		if !tagged {
			// This table stays a map (sorted); what it holds keeps its order.
			m := make(map[string]any, len(keys))
			for i, k := range keys {
				m[k] = vals[i]
			}
			return m
		}
		sv := reflect.New(reflect.StructOf(fields)).Elem()
		for i := range vals {
			sv.Field(i).Set(reflect.ValueOf(vals[i]))
		}
		return sv.Interface()
	case []any:
		a, _ := src.(*oarray)
		out := make([]any, len(x))
		for i, el := range x {
			var sub any
			if a != nil && i < len(a.items) {
				sub = a.items[i]
			}
			out[i] = orderedValue(el, sub, depth+1)
		}
		return out
	default:
		return v
	}
}

// collectOrders records the key order of every "properties" table under t,
// by the pointer of the schema that holds it.
func collectOrders(v any, ptr string, into map[string][]string, depth int) {
	if depth > 2*MaxNesting {
		return
	}
	switch x := v.(type) {
	case *otable:
		if props, ok := x.get("properties").(*otable); ok && len(props.keys) > 0 {
			into[ptr] = append([]string(nil), props.keys...)
		}
		for _, k := range x.keys {
			collectOrders(x.vals[k], ptr+"/"+jsonPointerToken(k), into, depth+1)
		}
	case *oarray:
		for i, el := range x.items {
			collectOrders(el, fmt.Sprintf("%s/%d", ptr, i), into, depth+1)
		}
	}
}

func jsonPointerToken(t string) string {
	return jsonPointer([]string{t})[1:]
}

// The ordered tree: tables keep their keys in document order. Values are
// *otable, *oarray, ostring (a string) or oscalar (any other value).
type (
	otable struct {
		keys []string
		vals map[string]any
	}
	oarray  struct{ items []any }
	ostring string
	oscalar struct{}
)

func newTable() *otable { return &otable{vals: map[string]any{}} }

func (t *otable) get(k string) any { return t.vals[k] }

// getOK is get on a table that may be nil.
func (t *otable) getOK(k string) (any, bool) {
	if t == nil {
		return nil, false
	}
	v, ok := t.vals[k]
	return v, ok
}

func (t *otable) set(k string, v any) {
	if _, ok := t.vals[k]; !ok {
		t.keys = append(t.keys, k)
	}
	t.vals[k] = v
}

// child returns the table at k, made when missing; for an array of tables
// it is the last element, as TOML resolves [a.b] after [[a]].
func (t *otable) child(k string) (*otable, error) {
	switch x := t.vals[k].(type) {
	case nil:
		c := newTable()
		t.set(k, c)
		return c, nil
	case *otable:
		return x, nil
	case *oarray:
		if n := len(x.items); n > 0 {
			if last, ok := x.items[n-1].(*otable); ok {
				return last, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: key %q is not a table", ErrParse, k)
}

// orderedTree parses data into the ordered tree.
func orderedTree(data []byte) (*otable, error) {
	var p unstable.Parser
	p.Reset(data)
	root := newTable()
	cur := root
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			if err := setKeyValue(cur, e); err != nil {
				return nil, err
			}
		case unstable.Table, unstable.ArrayTable:
			keys := keyParts(e.Key())
			if len(keys) == 0 {
				return nil, fmt.Errorf("%w: a table header without a key", ErrParse)
			}
			t := root
			var err error
			for _, k := range keys[:len(keys)-1] {
				if t, err = t.child(k); err != nil {
					return nil, err
				}
			}
			last := keys[len(keys)-1]
			if e.Kind == unstable.Table {
				if cur, err = t.child(last); err != nil {
					return nil, err
				}
				continue
			}
			arr, ok := t.get(last).(*oarray)
			if !ok {
				arr = &oarray{}
				t.set(last, arr)
			}
			cur = newTable()
			arr.items = append(arr.items, cur)
		}
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	return root, nil
}

func keyParts(it unstable.Iterator) []string {
	var out []string
	for it.Next() {
		out = append(out, string(it.Node().Data))
	}
	return out
}

// setKeyValue sets a (possibly dotted) key of t to the value of the
// KeyValue node e.
func setKeyValue(t *otable, e *unstable.Node) error {
	keys := keyParts(e.Key())
	if len(keys) == 0 {
		return fmt.Errorf("%w: a key/value without a key", ErrParse)
	}
	var err error
	for _, k := range keys[:len(keys)-1] {
		if t, err = t.child(k); err != nil {
			return err
		}
	}
	v, err := valueOf(e.Value())
	if err != nil {
		return err
	}
	t.set(keys[len(keys)-1], v)
	return nil
}

// valueOf converts a value node; checkNesting has bounded how deep
// arrays and inline tables nest.
func valueOf(n *unstable.Node) (any, error) {
	switch n.Kind {
	case unstable.String:
		return ostring(n.Data), nil
	case unstable.InlineTable:
		t := newTable()
		it := n.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			if err := setKeyValue(t, kv); err != nil {
				return nil, err
			}
		}
		return t, nil
	case unstable.Array:
		a := &oarray{}
		it := n.Children()
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			v, err := valueOf(c)
			if err != nil {
				return nil, err
			}
			a.items = append(a.items, v)
		}
		return a, nil
	default:
		return oscalar{}, nil
	}
}
