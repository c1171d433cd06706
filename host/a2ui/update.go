package a2ui

import (
	"encoding/json"
	"strings"
)

// UpdateKey is the top-level key of a tool output that patches a document
// the tool returned before (the key Palyra's agent output uses).
const UpdateKey = "a2ui_update"

// Update is a tool output that changes a document instead of replacing it:
//
//	{"a2ui_update": {"surface": "report", "patch": {"v": 1, "ops": [...]}}}
//
// Palyra's spelling with the patch as a JSON string, "patch_json", is
// accepted too. The patch applies to the document on the same surface: for
// a reply to a form submit, the document the form was on.
type Update struct {
	// Surface is the surface of the document the patch applies to.
	Surface string
	// Patch is the checked patch (as ParsePatch returns it).
	Patch *Patch
}

// ParseUpdate parses a tool output as an Update: at most MaxPatchBytes of
// strict JSON, an object with the one key "a2ui_update" whose value has the
// keys "surface" (1 to MaxSurface code units once trimmed) and exactly one
// of "patch" (the patch object) or "patch_json" (the patch as a string).
// Errors wrap ErrInvalidPatch (or ErrLimit) and point into the output, e.g.
// "/a2ui_update/patch/ops/0/path".
func ParseUpdate(data []byte) (*Update, error) {
	c := patchErrs
	if len(data) > MaxPatchBytes {
		return nil, c.limit("", "update size in bytes", MaxPatchBytes, len(data))
	}
	tree, err := c.decodeJSON(data)
	if err != nil {
		return nil, err
	}
	top, err := c.object("", tree, UpdateKey)
	if err != nil {
		return nil, err
	}
	at := ptr("", UpdateKey)
	v, _, err := c.get("", top, UpdateKey, true)
	if err != nil {
		return nil, err
	}
	m, err := c.object(at, v, "surface", "patch", "patch_json")
	if err != nil {
		return nil, err
	}
	surface, _, err := c.str(at, m, "surface", true, MaxSurface)
	if err != nil {
		return nil, err
	}
	if surface = strings.TrimSpace(surface); surface == "" {
		return nil, c.invalid(ptr(at, "surface"), "empty surface")
	}
	pv, hasPatch := m["patch"]
	pj, hasJSON := m["patch_json"]
	var raw []byte
	key := "patch"
	switch {
	case hasPatch == hasJSON:
		return nil, c.invalid(at, "want exactly one of patch and patch_json")
	case hasPatch:
		if raw, err = json.Marshal(pv); err != nil {
			return nil, c.invalid(ptr(at, key), "cannot encode: %v", err)
		}
	default:
		key = "patch_json"
		s, ok := pj.(string)
		if !ok {
			return nil, c.invalid(ptr(at, key), "want a string, got %s", kindOf(pj))
		}
		raw = []byte(s)
	}
	p, err := ParsePatch(raw)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Path = ptr(at, key) + e.Path
		}
		return nil, err
	}
	return &Update{Surface: surface, Patch: p}, nil
}

// MarshalJSON encodes the patch as {"v":1,"ops":[...]}: value is present
// for add and replace and absent for remove.
func (p Patch) MarshalJSON() ([]byte, error) {
	type op struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value,omitempty"`
	}
	ops := make([]op, len(p.Ops))
	for i, o := range p.Ops {
		ops[i] = op(o)
	}
	return json.Marshal(struct {
		V   int  `json:"v"`
		Ops []op `json:"ops"`
	}{Version, ops})
}
