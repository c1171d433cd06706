package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/textutil"
)

// A2UIMIMEType is the MIME type of the embedded resource an A2UI result
// carries.
const A2UIMIMEType = "application/vnd.palyra.a2ui+json"

// A2UIScheme is the URI scheme of that resource:
// palyra-a2ui://<skill_id>/<surface>, the surface path-escaped.
const A2UIScheme = "palyra-a2ui"

// MaxSummaryBytes caps the input summary an approval request shows.
const MaxSummaryBytes = 512

// methodCallTool is the MCP method of a tool call; methodListTools lists
// the tools.
const (
	methodCallTool  = "tools/call"
	methodListTools = "tools/list"
)

// unknownTool is a receiving middleware that answers a tools/call for a
// name the server does not serve with a clear protocol error (JSON-RPC
// -32602, as MCP asks for unknown tools), its message and data carrying
// the code unknown_tool, or tool_hooks_only for the name a hooks_only tool
// would have. Before a tools/list it brings the served tools up to date
// with the catalog (Sync).
func (s *Server) unknownTool(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodListTools {
			// The list follows the catalog's events, a moment behind it: a
			// client listing right after an install must see the new
			// tools, so the list is brought up to date first (a no-op when
			// the catalog's generation has not moved).
			if _, err := s.Sync(ctx, false); err != nil {
				s.log.Warn("syncing the MCP tool list before tools/list", "error", err)
			}
		}
		if method == methodCallTool {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && s.lookup(r.Params.Name) == nil {
				err := fmt.Errorf("%w: %q (it may have been quarantined, disabled or removed: list the tools again)", ErrUnknownTool, r.Params.Name)
				if ref, ok := s.hooksOnlyTool(r.Params.Name); ok {
					err = fmt.Errorf("%w: tool %s of skill %s is marked hooks_only in its manifest; MCP clients cannot call it", ErrHooksOnly, ref.ToolID, ref.SkillID)
				}
				data, _ := json.Marshal(map[string]string{"code": errcode.Of(err)})
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: errcode.Of(err) + ": " + err.Error(), Data: data}
			}
		}
		return next(ctx, method, req)
	}
}

// handle is the handler of every served tool.
func (s *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sv := s.lookup(req.Params.Name)
	if sv == nil {
		return errorResult(fmt.Errorf("%w: %q", ErrUnknownTool, req.Params.Name), nil), nil
	}
	t := sv.tool
	// The call ends when the client cancels it (the SDK cancels ctx on
	// notifications/cancelled) or the server closes.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.base, cancel)
	defer stop()

	input := req.Params.Arguments
	if trimmed := bytes.TrimSpace(input); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		input = json.RawMessage("{}")
	}
	start := time.Now()
	log := s.log.With("tool", req.Params.Name, "skill_id", t.SkillID, "tool_id", t.Tool.ID, "session", req.Session.ID())
	if tok := req.Params.GetProgressToken(); tok != nil {
		defer s.progress(ctx, req.Session, tok, req.Params.Name)()
	}
	call := host.CallRequest{SkillID: t.SkillID, ToolID: t.Tool.ID, Input: input}
	out, err := s.opts.Service.Call(ctx, call)
	if pa := host.PendingApprovalOf(err); pa != nil {
		// The host holds the call for approval (the tool's risk flags, the
		// profile's require_approval, a run hook): ask the client's user,
		// record the answer on the approval, and run the call with it.
		if err := s.approve(ctx, req, t, input, pa); err != nil {
			log.Info("tool call not approved", "code", errcode.Of(err), "approval_id", pa.ID, "error", err)
			return errorResult(err, nil), nil
		}
		call.ApprovalID = pa.ID
		out, err = s.opts.Service.Call(ctx, call)
	}
	if err != nil {
		log.Debug("tool call failed", "code", errcode.Of(err), "duration", time.Since(start), "error", err)
		return errorResult(err, host.CallResultOf(err)), nil
	}
	log.Debug("tool call", "duration", time.Since(start))
	return successResult(out), nil
}

// progress sends a progress notification for token every
// ProgressInterval while the call runs (the first one after one interval,
// so a call shorter than that sends none). The returned func stops it.
func (s *Server) progress(ctx context.Context, ss *mcp.ServerSession, token any, name string) func() {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		t := time.NewTicker(s.opts.ProgressInterval)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(n),
				Message: fmt.Sprintf("%s running for %s", name, time.Since(start).Round(time.Second)),
			})
			if err != nil && ctx.Err() == nil {
				s.log.Debug("progress notification failed", "tool", name, "error", err)
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// approvalSchema is the form of an approval request: one boolean.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Run the tool with this input"},
	},
	"required": []string{"approve"},
}

// approve asks the client's user to approve the call pa holds (a call
// of t with input), by elicitation, or applies the fallback when the
// client cannot be asked, and records the answer on the approval with
// the principal of ctx (DecideApproval: journaled), so that the call is
// asked about once. A nil error means the approval was given.
func (s *Server) approve(ctx context.Context, req *mcp.CallToolRequest, t Tool, input json.RawMessage, pa *host.PendingApproval) error {
	if !canElicit(req.Session) {
		if s.opts.ApprovalWithoutElicitation == FallbackAllow {
			s.log.Warn("tool needs approval; the client cannot be asked and approval_without_elicitation is allow: running it", "skill_id", t.SkillID, "tool_id", t.Tool.ID, "approval_id", pa.ID)
			return s.decide(ctx, pa, true, "approved by the MCP endpoint's approval_without_elicitation = allow (the client cannot be asked)")
		}
		err := fmt.Errorf("%w: tool %s (%s) of skill %s %s needs a human's approval (%s), and this client declared no elicitation capability to ask for it; use a client that supports elicitation, or configure approval_without_elicitation = \"allow\"",
			ErrApprovalRequired, req.Params.Name, t.Tool.ID, t.SkillID, t.Version, host.ReasonsText(pa.Reasons))
		return s.refuse(ctx, pa, "the MCP client cannot be asked (no elicitation capability)", err)
	}
	msg := fmt.Sprintf("Skill %s %s asks to run its tool %q (%s) with input %s. It needs approval (%s). Approve?", t.SkillID, t.Version, t.Tool.Name, t.Tool.ID, summary(input), host.ReasonsText(pa.Reasons))
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approvalSchema})
	switch {
	case err != nil && ctx.Err() != nil:
		return s.refuse(ctx, pa, "the MCP call ended while asking", fmt.Errorf("%w: waiting for approval: %w", ErrApprovalDeclined, ctx.Err()))
	case err != nil:
		return s.refuse(ctx, pa, "asking the MCP client failed", fmt.Errorf("%w: %v", ErrApprovalFailed, err))
	}
	switch res.Action {
	case "accept":
		if ok, _ := res.Content["approve"].(bool); ok {
			return s.decide(ctx, pa, true, "approved by the MCP client's user (elicitation)")
		}
		return s.refuse(ctx, pa, "the MCP client's user answered approve = false", fmt.Errorf("%w: %s of skill %s: approve was false", ErrApprovalDeclined, t.Tool.ID, t.SkillID))
	case "decline":
		return s.refuse(ctx, pa, "declined by the MCP client's user", fmt.Errorf("%w: %s of skill %s: the user declined", ErrApprovalDeclined, t.Tool.ID, t.SkillID))
	default:
		return s.refuse(ctx, pa, fmt.Sprintf("the MCP client's user dismissed the request (%s)", res.Action),
			fmt.Errorf("%w: %s of skill %s: the user dismissed the request (%q)", ErrApprovalDeclined, t.Tool.ID, t.SkillID, res.Action))
	}
}

// decide records a decision on pa. An approval decided meanwhile by
// someone else (an operator, in the console) keeps that decision: the call
// made with it then gets the answer it carries.
func (s *Server) decide(ctx context.Context, pa *host.PendingApproval, approve bool, reason string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := s.opts.Service.DecideApproval(dctx, host.DecideRequest{ID: pa.ID, Approve: approve, Reason: reason})
	if err != nil && !errors.Is(err, host.ErrApprovalDecided) {
		return fmt.Errorf("%w: recording the answer on approval %s: %w", ErrApprovalFailed, pa.ID, err)
	}
	return nil
}

// refuse denies pa with reason and returns cause (or why the denial could
// not be recorded).
func (s *Server) refuse(ctx context.Context, pa *host.PendingApproval, reason string, cause error) error {
	if err := s.decide(ctx, pa, false, reason); err != nil {
		s.log.Warn("recording a refused approval failed", "approval_id", pa.ID, "error", err)
	}
	return cause
}

// canElicit reports whether the client declared form elicitation (an
// elicitation capability with neither mode named counts as form).
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// summary is input as compact JSON, cut to MaxSummaryBytes (on a rune
// boundary) with "…" when longer.
func summary(input json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, input); err != nil {
		b.Reset()
		b.Write(input)
	}
	return textutil.Ellipsize(b.String(), MaxSummaryBytes, "…")
}

// successResult is the MCP result of a call that produced out:
// structuredContent is the output when it is a JSON object, else
// {"result": output}; the text content is the output's JSON; an A2UI
// document (the whole document, also after an update) is also an embedded
// resource.
func successResult(out *host.CallResult) *mcp.CallToolResult {
	raw := bytes.TrimSpace(out.Output)
	if len(raw) == 0 {
		raw = []byte("null")
	}
	var structured any = json.RawMessage(raw)
	if raw[0] != '{' {
		structured = map[string]any{"result": json.RawMessage(raw)}
	}
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(raw)}},
		StructuredContent: structured,
		Meta:              resultMeta(out),
	}
	if out.A2UI != nil {
		doc := out.A2UI.Document
		if len(doc) == 0 {
			doc = raw
		}
		rc := &mcp.ResourceContents{URI: A2UIURI(out.SkillID, out.A2UI.Surface), MIMEType: A2UIMIMEType, Text: string(doc)}
		if out.A2UI.DocumentID != "" {
			rc.Meta = mcp.Meta{MetaDocumentID: out.A2UI.DocumentID}
		}
		res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: rc})
	}
	return res
}

// A2UIURI is the URI of the embedded resource of an A2UI document.
func A2UIURI(skillID, surface string) string {
	return A2UIScheme + "://" + url.PathEscape(skillID) + "/" + url.PathEscape(surface)
}

// errorResult is the MCP result of a failed call: isError, the text
// "<code>: <message>" and the error under _meta's MetaError, {"code",
// "message"} (plus "tool_error" when the tool reported one). out is what
// the sidecar reported, nil when the call never reached one. There is no
// structuredContent: a client that checks it against the tool's
// outputSchema would reject an error shape there. ErrorOf reads it back.
func errorResult(err error, out *host.CallResult) *mcp.CallToolResult {
	code := errcode.Of(err)
	e := ResultError{Code: code, Message: errcode.Readable(err)}
	if full := err.Error(); full != e.Message {
		e.Detail = full
	}
	if out != nil {
		e.ToolError = out.ToolError
	}
	m := resultMeta(out)
	if m == nil {
		m = mcp.Meta{}
	}
	m[MetaError] = e
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: code + ": " + e.Message}},
		Meta:    m,
	}
}

// ResultError is the error of a failed tool call, as a result carries it
// under _meta's MetaError.
type ResultError struct {
	// Code is the stable error code (errcode), e.g. "tool_error",
	// "invalid_input", "approval_declined".
	Code string `json:"code"`
	// Message is the readable sentence (errcode.Readable: from the code's
	// sentence on), the text the result's content shows after the code.
	Message string `json:"message"`
	// Detail is the whole error chain when it says more than Message
	// (which step failed where), "" otherwise.
	Detail string `json:"detail,omitempty"`
	// ToolError is what the tool itself reported, when it did.
	ToolError *host.ToolError `json:"tool_error,omitempty"`
}

// ErrorOf returns the error of a tool result this server made: ok is false
// when res is not an error result or carries no ResultError.
func ErrorOf(res *mcp.CallToolResult) (e ResultError, ok bool) {
	if res == nil || !res.IsError || res.Meta == nil {
		return e, false
	}
	v, found := res.Meta[MetaError]
	if !found {
		return e, false
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &e) != nil || e.Code == "" {
		return ResultError{}, false
	}
	return e, true
}

func resultMeta(out *host.CallResult) mcp.Meta {
	if out == nil || out.SkillID == "" {
		return nil
	}
	m := mcp.Meta{MetaSkillID: out.SkillID, MetaVersion: out.Version}
	if out.InvocationID != "" {
		m[MetaInvocationID] = out.InvocationID
	}
	return m
}
