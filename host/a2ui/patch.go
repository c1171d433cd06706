package a2ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

var patchErrs = errs{kind: ErrInvalidPatch}

// Patch is a JSON-Patch subset update of a document, as Palyra's:
// {"v":1,"ops":[{"op","path","value"?}]}. ParsePatch returns it checked;
// Apply checks a Patch built by hand the same way.
type Patch struct {
	Ops []Op
}

// Op is one patch operation.
type Op struct {
	// Op is add, replace or remove.
	Op string
	// Path is an RFC 6901 JSON Pointer: "" (the whole document) or
	// "/"-separated tokens with ~0 and ~1 escapes.
	Path string
	// Value is the JSON value of add and replace (JSON null is "null"),
	// nil for remove.
	Value json.RawMessage
}

// ParsePatch parses data as a patch: at most MaxPatchBytes of strict JSON
// (as Validate reads) with exactly the keys v (1) and ops (1 to
// MaxPatchOps). Each op has the keys op (add, replace or remove), path and,
// for add and replace only, value. A path is at most MaxPatchPath UTF-16
// code units, "" or starting with "/", uses no escape but ~0 and ~1, has no
// token __proto__, prototype or constructor, and remove does not take the
// root. Errors wrap ErrInvalidPatch and name the JSON Pointer in the patch,
// e.g. "/ops/2/path".
func ParsePatch(data []byte) (*Patch, error) {
	c := patchErrs
	if len(data) > MaxPatchBytes {
		return nil, c.limit("", "patch size in bytes", MaxPatchBytes, len(data))
	}
	tree, err := c.decodeJSON(data)
	if err != nil {
		return nil, err
	}
	m, err := c.object("", tree, "v", "ops")
	if err != nil {
		return nil, err
	}
	v, _, err := c.get("", m, "v", true)
	if err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); !ok || float(n) != Version {
		return nil, c.invalid("/v", "want %d, got %s", Version, shortJSON(v))
	}
	ops, _, err := c.arr("", m, "ops", true, MaxPatchOps, "op count")
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, c.invalid("/ops", "no ops (want 1 to %d)", MaxPatchOps)
	}
	p := &Patch{Ops: make([]Op, len(ops))}
	for i, ov := range ops {
		at := ptrIndex("/ops", i)
		om, err := c.object(at, ov, "op", "path", "value")
		if err != nil {
			return nil, err
		}
		o := &p.Ops[i]
		if o.Op, _, err = c.str(at, om, "op", true, MaxString); err != nil {
			return nil, err
		}
		if o.Path, _, err = c.str(at, om, "path", true, MaxPatchPath); err != nil {
			return nil, err
		}
		if val, ok := om["value"]; ok {
			if o.Value, err = json.Marshal(val); err != nil {
				return nil, c.invalid(at+"/value", "cannot encode: %v", err)
			}
		}
		if _, err := checkOp(at, o); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkOp checks one op and returns the unescaped tokens of its path.
func checkOp(at string, o *Op) ([]string, error) {
	c := patchErrs
	if err := c.oneOf(at+"/op", "op", o.Op, "add", "replace", "remove"); err != nil {
		return nil, err
	}
	if o.Op == "remove" {
		if o.Value != nil {
			return nil, c.invalid(at+"/value", "remove takes no value")
		}
	} else if o.Value == nil {
		return nil, c.invalid(at+"/value", "required key is missing (%s takes a value)", o.Op)
	}
	pp := at + "/path"
	if n := jsLen(o.Path); n > MaxPatchPath {
		return nil, c.limit(pp, "length in UTF-16 code units", MaxPatchPath, n)
	}
	if o.Path == "" {
		if o.Op == "remove" {
			return nil, c.invalid(pp, "remove of the root")
		}
		return nil, nil
	}
	if o.Path[0] != '/' {
		return nil, c.invalid(pp, "%s does not start with /", quote(o.Path))
	}
	raw := strings.Split(o.Path[1:], "/")
	tokens := make([]string, len(raw))
	for i, t := range raw {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, c.invalid(pp, "%s has a ~ that is not ~0 or ~1", quote(o.Path))
			}
		}
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		switch tokens[i] {
		case "__proto__", "prototype", "constructor":
			return nil, c.invalid(pp, "%s has the forbidden token %q", quote(o.Path), tokens[i])
		}
	}
	return tokens, nil
}

// Apply applies p to the document doc and validates the result.
//
// doc is the current document JSON (at most MaxDocumentBytes of strict
// JSON); it need not be valid itself, so a client may start from Palyra's
// empty document {"v":1,"surface":"s","components":[]}. p is checked as
// ParsePatch checks. The ops apply in order, each to the result of the one
// before: add on an object sets the key; add on an array inserts at the
// index, which may equal the length, or appends for "-"; replace and remove
// need an existing key or index; "" replaces the whole document. Array
// indexes are canonical decimals (0, 1, 12, not 01 or +1).
//
// Apply returns the patched document JSON (object keys sorted) and the
// Document Validate reads from it. Errors: ErrInvalidPatch (path
// "/ops/<i>/...") for a bad op, ErrPatchConflict (path "/ops/<i>/path")
// for an op that does not apply, ErrInvalid or ErrLimit with a path into
// doc when doc is not JSON, or into the patched document when the result
// is not a valid document: a patch that makes an invalid document is
// refused as a whole. doc is not modified.
func Apply(doc []byte, p *Patch) ([]byte, *Document, error) {
	c := patchErrs
	if p == nil || len(p.Ops) == 0 {
		return nil, nil, c.invalid("/ops", "no ops (want 1 to %d)", MaxPatchOps)
	}
	if len(p.Ops) > MaxPatchOps {
		return nil, nil, c.limit("/ops", "op count", MaxPatchOps, len(p.Ops))
	}
	if len(doc) > MaxDocumentBytes {
		return nil, nil, docErrs.limit("", "document size in bytes", MaxDocumentBytes, len(doc))
	}
	root, err := docErrs.decodeJSON(doc)
	if err != nil {
		return nil, nil, err
	}
	for i := range p.Ops {
		at := ptrIndex("/ops", i)
		o := &p.Ops[i]
		tokens, err := checkOp(at, o)
		if err != nil {
			return nil, nil, err
		}
		var val any
		if o.Op != "remove" {
			if len(o.Value) > MaxPatchBytes {
				return nil, nil, c.limit(at+"/value", "value size in bytes", MaxPatchBytes, len(o.Value))
			}
			// A fresh decode per op: no two places share a value.
			if val, err = c.decodeJSON(o.Value); err != nil {
				if e, ok := err.(*Error); ok {
					e.Path = at + "/value" + e.Path
				}
				return nil, nil, err
			}
		}
		if root, err = applyOp(root, o.Op, tokens, val); err != nil {
			return nil, nil, &Error{Path: at + "/path", Err: ErrPatchConflict, Msg: fmt.Sprintf("%s %s: %v", o.Op, quote(o.Path), err)}
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, nil, docErrs.invalid("", "cannot encode the patched document: %v", err)
	}
	d, err := Validate(out)
	if err != nil {
		return nil, nil, err
	}
	return out, d, nil
}

// conflict is why an op does not apply.
type conflict string

func (c conflict) Error() string { return string(c) }

// applyOp applies one op to root and returns the new root.
func applyOp(root any, op string, tokens []string, val any) (any, error) {
	if len(tokens) == 0 { // the root; checkOp refused remove
		return val, nil
	}
	// setParent stores a new value of the parent container where it lives:
	// an array changes its slice header when it grows or shrinks.
	setParent := func(v any) { root = v }
	parent := root
	for i, t := range tokens[:len(tokens)-1] {
		next, err := child(parent, t)
		if err != nil {
			return nil, conflict(fmt.Sprintf("at %s: %v", pointerOf(tokens[:i+1]), err))
		}
		switch p := parent.(type) {
		case map[string]any:
			setParent = func(v any) { p[t] = v }
		case []any:
			n, _ := index(t) // child parsed it
			setParent = func(v any) { p[n] = v }
		}
		parent = next
	}
	last := tokens[len(tokens)-1]
	switch p := parent.(type) {
	case map[string]any:
		_, exists := p[last]
		switch {
		case op == "add":
			p[last] = val
		case !exists:
			return nil, conflict(fmt.Sprintf("no key %s", quote(last)))
		case op == "replace":
			p[last] = val
		default:
			delete(p, last)
		}
	case []any:
		a, err := arrayOp(p, op, last, val)
		if err != nil {
			return nil, err
		}
		setParent(a)
	default:
		return nil, conflict(fmt.Sprintf("%s is a %s, not an object or array", pointerOf(tokens[:len(tokens)-1]), kindOf(parent)))
	}
	return root, nil
}

// arrayOp applies op at token to the array a and returns the new array.
func arrayOp(a []any, op, token string, val any) ([]any, error) {
	if op == "add" && token == "-" {
		return append(a, val), nil
	}
	i, err := index(token)
	if err != nil {
		return nil, err
	}
	switch {
	case op == "add" && i <= len(a):
		return slices.Insert(a, i, val), nil
	case op == "add":
		return nil, conflict(fmt.Sprintf("index %d is beyond the length %d", i, len(a)))
	case i >= len(a):
		return nil, conflict(fmt.Sprintf("no index %d (length %d)", i, len(a)))
	case op == "replace":
		a[i] = val
		return a, nil
	default:
		return slices.Delete(a, i, i+1), nil
	}
}

// child steps from v to its member or element t.
func child(v any, t string) (any, error) {
	switch p := v.(type) {
	case map[string]any:
		c, ok := p[t]
		if !ok {
			return nil, conflict(fmt.Sprintf("no key %s", quote(t)))
		}
		return c, nil
	case []any:
		i, err := index(t)
		if err != nil {
			return nil, err
		}
		if i >= len(p) {
			return nil, conflict(fmt.Sprintf("no index %d (length %d)", i, len(p)))
		}
		return p[i], nil
	}
	return nil, conflict(fmt.Sprintf("a %s has no members", kindOf(v)))
}

// index parses a canonical array index: 0 or a decimal without a leading
// zero or sign.
func index(t string) (int, error) {
	if t == "" || (t[0] == '0' && len(t) > 1) {
		return 0, conflict(fmt.Sprintf("%s is not a canonical array index", quote(t)))
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, conflict(fmt.Sprintf("%s is not a canonical array index", quote(t)))
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n > MaxDocumentBytes { // no array in a document is this long
		return 0, conflict(fmt.Sprintf("index %s is out of range", quote(t)))
	}
	return n, nil
}

func pointerOf(tokens []string) string {
	p := ""
	for _, t := range tokens {
		p = ptr(p, t)
	}
	if p == "" {
		return "the root"
	}
	return quote(p)
}
