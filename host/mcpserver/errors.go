package mcpserver

import (
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// Sentinels of the MCP server. A call's failure carries the host's code
// (errcode.Of); these are the server's own.
var (
	// ErrApprovalDeclined is a call the user did not approve (declined,
	// dismissed, or answered approve = false).
	ErrApprovalDeclined = errcode.New("approval_declined", "the user did not approve the tool call")
	// ErrApprovalRequired is a call of a tool that needs approval from a
	// client that cannot be asked (no elicitation capability), refused
	// because the server is configured to deny those (the default).
	ErrApprovalRequired = errcode.New("approval_required", "the tool needs approval and the client cannot ask for it")
	// ErrApprovalFailed is an approval request the client answered with an
	// error.
	ErrApprovalFailed = errcode.New("approval_failed", "asking the client for approval failed")
	// ErrUnknownTool is a call of a name the server does not serve: the
	// shared unknown_tool sentinel, the one host.ErrUnknownTool is too.
	ErrUnknownTool = errcode.ErrUnknownTool
	// ErrHooksOnly is a call of a tool its manifest marks hooks_only: it
	// runs from hooks only, and the server does not list it either.
	ErrHooksOnly = errcode.New("tool_hooks_only", "the tool runs from hooks only")
	// ErrClosed is a session started after Close.
	ErrClosed = errcode.New("mcp_server_closed", "the MCP server is closed")
	// ErrInvalidOption is an Options value New refuses.
	ErrInvalidOption = errcode.New("mcp_option_invalid", "invalid MCP server option")
)

// Fallback is what the server does with a call that needs approval when the
// client declared no elicitation capability.
type Fallback string

// The fallbacks.
const (
	// FallbackDeny refuses the call with ErrApprovalRequired (the default).
	FallbackDeny Fallback = "deny"
	// FallbackAllow runs it without asking (logged at warn).
	FallbackAllow Fallback = "allow"
)

// ParseFallback parses "deny" or "allow" ("" is deny).
func ParseFallback(s string) (Fallback, error) {
	switch f := Fallback(strings.ToLower(strings.TrimSpace(s))); f {
	case "", FallbackDeny:
		return FallbackDeny, nil
	case FallbackAllow:
		return FallbackAllow, nil
	default:
		return "", fmt.Errorf("%w: approval_without_elicitation %q is not \"deny\" or \"allow\"", ErrInvalidOption, s)
	}
}
