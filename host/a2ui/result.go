package a2ui

import (
	"encoding/json"
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
)

// ErrSurfaceMismatch is an update for another surface than the document it
// applies to.
var ErrSurfaceMismatch = errcode.New("a2ui_surface_mismatch", "A2UI update is for another surface than its document")

// Result is what a tool output shows: the document, its JSON, and for an
// update the patch that made it from the document shown before.
type Result struct {
	Doc  *Document
	JSON []byte
	// Patch is nil when the output was a whole document.
	Patch *Patch
}

// ReadResult reads a tool output as A2UI. It returns nil, nil when the
// output is neither a document (IsDocument) nor an update (IsUpdate). A
// document is validated (Validate). An update (ParseUpdate) is applied to
// base, the document on show when the output replies to one of its forms,
// or, when base is nil, to the empty document of the update's surface
// (Apply validates the result); an update for another surface than base's
// is ErrSurfaceMismatch. Every error is an *Error, as the package's others.
func ReadResult(out []byte, base *Result) (*Result, error) {
	switch {
	case IsDocument(out):
		doc, err := Validate(out)
		if err != nil {
			return nil, err
		}
		return &Result{Doc: doc, JSON: out}, nil
	case IsUpdate(out):
		u, err := ParseUpdate(out)
		if err != nil {
			return nil, err
		}
		var from []byte
		if base != nil {
			if base.Doc.Surface != u.Surface {
				return nil, &Error{Path: "/" + UpdateKey + "/surface", Err: ErrSurfaceMismatch,
					Msg: fmt.Sprintf("the update is for surface %s, the document is on %s", quote(u.Surface), quote(base.Doc.Surface))}
			}
			from = base.JSON
		} else {
			surface, err := json.Marshal(u.Surface)
			if err != nil {
				return nil, err
			}
			from = fmt.Appendf(nil, `{"v":%d,"surface":%s,"components":[]}`, Version, surface)
		}
		raw, doc, err := Apply(from, u.Patch)
		if err != nil {
			return nil, err
		}
		return &Result{Doc: doc, JSON: raw, Patch: u.Patch}, nil
	}
	return nil, nil
}
