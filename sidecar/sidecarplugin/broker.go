package sidecarplugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"

	"github.com/palyra-go/palyra/sdk/abi"
)

// ABICode is a negative host-function result of sdk/ABI.md §7. It is
// package abi's type (pure Go), the same one sidecar/internal/wasmrt uses.
type ABICode = abi.Code

// The host-function error codes of sdk/ABI.md §7.
const (
	CodeNotGranted      = abi.CodeNotGranted
	CodeDenied          = abi.CodeDenied
	CodeInvalidRequest  = abi.CodeInvalidRequest
	CodeTooLarge        = abi.CodeTooLarge
	CodeUpstreamFailure = abi.CodeUpstreamFailure
	CodeTimeout         = abi.CodeTimeout
	CodeQuotaExceeded   = abi.CodeQuotaExceeded
	CodeUnavailable     = abi.CodeUnavailable
	CodeInternal        = abi.CodeInternal
)

// CapabilityKind is the kind of capability a handle stands for: "http",
// "secret", "storage" or "channel".
type CapabilityKind string

// Capability kinds, with handle bases 10000, 20000, 30000 and 40000.
const (
	KindHTTP    CapabilityKind = "http"
	KindSecret  CapabilityKind = "secret"
	KindStorage CapabilityKind = "storage"
	KindChannel CapabilityKind = "channel"
)

// CapabilityRequest is one capability-call of a guest, as the sidecar checked
// it (call count, pointer bounds, handle granted, size, JSON object). The
// broker must check it again: the sidecar is untrusted once guest code ran.
type CapabilityRequest struct {
	InvocationID string
	SkillID      string
	ToolID       string
	Kind         CapabilityKind
	// Handle is the granted handle the guest passed.
	Handle int32
	// Grant is what the handle stands for (a name, never a secret value).
	Grant string
	// Request is the guest's request document, a JSON object.
	Request []byte
}

// CapabilityError is how a Broker refuses a capability request: the guest's
// capability-call returns Code and reads Message. Message is shown to the
// guest, so it must not carry secrets.
type CapabilityError struct {
	Code    ABICode
	Message string
}

// Error implements error.
func (e *CapabilityError) Error() string {
	return fmt.Sprintf("capability error %s: %q", e.Code, e.Message)
}

// Broker performs capability operations for a sidecar's guests; the
// supervisor implements it. Call returns the response document or an error:
// a *CapabilityError is passed to the guest as is, a context error becomes
// "timeout", anything else "internal" without detail. Call runs while the
// guest waits; ctx carries the call's deadline. A Broker must be safe for
// concurrent use.
type Broker interface {
	Call(ctx context.Context, req CapabilityRequest) ([]byte, error)
}

var kindToProto = map[CapabilityKind]sidecarv1.CapabilityKind{
	KindHTTP:    sidecarv1.CapabilityKind_CAPABILITY_KIND_HTTP,
	KindSecret:  sidecarv1.CapabilityKind_CAPABILITY_KIND_SECRET,
	KindStorage: sidecarv1.CapabilityKind_CAPABILITY_KIND_STORAGE,
	KindChannel: sidecarv1.CapabilityKind_CAPABILITY_KIND_CHANNEL,
}

// KindToProto converts a capability kind to its wire value
// (CAPABILITY_KIND_UNSPECIFIED for an unknown kind).
func KindToProto(k CapabilityKind) sidecarv1.CapabilityKind { return kindToProto[k] }

// KindFromProto converts a wire capability kind ("" for an unknown kind).
func KindFromProto(k sidecarv1.CapabilityKind) CapabilityKind {
	for g, p := range kindToProto {
		if p == k {
			return g
		}
	}
	return ""
}

// ErrorCodeToProto converts an ABI code to its wire value: ABI code -N is
// wire value N. Codes outside sdk/ABI.md §7 become internal.
func ErrorCodeToProto(c ABICode) sidecarv1.CapabilityErrorCode {
	if !c.Valid() {
		c = CodeInternal
	}
	return sidecarv1.CapabilityErrorCode(-c)
}

// ErrorCodeFromProto converts a wire error code to its ABI code. Unknown and
// unspecified values become CodeInternal.
func ErrorCodeFromProto(c sidecarv1.CapabilityErrorCode) ABICode {
	a := ABICode(-int32(c))
	if !a.Valid() {
		return CodeInternal
	}
	return a
}

// maxGuestMessageBytes caps a CapabilityError message shown to a guest.
const maxGuestMessageBytes = 1 << 10

// brokerServer serves a Broker as BrokerService, on the supervisor side.
type brokerServer struct {
	sidecarv1.UnimplementedBrokerServiceServer
	broker Broker
}

func (s *brokerServer) CapabilityCall(ctx context.Context, req *sidecarv1.CapabilityCallRequest) (*sidecarv1.CapabilityCallResponse, error) {
	kind := KindFromProto(req.GetKind())
	if kind == "" {
		return refuse(CodeInvalidRequest, "unknown capability kind"), nil
	}
	resp, err := s.broker.Call(ctx, CapabilityRequest{
		InvocationID: req.GetInvocationId(),
		SkillID:      req.GetSkillId(),
		ToolID:       req.GetToolId(),
		Kind:         kind,
		Handle:       req.GetHandle(),
		Grant:        req.GetGrant(),
		Request:      req.GetRequest(),
	})
	var ce *CapabilityError
	switch {
	case err == nil:
		if len(resp) > MaxCapabilityResponseBytes {
			return refuse(CodeTooLarge, "response too large"), nil
		}
		return &sidecarv1.CapabilityCallResponse{Response: resp}, nil
	case errors.As(err, &ce):
		msg := ce.Message
		if len(msg) > maxGuestMessageBytes {
			msg = msg[:maxGuestMessageBytes]
		}
		// proto3 strings must be valid UTF-8.
		return refuse(ce.Code, strings.ToValidUTF8(msg, "\uFFFD")), nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return refuse(CodeTimeout, "capability call timed out"), nil
	default:
		// No detail: the broker's error may name things the guest must not see.
		return refuse(CodeInternal, "internal error"), nil
	}
}

func refuse(code ABICode, msg string) *sidecarv1.CapabilityCallResponse {
	return &sidecarv1.CapabilityCallResponse{Error: &sidecarv1.CapabilityError{
		Code: ErrorCodeToProto(code), Message: msg,
	}}
}

// brokerClient is a Broker that forwards to the supervisor's BrokerService,
// on the sidecar side.
type brokerClient struct {
	rpc sidecarv1.BrokerServiceClient
}

func (b *brokerClient) Call(ctx context.Context, req CapabilityRequest) ([]byte, error) {
	resp, err := b.rpc.CapabilityCall(ctx, &sidecarv1.CapabilityCallRequest{
		InvocationId: req.InvocationID,
		SkillId:      req.SkillID,
		ToolId:       req.ToolID,
		Kind:         KindToProto(req.Kind),
		Handle:       req.Handle,
		Grant:        req.Grant,
		Request:      req.Request,
	})
	if err != nil {
		switch status.Code(err) {
		case codes.DeadlineExceeded:
			return nil, fmt.Errorf("sidecar plugin: broker: %w", context.DeadlineExceeded)
		case codes.Canceled:
			return nil, fmt.Errorf("sidecar plugin: broker: %w", context.Canceled)
		case codes.Unavailable:
			return nil, &CapabilityError{Code: CodeUnavailable, Message: "broker unavailable"}
		}
		return nil, fmt.Errorf("sidecar plugin: broker: %w", err)
	}
	if e := resp.GetError(); e != nil {
		return nil, &CapabilityError{Code: ErrorCodeFromProto(e.GetCode()), Message: e.GetMessage()}
	}
	return resp.GetResponse(), nil
}

// NewBrokerServer returns b as a BrokerService implementation, for a
// supervisor that serves it on a transport of its own (GRPCPlugin.GRPCClient
// does this on the GRPCBroker). A *CapabilityError from b reaches the guest
// with its code and message (cut to 1 KiB); a context error becomes
// "timeout"; any other error "internal" without detail.
func NewBrokerServer(b Broker) sidecarv1.BrokerServiceServer { return &brokerServer{broker: b} }

// NewBrokerClient returns a Broker that forwards to the BrokerService on
// conn, as the sidecar does: a refusal comes back as a *CapabilityError, a
// gRPC deadline or cancellation as the context error, an unavailable broker
// as CodeUnavailable.
func NewBrokerClient(conn grpc.ClientConnInterface) Broker {
	return &brokerClient{rpc: sidecarv1.NewBrokerServiceClient(conn)}
}
