package sidecar

import (
	"context"
	"fmt"
	"sync"
	"time"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// callWorkerIdle is how long a Calls worker waits for the stream's next
// call before it ends.
const callWorkerIdle = 30 * time.Second

// Calls implements SidecarService: it runs each call the stream brings
// (concurrently, as unary Invokes would run) and sends each reply as the
// call finishes. A cancel frame cancels the call in flight with its
// number. When the stream ends (the supervisor closed it, or the
// connection is gone), the calls still in flight are canceled and waited
// for before Calls returns, so no reply is sent on a finished stream.
//
// Calls run on worker goroutines that stay for the stream's next call
// (callWorkerIdle): a call finds an idle worker whose stack has already
// grown to what a call needs, rather than a new goroutine growing its
// stack again. There are as many workers as calls were ever in flight at
// once on the stream. A worker wakes the module's preparer after it has
// sent the reply (wasmrt.Invocation.DeferRefill).
func (s *server) Calls(stream sidecarv1.SidecarService_CallsServer) error {
	ctx := stream.Context()
	var (
		mu     sync.Mutex
		cancel = map[uint64]context.CancelFunc{} // the calls in flight
		sendMu sync.Mutex
		wg     sync.WaitGroup
		jobs   = make(chan callJob) // to an idle worker
		quit   = make(chan struct{})
	)
	defer func() {
		mu.Lock()
		for _, c := range cancel {
			c()
		}
		mu.Unlock()
		close(quit)
		wg.Wait()
	}()
	run := func(j callJob) {
		resp, mod := s.invoke(j.ctx, j.req, true)
		mu.Lock()
		delete(cancel, j.n)
		mu.Unlock()
		j.cancel()
		sendMu.Lock()
		// A failed send means the stream is over: the supervisor has
		// given up on the call.
		_ = stream.Send(&sidecarv1.CallsResponse{Call: j.n, Response: resp})
		sendMu.Unlock()
		if mod != nil {
			mod.Refill()
		}
	}
	worker := func(j callJob) {
		defer wg.Done()
		idle := time.NewTimer(callWorkerIdle)
		defer idle.Stop()
		for {
			run(j)
			j = callJob{} // an idle worker holds no request
			idle.Reset(callWorkerIdle)
			select {
			case j = <-jobs:
			case <-idle.C:
				return
			case <-quit:
				return
			}
		}
	}
	for {
		f, err := stream.Recv()
		if err != nil {
			// io.EOF: the supervisor closed the stream; anything else: the
			// connection is gone. Either way the stream is over.
			return nil
		}
		n := f.GetCall()
		switch fr := f.GetFrame().(type) {
		case *sidecarv1.CallsRequest_Cancel:
			mu.Lock()
			if c, ok := cancel[n]; ok {
				c()
			}
			mu.Unlock()
		case *sidecarv1.CallsRequest_Invoke:
			cctx, c := context.WithCancel(ctx)
			mu.Lock()
			dup := cancel[n] != nil
			if !dup {
				cancel[n] = c
			}
			mu.Unlock()
			if dup {
				// The supervisor broke the protocol: the number is taken by a
				// call in flight. Refuse this one; the other keeps running.
				c()
				resp := &sidecarv1.InvokeResponse{Stats: &sidecarv1.Stats{}}
				resp.ErrorCode, resp.ErrorMessage = fail(fmt.Errorf("%w: call number %d is in use by a call in flight", ErrInvalidRequest, n))
				sendMu.Lock()
				_ = stream.Send(&sidecarv1.CallsResponse{Call: n, Response: resp})
				sendMu.Unlock()
				continue
			}
			j := callJob{n: n, req: fr.Invoke, ctx: cctx, cancel: c}
			select {
			case jobs <- j:
			default:
				wg.Add(1)
				go worker(j)
			}
		}
	}
}

// callJob is one call of a Calls stream, handed to a worker.
type callJob struct {
	n      uint64
	req    *sidecarv1.InvokeRequest
	ctx    context.Context
	cancel context.CancelFunc
}
