package a2ui

import "strings"

// Update is a tool output that patches a document the tool returned before
// instead of replacing it. It encodes as
//
//	{"a2ui_update": {"surface": "report", "patch": {"v": 1, "ops": [...]}}}
//
// A tool returns one in reply to a form submit: the host applies the patch
// to the document the form was on (on Surface), checks the result and
// hands the patch to the console, which applies it to what it shows.
type Update struct {
	Body UpdateBody `json:"a2ui_update"`
}

// UpdateBody is the value of "a2ui_update": the surface and the patch.
type UpdateBody struct {
	Surface string `json:"surface"`
	Patch   *Patch `json:"patch"`
}

// NewUpdate returns the update of surface's document by ops, after checking
// the surface as New does and the ops as NewPatch does.
func NewUpdate(surface string, ops ...Op) (*Update, error) {
	if strings.TrimSpace(surface) == "" {
		return nil, invalid("surface", "empty surface")
	}
	if err := maxLen("surface", "surface length", surface, MaxSurface); err != nil {
		return nil, err
	}
	p, err := NewPatch(ops...)
	if err != nil {
		return nil, err
	}
	return &Update{Body: UpdateBody{Surface: surface, Patch: p}}, nil
}
