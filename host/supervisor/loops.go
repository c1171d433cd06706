package supervisor

import (
	"context"
	"fmt"
	"time"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// healthChecker checks the health of running idle sidecars every
// HealthInterval; one that fails or does not answer in time is killed and
// counted as a crash. It ends when Close closes s.stop.
func (s *Supervisor) healthChecker() {
	defer s.wg.Done()
	tk := time.NewTicker(s.cfg.HealthInterval)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
		type check struct {
			sl *slot
			p  *proc
		}
		var checks []check
		s.mu.Lock()
		for _, sl := range s.sidecars {
			if p := sl.proc; p != nil && p.client != nil && sl.inFlight == 0 && sl.queued == 0 {
				checks = append(checks, check{sl, p})
			}
		}
		s.mu.Unlock()
		for _, c := range checks {
			if err := s.checkHealth(c.p); err != nil {
				if s.isClosed() {
					return
				}
				c.p.log.Warn("sidecar failed its health check; killing it", "pid", c.p.pid, "error", err)
				s.ended(c.sl, c.p, true, fmt.Errorf("health check failed: %v", err))
			}
		}
	}
}

// checkHealth asks p for its health, bounded by HealthTimeout and ended
// early by Close.
func (s *Supervisor) checkHealth(p *proc) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HealthTimeout)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := p.client.Health(ctx)
	if err != nil {
		return err
	}
	if st := resp.GetStatus(); st == sidecarv1.ServingStatus_SERVING_STATUS_NOT_LOADED || st == sidecarv1.ServingStatus_SERVING_STATUS_UNSPECIFIED {
		return fmt.Errorf("sidecar reports %s", st)
	}
	return nil
}

// reaper stops the sidecars idle for IdleTimeout (by the Clock), polling a
// quarter of it (10 ms to 30 s) on real time. It ends when Close closes
// s.stop.
func (s *Supervisor) reaper() {
	defer s.wg.Done()
	every := min(max(s.cfg.IdleTimeout/4, 10*time.Millisecond), 30*time.Second)
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
		now := s.cfg.Clock.Now()
		var idle []*proc
		s.mu.Lock()
		for _, sl := range s.sidecars {
			if sl.inFlight != 0 || sl.queued != 0 || now.Sub(sl.lastUsed) < s.cfg.IdleTimeout {
				continue
			}
			// An idle skill version's standby goes with it, and so does
			// one left without a serving sidecar (which died, no call
			// since).
			for _, pp := range []**proc{&sl.proc, &sl.standby} {
				if *pp != nil {
					idle = append(idle, *pp)
					*pp = nil
				}
			}
			// Its next call starts it afresh: in use again only once
			// called again (standby.go).
			sl.inUse = false
		}
		s.mu.Unlock()
		for _, p := range idle {
			p.log.Debug("stopping idle sidecar", "pid", p.pid)
			s.endProc(p, true)
		}
	}
}
