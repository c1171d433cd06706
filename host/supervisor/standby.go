package supervisor

import (
	"context"
	"time"
)

// The background work of a start waits for the skill version to go quiet:
// no call in flight or queued (the call that waited for the start
// included) for startQuiet, checked every startQuietPoll; or startQuietMax
// after the start, so that a long call does not leave its version without
// a standby, nor the next start without a spare, for its whole length.
const (
	startQuiet     = 20 * time.Millisecond
	startQuietPoll = 5 * time.Millisecond
	startQuietMax  = time.Second
)

// A standby is kept only for a skill version in use (slot.inUse): one
// called again while its sidecar runs, started eagerly (Start), or that
// crashed. A version called once and left to go idle has none: with many
// such skills a standby each doubled the sidecars (palyra-bench E: 50
// skills called once each ran 100 sidecars, and the embedding process held
// 45-47 MB ten seconds after they were reaped instead of 37-41 MB).
// Recovery of a version in use stays as fast; a version called once that
// crashes restarts from the spare, and is in use from then on.

// whenQuiet refills the spares and, for a version in use, makes the
// standby of sl once sl has been quiet for startQuiet, or startQuietMax
// after the call under steady or long calls. It follows every start
// (acquire) and the call that puts a version in use (admit). Two process
// starts begun as soon as a sidecar is up take the CPU from the calls that
// waited for it: on two cores they delayed the first call on a spare from
// 5 ms to 17–25 ms, and moved to right after that call, the second.
// Neither is needed sooner: they serve the next crash and the next other
// skill's start. It runs on a goroutine the supervisor owns and ends early
// on Close.
func (s *Supervisor) whenQuiet(sl *slot, t Target, lk string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		tk := time.NewTicker(startQuietPoll)
		defer tk.Stop()
		var quietSince time.Time
		for deadline := time.Now().Add(startQuietMax); ; {
			s.mu.Lock()
			busy := sl.inFlight > 0 || sl.queued > 0
			s.mu.Unlock()
			now := time.Now()
			switch {
			case busy:
				quietSince = time.Time{}
			case quietSince.IsZero():
				quietSince = now
			}
			if (!busy && now.Sub(quietSince) >= startQuiet) || now.After(deadline) {
				break
			}
			select {
			case <-s.stop:
				return
			case <-tk.C:
			}
		}
		s.refillSpares()
		s.makeStandby(sl, t, lk)
	}()
}

// usableStandby returns sb when it can serve lk (loaded with the same
// module and settings, still running); otherwise it ends sb in the
// background and returns nil.
func (s *Supervisor) usableStandby(sb *proc, lk string) *proc {
	if sb == nil {
		return nil
	}
	if sb.loadKey == lk && !sb.child.Exited() {
		return sb
	}
	s.endInBackground(sb)
	return nil
}

// endInBackground ends p on a goroutine the supervisor owns (Close waits
// for it).
func (s *Supervisor) endInBackground(p *proc) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.endProc(p, false)
	}()
}

// makeStandby makes, in the background, the standby of sl for t (load key
// lk) unless Config.Standby is off, sl is not in use, sl has a usable one,
// one is being made or the supervisor is closed. A standby loaded with
// another key is ended.
// A failure is logged, not counted as a crash: the serving sidecar is
// fine, and the next start tries again.
func (s *Supervisor) makeStandby(sl *slot, t Target, lk string) {
	if s.cfg.Standby <= 0 {
		return
	}
	s.mu.Lock()
	if s.closed || !sl.inUse || sl.standbyStarting || sl.proc == nil || sl.proc.loadKey != lk {
		// Closed, not in use, being made, or the version stopped (Stop,
		// idleness) or changed since: no standby for it.
		s.mu.Unlock()
		return
	}
	if sb := sl.standby; sb != nil {
		if sb.loadKey == lk && !sb.child.Exited() {
			s.mu.Unlock()
			return
		}
		sl.standby = nil
		s.endInBackground(sb)
	}
	sl.standbyStarting = true
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // Close cancels the start
			select {
			case <-s.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		p, err := s.start(ctx, &t, lk)
		if err == nil {
			s.refillSpares() // the start may have taken one
		}
		s.mu.Lock()
		sl.standbyStarting = false
		if err != nil {
			s.mu.Unlock()
			if !s.isClosed() {
				s.log.Warn("starting a standby sidecar failed", "skill_id", t.SkillID, "skill_version", t.Version, "error", err)
			}
			return
		}
		// Keep it only while sl still serves lk.
		if s.closed || sl.standby != nil || sl.proc == nil || sl.proc.loadKey != lk {
			s.mu.Unlock()
			s.endProc(p, false)
			return
		}
		sl.standby = p
		s.mu.Unlock()
		p.log.Debug("standby sidecar ready", "pid", p.pid)
	}()
}
