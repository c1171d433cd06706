package supervisor

import (
	"context"
	"fmt"
)

// admit takes one of the MaxConcurrentCalls running-call places of t's
// skill version, waiting in its queue (at most QueueDepth calls wait, else
// ErrOverloaded) until one is free, ctx ends or the supervisor closes. A
// crashlooping skill version is refused at once. release gives the place
// back; the caller must call it when the call ends.
func (s *Supervisor) admit(ctx context.Context, t *Target) (sl *slot, release func(), err error) {
	s.mu.Lock()
	sl = s.slotLocked(skey{t.SkillID, t.Version})
	if sl.looping {
		last := sl.lastErr
		s.mu.Unlock()
		return nil, nil, fmt.Errorf("%w: skill %s version %s (last error: %s)", ErrCrashLooping, t.SkillID, t.Version, last)
	}
	select {
	case sl.sem <- struct{}{}:
	default:
		if sl.queued >= s.cfg.QueueDepth {
			s.mu.Unlock()
			return nil, nil, fmt.Errorf("%w: skill %s version %s has %d calls running and %d queued", ErrOverloaded, t.SkillID, t.Version, s.cfg.MaxConcurrentCalls, sl.queued)
		}
		sl.queued++
		s.mu.Unlock()
		select {
		case sl.sem <- struct{}{}:
		case <-ctx.Done():
			err = ctxError(ctx, fmt.Sprintf("waiting in the queue of skill %s version %s", t.SkillID, t.Version), nil)
		case <-s.stop:
			err = ErrClosed
		}
		s.mu.Lock()
		sl.queued--
		if err != nil {
			s.mu.Unlock()
			return nil, nil, err
		}
	}
	sl.inFlight++
	sl.lastUsed = s.cfg.Clock.Now()
	// A call that finds the version's sidecar running puts it in use:
	// from now on it keeps a standby (standby.go).
	kick := !sl.inUse && sl.proc != nil && s.cfg.Standby > 0
	if kick {
		sl.inUse = true
	}
	s.mu.Unlock()
	if kick {
		s.whenQuiet(sl, *t, t.loadKey())
	}
	return sl, func() {
		s.mu.Lock()
		sl.inFlight--
		sl.lastUsed = s.cfg.Clock.Now()
		s.mu.Unlock()
		<-sl.sem
	}, nil
}
