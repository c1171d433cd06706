package sidecarplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// callStream is one Calls stream of a Client: its sends (one at a time),
// its calls in flight by number, and the goroutine that receives the
// replies and hands each to its call.
type callStream struct {
	stream sidecarv1.SidecarService_CallsClient
	cancel context.CancelFunc // ends the stream
	done   chan struct{}      // closed when the receiver has returned

	sendMu sync.Mutex

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan callResult
	err     error // why the stream broke; nil while it works
}

type callResult struct {
	resp *sidecarv1.InvokeResponse
	err  error
}

// errStreamClosed ends the calls in flight of a Client being closed.
var errStreamClosed = status.Error(codes.Canceled, "sidecar client closed")

// Call runs one tool call like Invoke, but over the Client's Calls stream:
// one long-lived gRPC stream carries every call, which saves the HTTP/2
// stream of each unary RPC. The stream is opened by the first call (and
// again after it broke); a sidecar that serves no Calls gets Invokes. ctx
// bounds the call: when it ends the sidecar is told to cancel the call,
// and Call returns ctx's error as a gRPC status, as Invoke does.
func (c *Client) Call(ctx context.Context, req *sidecarv1.InvokeRequest) (*sidecarv1.InvokeResponse, error) {
	cs, err := c.callStream(ctx)
	if err != nil {
		return nil, fmt.Errorf("sidecar: invoke: %w", err)
	}
	if cs == nil { // the sidecar serves no Calls
		return c.Invoke(ctx, req)
	}
	ch := make(chan callResult, 1)
	cs.mu.Lock()
	if cs.err != nil {
		err := cs.err
		cs.mu.Unlock()
		return nil, fmt.Errorf("sidecar: invoke: %w", err)
	}
	cs.next++
	n := cs.next
	cs.pending[n] = ch
	cs.mu.Unlock()

	cs.sendMu.Lock()
	err = cs.stream.Send(&sidecarv1.CallsRequest{Call: n, Frame: &sidecarv1.CallsRequest_Invoke{Invoke: req}})
	cs.sendMu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		// Not sent (io.EOF would be a broken stream, whose error the
		// receiver hands to every call in flight, this one included).
		cs.forget(n)
		return nil, fmt.Errorf("sidecar: invoke: %w", err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			if status.Code(r.err) == codes.Unimplemented {
				c.useInvoke()
				return c.Invoke(ctx, req)
			}
			return nil, fmt.Errorf("sidecar: invoke: %w", r.err)
		}
		if r.resp.GetErrorCode() != "" {
			return r.resp, &Error{Op: "invoke", ErrorCode: r.resp.GetErrorCode(), Message: r.resp.GetErrorMessage()}
		}
		return r.resp, nil
	case <-ctx.Done():
		if cs.forget(n) {
			cs.sendMu.Lock()
			_ = cs.stream.Send(&sidecarv1.CallsRequest{Call: n, Frame: &sidecarv1.CallsRequest_Cancel{Cancel: &sidecarv1.CancelCall{}}})
			cs.sendMu.Unlock()
		}
		return nil, fmt.Errorf("sidecar: invoke: %w", status.FromContextError(ctx.Err()).Err())
	}
}

// callStream returns the Client's working Calls stream, opening one when
// there is none or it broke; nil when the sidecar serves no Calls. ctx
// bounds the opening only.
func (c *Client) callStream(ctx context.Context) (*callStream, error) {
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	if c.closed {
		return nil, errStreamClosed
	}
	if c.unary {
		return nil, nil
	}
	if cs := c.calls; cs != nil {
		cs.mu.Lock()
		broken := cs.err != nil
		cs.mu.Unlock()
		if !broken {
			return cs, nil
		}
		cs.cancel()
		<-cs.done
		c.calls = nil
	}
	sctx, cancel := context.WithCancel(context.Background())
	// The stream outlives this call; only its opening is bounded by ctx.
	stop := context.AfterFunc(ctx, cancel)
	st, err := c.rpc.Calls(sctx, capRecv)
	if !stop() {
		cancel()
		if err == nil {
			err = status.FromContextError(ctx.Err()).Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	cs := &callStream{stream: st, cancel: cancel, done: make(chan struct{}), pending: map[uint64]chan callResult{}}
	go cs.receive()
	c.calls = cs
	return cs, nil
}

// useInvoke makes the Client send Invokes from now on (the sidecar
// answered Calls with Unimplemented).
func (c *Client) useInvoke() {
	c.streamMu.Lock()
	c.unary = true
	c.streamMu.Unlock()
}

// receive hands each reply to its call until the stream ends, then fails
// the calls still in flight with the stream's error.
func (cs *callStream) receive() {
	defer close(cs.done)
	for {
		r, err := cs.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = status.Error(codes.Unavailable, "the sidecar ended the calls stream")
			}
			cs.fail(err)
			return
		}
		cs.mu.Lock()
		ch := cs.pending[r.GetCall()]
		delete(cs.pending, r.GetCall())
		cs.mu.Unlock()
		if ch == nil {
			continue // a call given up on (canceled), or a number never sent
		}
		resp := r.GetResponse()
		if resp == nil {
			resp = &sidecarv1.InvokeResponse{ErrorCode: "sidecar_bad_reply", ErrorMessage: "a calls reply without a response"}
		}
		ch <- callResult{resp: resp}
	}
}

// fail records why the stream broke and ends its calls in flight.
func (cs *callStream) fail(err error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.err == nil {
		cs.err = err
	}
	for n, ch := range cs.pending {
		ch <- callResult{err: cs.err}
		delete(cs.pending, n)
	}
}

// forget removes call n from the calls in flight; false when its reply
// (or the stream's failure) was handed to it already.
func (cs *callStream) forget(n uint64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	_, ok := cs.pending[n]
	delete(cs.pending, n)
	return ok
}

// Close ends the Client's Calls stream (its calls in flight fail as
// canceled) and waits for its receiver. The Client makes no call after
// Close. It is idempotent.
func (c *Client) Close() {
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	c.closed = true
	if cs := c.calls; cs != nil {
		cs.fail(errStreamClosed)
		cs.cancel()
		<-cs.done
		c.calls = nil
	}
}
