package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/supervisor"
)

// CallFunc runs tool toolID of the current version of skill skillID with
// input (a JSON object) and must honour ctx: the server cancels it when the
// client cancels the request or the server closes. On a failure the Output
// may still be returned, with what the sidecar reported.
type CallFunc func(ctx context.Context, skillID, toolID string, input json.RawMessage) (*Output, error)

// Output is what a call produced.
type Output struct {
	// Output is the tool's output (JSON), nil on a failure.
	Output json.RawMessage
	// SkillID, Version and InvocationID name the run.
	SkillID, Version, InvocationID string
	// ToolError is the error document the tool reported, if any.
	ToolError *supervisor.ToolError
	// A2UI is set when Output is a valid A2UI document.
	A2UI *A2UIRef
}

// A2UIRef describes the A2UI document a tool returned, or the document an
// A2UI update it returned produced.
type A2UIRef struct {
	Surface string
	// DocumentID is the id under which the daemon keeps the document for
	// form submits ("" when nothing keeps it).
	DocumentID string
	// Document is the whole (validated) document; nil means Output is it.
	Document json.RawMessage
}

// HostCall is the CallFunc of a host: host.Host.Call (status and trust
// re-checked, grants and limits recomputed, input and output validated
// against the manifest's schemas), then, as the daemon's API does, the
// output is read with a2ui.ReadResult: a document is validated, an update
// is applied to the empty document of its surface; a refusal fails the
// call with the validator's error. Nothing keeps the documents (no form
// submits).
func HostCall(h *host.Host) CallFunc {
	return func(ctx context.Context, skillID, toolID string, input json.RawMessage) (*Output, error) {
		res, err := h.Call(ctx, skillID, toolID, input)
		var out *Output
		if res != nil {
			out = &Output{Output: res.Output, SkillID: res.SkillID, Version: res.Version, InvocationID: res.InvocationID, ToolError: res.ToolError}
		}
		if err != nil {
			return out, err
		}
		shown, err := a2ui.ReadResult(out.Output, nil)
		if err != nil {
			err = fmt.Errorf("tool %s of %s returned A2UI the host refuses: %w", toolID, out.SkillID, err)
		} else if shown != nil {
			out.A2UI = &A2UIRef{Surface: shown.Doc.Surface}
			if shown.Patch != nil {
				out.A2UI.Document = shown.JSON
			}
		}
		if err != nil {
			out.Output = nil
			return out, err
		}
		return out, nil
	}
}
