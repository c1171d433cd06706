package manifest

import (
	"bytes"
	"fmt"

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
	out := PropertyOrders{}
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
		id, _ := t.get("id").(ostring)
		schema, _ := t.get("input_schema").(*otable)
		if id == "" || schema == nil {
			continue
		}
		orders := map[string][]string{}
		collectOrders(schema, "", orders, 0)
		out[string(id)] = orders
	}
	return out, nil
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
