package sidecarplugin

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// Error is a failure a sidecar reported in a LoadSkillResponse or an
// InvokeResponse: a stable snake_case code (the runtime's, such as
// "fuel_exhausted" or "link_error", or the sidecar's own, such as
// "module_hash_mismatch") and a message. It implements errcode.Coder, and
// unwraps to the code's sentinel.
type Error struct {
	// Op is the RPC that failed: "load_skill" or "invoke".
	Op string
	// ErrorCode is the stable code; Code returns it.
	ErrorCode string
	Message   string
}

// Error implements error. The sidecar's message is quoted, never
// interpreted: it may carry guest text.
func (e *Error) Error() string {
	return fmt.Sprintf("sidecar: %s: %s: %q", e.Op, e.ErrorCode, e.Message)
}

// Code returns the stable code of the failure (errcode.Coder).
func (e *Error) Code() string { return e.ErrorCode }

// Unwrap returns the sentinel of the code (errcode.Lookup), so errors.Is
// answers for a sidecar's failure as it does for a local one; nil when the
// code's package is not linked into the program (the runtime's own codes,
// such as fuel_exhausted, in the host: compare errcode.Of instead).
func (e *Error) Unwrap() error {
	if s := errcode.Lookup(e.ErrorCode); s != nil {
		return s
	}
	return nil
}

// Client is the supervisor's typed client of one sidecar, dispensed by
// go-plugin (see ClientPlugins). Every method takes a ctx that bounds that
// RPC only. Responses are capped at MaxResponseBytes. A Client is safe for
// concurrent use; it ends when its go-plugin client is killed.
type Client struct {
	rpc      sidecarv1.SidecarServiceClient
	brokerID uint32
	// serveBroker starts serving the broker on brokerID; LoadSkill runs it
	// once, just before the sidecar dials it (nil: served already, or no
	// broker).
	serveBroker func()
	serveOnce   sync.Once

	streamMu sync.Mutex
	calls    *callStream // the Calls stream; nil before the first Call
	unary    bool        // the sidecar serves no Calls: Call sends Invokes
	closed   bool
}

// NewClient returns a Client over an established connection to a sidecar
// (for tests and for transports other than go-plugin). brokerID is the
// GRPCBroker id of the supervisor's BrokerService, or 0 for none.
func NewClient(conn grpc.ClientConnInterface, brokerID uint32) *Client {
	return &Client{rpc: sidecarv1.NewSidecarServiceClient(conn), brokerID: brokerID}
}

// BrokerID returns the GRPCBroker id on which the supervisor's Broker is
// served for this sidecar, or 0 when it has none.
func (c *Client) BrokerID() uint32 { return c.brokerID }

var capRecv = grpc.MaxCallRecvMsgSize(MaxResponseBytes)

// LoadSkill loads the skill's module in the sidecar. When req.BrokerId is 0
// the Client's broker id is sent (req is not modified). A load failure
// returns the response and an *Error with its code.
func (c *Client) LoadSkill(ctx context.Context, req *sidecarv1.LoadSkillRequest) (*sidecarv1.LoadSkillResponse, error) {
	if req.GetBrokerId() == 0 && c.brokerID != 0 {
		req = proto.CloneOf(req)
		req.BrokerId = c.brokerID
	}
	if c.serveBroker != nil {
		c.serveOnce.Do(c.serveBroker)
	}
	resp, err := c.rpc.LoadSkill(ctx, req, capRecv)
	if err != nil {
		return nil, fmt.Errorf("sidecar: load_skill: %w", err)
	}
	if resp.GetErrorCode() != "" {
		return resp, &Error{Op: "load_skill", ErrorCode: resp.GetErrorCode(), Message: resp.GetErrorMessage()}
	}
	return resp, nil
}

// Invoke runs one tool call. A call that ends in another outcome than
// success returns the response (with its stats and logs) and an *Error with
// the outcome's code; a tool error's details are in the response's
// tool_error.
func (c *Client) Invoke(ctx context.Context, req *sidecarv1.InvokeRequest) (*sidecarv1.InvokeResponse, error) {
	resp, err := c.rpc.Invoke(ctx, req, capRecv)
	if err != nil {
		return nil, fmt.Errorf("sidecar: invoke: %w", err)
	}
	if resp.GetErrorCode() != "" {
		return resp, &Error{Op: "invoke", ErrorCode: resp.GetErrorCode(), Message: resp.GetErrorMessage()}
	}
	return resp, nil
}

// Health reports the sidecar's health.
func (c *Client) Health(ctx context.Context) (*sidecarv1.HealthResponse, error) {
	resp, err := c.rpc.Health(ctx, &sidecarv1.HealthRequest{}, capRecv)
	if err != nil {
		return nil, fmt.Errorf("sidecar: health: %w", err)
	}
	return resp, nil
}

// Describe reports what the sidecar runs.
func (c *Client) Describe(ctx context.Context) (*sidecarv1.DescribeResponse, error) {
	resp, err := c.rpc.Describe(ctx, &sidecarv1.DescribeRequest{}, capRecv)
	if err != nil {
		return nil, fmt.Errorf("sidecar: describe: %w", err)
	}
	return resp, nil
}

// Stop asks the sidecar to close its module and engine and end. It returns
// once they are closed; the process exits right after (the caller still
// Kills its go-plugin client, which then finds it gone or ends it).
func (c *Client) Stop(ctx context.Context) error {
	if _, err := c.rpc.Stop(ctx, &sidecarv1.StopRequest{}, capRecv); err != nil {
		return fmt.Errorf("sidecar: stop: %w", err)
	}
	return nil
}
