package cluster

import (
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// wireVersion is the version of the call messages; a node refuses a
// request of another version with bad_request.
const wireVersion = 1

// callEnvelope is a call request sent to another node.
type callEnvelope struct {
	V       int              `json:"v"`
	Request host.CallRequest `json:"request"`
	// Principal is who acts, when the caller's context named one.
	Principal string `json:"principal,omitempty"`
	// Deadline is when the call must have ended (absolute).
	Deadline time.Time `json:"deadline"`
	// AcceptBy is when the caller stops waiting for an accept: a node
	// that receives the request later does not start it.
	AcceptBy time.Time `json:"accept_by"`
	// Caller is the calling node's name.
	Caller string `json:"caller"`
	// Approved says the call needed approval and the calling node used
	// the approval it came with (host.CallCheck.Approved): approvals live
	// on the node where the call entered, so the serving node runs it
	// with host.CallApproved and Request.Input is the approved input.
	Approved bool `json:"approved,omitempty"`
}

// Reply kinds: a node answers a request with replyAccepted then
// replyResult, or with replyBusy alone (it did not start the call).
const (
	replyAccepted = "accepted"
	replyBusy     = "busy"
	replyResult   = "result"
)

// callReply is one of the (one or two) answers to a call request.
type callReply struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	// Node is the answering node.
	Node   string           `json:"node"`
	Result *host.CallResult `json:"result,omitempty"`
	Error  *wireError       `json:"error,omitempty"`
}

// wireError is an error as it crosses the wire: its stable code and
// message.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RemoteError is an error another node returned for a call it ran. Its
// Unwrap returns the sentinel registered for the code (errcode.Lookup),
// so errors.Is gives the same answer as for the error on that node.
type RemoteError struct {
	// Node is the node that ran the call.
	Node string
	// ErrCode is the error's stable code.
	ErrCode string
	// Message is the error's message on that node.
	Message string
}

// Error returns the far node's message.
func (e *RemoteError) Error() string { return e.Message + " (on node " + e.Node + ")" }

// Code returns the stable code (errcode.Coder).
func (e *RemoteError) Code() string { return e.ErrCode }

// Unwrap returns the sentinel of the code, nil when none is registered.
func (e *RemoteError) Unwrap() error {
	if s := errcode.Lookup(e.ErrCode); s != nil {
		return s
	}
	return nil
}

// errorOf rebuilds the error of a reply: a *RemoteError, inside a
// *host.CallError when the reply carries the call's result.
func (r *callReply) errorOf() error {
	re := &RemoteError{Node: r.Node, ErrCode: r.Error.Code, Message: r.Error.Message}
	if re.ErrCode == "" {
		re.ErrCode = errcode.Internal
	}
	if r.Result != nil {
		return &host.CallError{Err: re, Result: r.Result}
	}
	return re
}
