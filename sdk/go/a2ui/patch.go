package a2ui

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Patch limits: Palyra's web client budget (maxOpsPerPatch, maxPathLength).
const (
	MaxPatchOps  = 256
	MaxPatchPath = 512
)

// Patch is a JSON-Patch update of a document: {"v":1,"ops":[...]}.
type Patch struct {
	V   int  `json:"v"`
	Ops []Op `json:"ops"`
}

// Op is one patch operation: add, replace or remove. Path is an RFC 6901
// JSON Pointer ("" is the whole document); build it with Pointer.
type Op struct {
	Op    string
	Path  string
	Value any
}

// Add returns an add op: on an object it sets the key; on an array it
// inserts at the index ("-" appends).
func Add(path string, value any) Op { return Op{Op: "add", Path: path, Value: value} }

// Replace returns a replace op; the key or index must exist.
func Replace(path string, value any) Op { return Op{Op: "replace", Path: path, Value: value} }

// Remove returns a remove op.
func Remove(path string) Op { return Op{Op: "remove", Path: path} }

// MarshalJSON encodes the op; "value" is present for add and replace (even
// when nil, as null) and absent for remove.
func (o Op) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Pointer returns the JSON Pointer of tokens, escaping "~" and "/":
// Pointer("components", "0", "props") is "/components/0/props"; Pointer()
// is "", the root.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// NewPatch returns the patch of ops after checking it: 1 to MaxPatchOps ops,
// each add, replace or remove, with a path of at most MaxPatchPath that is
// "" or starts with "/", uses only the escapes ~0 and ~1 and no token
// __proto__, prototype or constructor (which the web client refuses), and
// does not remove the root.
func NewPatch(ops ...Op) (*Patch, error) {
	if len(ops) == 0 {
		return nil, invalid("", "patch has no ops")
	}
	if len(ops) > MaxPatchOps {
		return nil, &LimitError{Limit: "patch ops", Max: MaxPatchOps, Size: len(ops)}
	}
	for i, o := range ops {
		at := fmt.Sprintf("ops[%d]", i)
		switch o.Op {
		case "add", "replace":
		case "remove":
			if o.Path == "" {
				return nil, invalid(at, "remove of the root")
			}
		default:
			return nil, invalid(at, "unknown op %q", o.Op)
		}
		if err := checkPointer(at, o.Path); err != nil {
			return nil, err
		}
	}
	return &Patch{V: Version, Ops: ops}, nil
}

// ReplaceRoot returns the patch that replaces a whole document with d, after
// checking d as Validate does.
func ReplaceRoot(d *Document) (*Patch, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return NewPatch(Replace("", d))
}

func checkPointer(at, path string) error {
	if len(path) > MaxPatchPath {
		return &LimitError{At: at, Limit: "path length", Max: MaxPatchPath, Size: len(path)}
	}
	if path == "" {
		return nil
	}
	if path[0] != '/' {
		return invalid(at, "path %q does not start with /", path)
	}
	for _, tok := range strings.Split(path[1:], "/") {
		for i := 0; i < len(tok); i++ {
			if tok[i] == '~' && (i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1')) {
				return invalid(at, "path %q has a bad escape", path)
			}
		}
		switch strings.NewReplacer("~1", "/", "~0", "~").Replace(tok) {
		case "__proto__", "prototype", "constructor":
			return invalid(at, "path %q has the forbidden token %q", path, tok)
		}
	}
	return nil
}
