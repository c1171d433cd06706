package supervisor

import (
	"context"
	"sync"
)

// Close stops every sidecar (graceful Stop and its exit bounded by ctx and
// DefaultStopTimeout, then Kill of its process group; none of these exits
// is logged as an error), ends every Precompile child, removes their private
// directories and waits for the calls in progress and every goroutine of
// the supervisor. ctx bounds only the graceful part: once it is done, the
// remaining sidecars are SIGKILLed. Close returns nil once everything is
// gone. It is idempotent; later calls wait for the first. A closed
// Supervisor refuses everything with ErrClosed.
func (s *Supervisor) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.stop)
		var procs []*proc
		for _, sl := range s.sidecars {
			if sl.proc != nil {
				procs = append(procs, sl.proc)
				sl.proc = nil
			}
			if sl.standby != nil {
				procs = append(procs, sl.standby)
				sl.standby = nil
			}
		}
		s.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.endProcCtx(ctx, p, true)
			}()
		}
		wg.Wait()
		s.calls.Wait()
		s.wg.Wait()
		s.endSpares()
	})
	s.calls.Wait()
	s.wg.Wait()
	return nil
}
