package sidecarplugin_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// unaryOnly is a sidecar of before the Calls stream: Invoke only.
type unaryOnly struct {
	sidecarv1.UnimplementedSidecarServiceServer
	invokes atomic.Int32
}

func (u *unaryOnly) Invoke(_ context.Context, r *sidecarv1.InvokeRequest) (*sidecarv1.InvokeResponse, error) {
	u.invokes.Add(1)
	return &sidecarv1.InvokeResponse{Output: r.GetInput()}, nil
}

// TestCallFallsBackToInvoke: a sidecar that serves no Calls answers
// Call's first stream with Unimplemented; the call is made as an Invoke,
// and so is every later one (no stream opened again).
func TestCallFallsBackToInvoke(t *testing.T) {
	u := &unaryOnly{}
	c := sidecarplugin.NewClient(serve(t, func(s *grpc.Server) { sidecarv1.RegisterSidecarServiceServer(s, u) }), 0)
	defer c.Close()
	for i, in := range []string{`1`, `2`, `3`} {
		resp, err := c.Call(context.Background(), &sidecarv1.InvokeRequest{Input: []byte(in)})
		if err != nil || string(resp.GetOutput()) != in {
			t.Fatalf("call %d: %s, %v", i, resp.GetOutput(), err)
		}
	}
	if n := u.invokes.Load(); n != 3 {
		t.Errorf("%d Invokes, want 3", n)
	}
}

// streamer is a sidecar serving Calls by a script: it answers the calls
// of each stream in the reverse order of their arrival once `batch` are
// in, and breaks the stream on an input "break".
type streamer struct {
	sidecarv1.UnimplementedSidecarServiceServer
	batch    int
	streams  atomic.Int32
	received atomic.Int32 // invoke frames
	cancels  atomic.Int32
}

// waitReceived waits until the streamer got n invoke frames in all.
func (f *streamer) waitReceived(t *testing.T, n int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); f.received.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sidecar got %d calls, want %d", f.received.Load(), n)
		}
	}
}

func (f *streamer) Calls(st sidecarv1.SidecarService_CallsServer) error {
	f.streams.Add(1)
	var held []*sidecarv1.CallsRequest
	for {
		r, err := st.Recv()
		if err != nil {
			return nil
		}
		if r.GetCancel() != nil {
			f.cancels.Add(1)
			continue
		}
		f.received.Add(1)
		if string(r.GetInvoke().GetInput()) == `"break"` {
			return status.Error(codes.Internal, "stream broken on purpose")
		}
		held = append(held, r)
		if len(held) < f.batch {
			continue
		}
		for i := len(held) - 1; i >= 0; i-- {
			in := held[i].GetInvoke().GetInput()
			if err := st.Send(&sidecarv1.CallsResponse{Call: held[i].GetCall(), Response: &sidecarv1.InvokeResponse{Output: in}}); err != nil {
				return err
			}
		}
		held = nil
	}
}

// TestCallStream: replies that come back in another order than the calls
// reach their own call; a stream that breaks fails its calls in flight
// with its status and the next call opens a new one; a canceled call
// tells the sidecar; Close fails the calls in flight and later calls.
func TestCallStream(t *testing.T) {
	f := &streamer{batch: 4}
	c := sidecarplugin.NewClient(serve(t, func(s *grpc.Server) { sidecarv1.RegisterSidecarServiceServer(s, f) }), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	for _, in := range []string{`"a"`, `"b"`, `"c"`, `"d"`} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Call(ctx, &sidecarv1.InvokeRequest{Input: []byte(in)})
			if err != nil || string(resp.GetOutput()) != in {
				t.Errorf("call %s: got %s, %v", in, resp.GetOutput(), err)
			}
		}()
	}
	wg.Wait()

	// One call held by the batch, then the stream breaks under it.
	held := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, &sidecarv1.InvokeRequest{Input: []byte(`"held"`)})
		held <- err
	}()
	f.waitReceived(t, 5)
	if _, err := c.Call(ctx, &sidecarv1.InvokeRequest{Input: []byte(`"break"`)}); status.Code(err) != codes.Internal {
		t.Fatalf("the call that broke the stream: %v, want its Internal status", err)
	}
	if err := <-held; status.Code(err) != codes.Internal {
		t.Fatalf("a call in flight on the broken stream: %v, want the stream's Internal status", err)
	}

	// A new stream; a canceled call tells the sidecar.
	cctx, ccancel := context.WithCancel(ctx)
	ended := make(chan error, 1)
	go func() {
		_, err := c.Call(cctx, &sidecarv1.InvokeRequest{Input: []byte(`"x"`)})
		ended <- err
	}()
	f.waitReceived(t, 7)
	ccancel()
	if err := <-ended; status.Code(err) != codes.Canceled {
		t.Fatalf("canceled call: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.cancels.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.cancels.Load() != 1 || f.streams.Load() != 2 {
		t.Fatalf("the sidecar saw %d cancel frames on %d streams, want 1 on 2", f.cancels.Load(), f.streams.Load())
	}

	// Close ends a call in flight and refuses the next.
	go func() {
		_, err := c.Call(ctx, &sidecarv1.InvokeRequest{Input: []byte(`"y"`)})
		ended <- err
	}()
	f.waitReceived(t, 8)
	c.Close()
	if err := <-ended; status.Code(err) != codes.Canceled {
		t.Fatalf("a call in flight at Close: %v", err)
	}
	if _, err := c.Call(ctx, &sidecarv1.InvokeRequest{}); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("a call after Close: %v", err)
	}
}
