package sidecar_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// TestCallsStreamConcurrent: calls sent together on the one Calls stream
// each get their own reply (the echo tool returns the document of its own
// call), whatever order they finish in.
func TestCallsStreamConcurrent(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	if _, err := s.LoadSkill(ctx, loadPath(t, "test.echo", "echo.wasm")); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("inv-%02d", i)
			in := fmt.Sprintf(`{"call":%d}`, i)
			resp, err := s.Call(ctx, &sidecarv1.InvokeRequest{InvocationId: id, SkillId: "test.echo", ToolId: "t", Input: []byte(in)})
			if err != nil {
				errs <- fmt.Errorf("call %d: %w", i, err)
				return
			}
			var doc struct {
				InvocationID string          `json:"invocation_id"`
				Input        json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(resp.GetOutput(), &doc); err != nil || doc.InvocationID != id || string(doc.Input) != in {
				errs <- fmt.Errorf("call %d got the reply %s (%v)", i, resp.GetOutput(), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	h, err := s.Health(ctx)
	if err != nil || h.GetInvocations() != n || h.GetInFlight() != 0 {
		t.Errorf("health after %d calls: %+v, %v", n, h, err)
	}
}

// TestCallsStreamCancel: a call whose ctx ends returns the ctx's status at
// once, and the cancel frame ends the guest in the sidecar (sleep.wasm
// sleeps 10 s in poll_oneoff, which observes cancellation) long before it
// would end by itself; the stream then still carries calls.
func TestCallsStreamCancel(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	if _, err := s.LoadSkill(ctx, loadPath(t, "test.sleep", "sleep.wasm")); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	inFlight := func(want uint32) func() bool {
		return func() bool {
			h, err := s.Health(ctx)
			return err == nil && h.GetInFlight() == want
		}
	}
	// The call's own budget is far longer than its sleep: within 5 s only
	// the cancel frame can end it.
	loop := &sidecarv1.InvokeRequest{SkillId: "test.sleep", ToolId: "t", Timeout: durationpb.New(10 * time.Minute)}

	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.Call(cctx, loop)
		done <- err
	}()
	waitFor(t, "the sleep in flight", 5*time.Second, inFlight(1))
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Fatalf("canceled call: %v, want the Canceled status", err)
	}
	waitFor(t, "the sidecar to end the canceled guest", 5*time.Second, inFlight(0))

	dctx, dcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer dcancel()
	if _, err := s.Call(dctx, loop); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("call past its deadline: %v, want the DeadlineExceeded status", err)
	}
	waitFor(t, "the sidecar to end the guest past its deadline", 5*time.Second, inFlight(0))

	// The stream still carries calls, each answered with its own outcome.
	short := &sidecarv1.InvokeRequest{SkillId: "test.sleep", ToolId: "t", Timeout: durationpb.New(50 * time.Millisecond)}
	if _, err := s.Call(ctx, short); codeOf(t, err) != "timeout" {
		t.Fatalf("a call on the same stream after the cancels: %v, want its own timeout", err)
	}
}

// TestCallsStreamRefills: calls on the stream leave waking the preparer
// until their reply is sent (wasmrt's DeferRefill); the worker must still
// wake it, so that each call of a sequence, spaced out, finds a prepared
// instance.
func TestCallsStreamRefills(t *testing.T) {
	s := start(t, nil)
	ctx := ctxT(t)
	req := loadPath(t, "test.echo", "echo.wasm")
	req.PreparedInstances = 1
	if _, err := s.LoadSkill(ctx, req); err != nil {
		t.Fatalf("LoadSkill: %v", err)
	}
	for i := range 10 {
		// The preparer needs a moment after each reply; a busy machine may
		// need more than one.
		waitFor(t, fmt.Sprintf("call %d to find a prepared instance", i), 10*time.Second, func() bool {
			r, err := s.Call(ctx, &sidecarv1.InvokeRequest{SkillId: "test.echo", ToolId: "t", Input: []byte(`{}`)})
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			return r.GetStats().GetPrepared()
		})
	}
}
