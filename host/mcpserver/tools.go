package mcpserver

import (
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
)

// Keys of the _meta the server puts on tools and results.
const (
	MetaSkillID      = "palyra/skill_id"
	MetaToolID       = "palyra/tool_id"
	MetaVersion      = "palyra/version"
	MetaInvocationID = "palyra/invocation_id"
	// MetaApproval is true on a tool that asks for approval before it runs.
	MetaApproval = "palyra/requires_approval"
	// MetaDocumentID is the daemon's id of a kept A2UI document, on the
	// embedded resource of an A2UI result (POST /v1/a2ui/{id}/submit).
	MetaDocumentID = "palyra/a2ui_document_id"
	// MetaError is the ResultError of an error result (ErrorOf reads it).
	MetaError = "palyra/error"
)

// Tool is one tool of an active skill, as the service's catalog lists it
// (host.CatalogTool), with the MCP mapping as methods.
type Tool host.CatalogTool

// Ref is the tool's ToolRef.
func (t Tool) Ref() ToolRef { return ToolRef{SkillID: t.SkillID, ToolID: t.Tool.ID} }

// RequiresApproval reports whether a call needs a human's approval first:
// the manifest's risk.requires_approval or risk.default_sensitive (Palyra
// derives a tool's requires_approval the same way).
func (t Tool) RequiresApproval() bool {
	return t.Tool.Risk.RequiresApproval || t.Tool.Risk.DefaultSensitive
}

// MCPTool is the MCP definition of t under name:
//
//   - title: the manifest's tool name; description: its description;
//   - inputSchema: input_schema, with "type": "object" added when it has no
//     type (MCP requires an object schema; a skill's input is a JSON
//     object);
//   - outputSchema: output_schema when its type is "object", else none (the
//     result's structuredContent is then {"result": output});
//   - annotations: see Annotations;
//   - _meta: palyra/skill_id, palyra/tool_id, palyra/version and
//     palyra/requires_approval.
func (t Tool) MCPTool(name string) *mcp.Tool {
	in := maps.Clone(t.Tool.InputSchema)
	if in == nil {
		in = map[string]any{}
	}
	if _, ok := in["type"]; !ok {
		in["type"] = "object"
	}
	mt := &mcp.Tool{
		Name:        name,
		Title:       t.Tool.Name,
		Description: t.Tool.Description,
		InputSchema: in,
		Annotations: t.Annotations(),
		Meta: mcp.Meta{
			MetaSkillID: t.SkillID, MetaToolID: t.Tool.ID, MetaVersion: t.Version,
			MetaApproval: t.RequiresApproval(),
		},
	}
	if t.ObjectOutput() {
		mt.OutputSchema = t.Tool.OutputSchema
	}
	return mt
}

// ObjectOutput reports whether the output_schema is an object schema, so
// that it is advertised as the tool's outputSchema and the output is the
// structuredContent as it is.
func (t Tool) ObjectOutput() bool {
	typ, _ := t.Tool.OutputSchema["type"].(string)
	return typ == "object"
}

// Annotations are the MCP hints of t, read from its risk and its skill's
// capabilities:
//
//   - title: the manifest's tool name;
//   - readOnlyHint: true only for a tool that needs no approval in a skill
//     that may not write anything (no filesystem write_roots, no channels,
//     no HTTP egress); the manifest cannot say more;
//   - destructiveHint: true for a tool that needs approval (risk
//     default_sensitive or requires_approval), false otherwise;
//   - openWorldHint: true when the skill may reach outside the host (HTTP
//     egress or channels), false otherwise;
//   - idempotentHint: false (nothing in a manifest says so).
func (t Tool) Annotations() *mcp.ToolAnnotations {
	c := t.Capabilities
	open := len(c.HTTPEgressAllowlist) > 0 || len(c.Channels) > 0
	writes := open || len(c.Filesystem.WriteRoots) > 0
	sensitive := t.RequiresApproval()
	return &mcp.ToolAnnotations{
		Title:           t.Tool.Name,
		ReadOnlyHint:    !sensitive && !writes,
		DestructiveHint: &sensitive,
		OpenWorldHint:   &open,
	}
}

// fingerprint is what tells two definitions of a name apart: the tool as
// served and the skill version behind it.
func fingerprint(mt *mcp.Tool) string {
	b, err := json.Marshal(mt)
	if err != nil {
		return "unmarshalable:" + err.Error()
	}
	return string(b)
}
