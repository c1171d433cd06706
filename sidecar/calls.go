package sidecar

import (
	"context"
	"fmt"
	"sync"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// Calls implements SidecarService: it runs each call the stream brings
// (concurrently, as unary Invokes would run) and sends each reply as the
// call finishes. A cancel frame cancels the call in flight with its
// number. When the stream ends (the supervisor closed it, or the
// connection is gone), the calls still in flight are canceled and waited
// for before Calls returns, so no reply is sent on a finished stream.
func (s *server) Calls(stream sidecarv1.SidecarService_CallsServer) error {
	ctx := stream.Context()
	var (
		mu     sync.Mutex
		cancel = map[uint64]context.CancelFunc{} // the calls in flight
		sendMu sync.Mutex
		wg     sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		for _, c := range cancel {
			c()
		}
		mu.Unlock()
		wg.Wait()
	}()
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
			wg.Add(1)
			go func(req *sidecarv1.InvokeRequest) {
				defer wg.Done()
				resp := s.invoke(cctx, req)
				mu.Lock()
				delete(cancel, n)
				mu.Unlock()
				c()
				sendMu.Lock()
				// A failed send means the stream is over: the supervisor
				// has given up on the call.
				_ = stream.Send(&sidecarv1.CallsResponse{Call: n, Response: resp})
				sendMu.Unlock()
			}(fr.Invoke)
		}
	}
}
