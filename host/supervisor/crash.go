package supervisor

import (
	"time"
)

// crashLocked counts a crash (or a failed start) of sl at the Clock's now:
// it schedules the next start (at once after a first crash, after the
// restart backoff from the second consecutive one), puts sl in use (a
// version that crashed keeps a standby from its next start on,
// standby.go) and marks sl crashlooping when CrashLoopThreshold crashes
// fall within CrashLoopWindow. s.mu must be held.
func (s *Supervisor) crashLocked(sl *slot, cause error) {
	now := s.cfg.Clock.Now()
	sl.inUse = true
	sl.totalCrash++
	sl.consecutive++
	if cause != nil {
		sl.lastErr = cause.Error()
	}
	keep := sl.crashes[:0]
	for _, c := range sl.crashes {
		if now.Sub(c) < s.cfg.CrashLoopWindow {
			keep = append(keep, c)
		}
	}
	sl.crashes = append(keep, now)
	backoff := s.backoff(sl.consecutive)
	sl.nextStart = now.Add(backoff)
	if len(sl.crashes) >= s.cfg.CrashLoopThreshold {
		if !sl.looping {
			s.log.Error("skill is crashlooping", "skill_id", sl.key.id, "skill_version", sl.key.version, "crashes", len(sl.crashes), "window", s.cfg.CrashLoopWindow, "last_error", sl.lastErr)
		}
		sl.looping = true
	} else {
		s.log.Warn("sidecar crashed", "skill_id", sl.key.id, "skill_version", sl.key.version, "error", sl.lastErr, "restart_in", backoff)
	}
}

// backoff is the delay before the next start after n consecutive crashes:
// none after the first (a sidecar killed once, by the OOM killer or an
// operator, comes back at once: recovery is bounded by the start alone),
// then RestartBackoff doubled n-2 times, at most MaxRestartBackoff. A
// sidecar that keeps crashing thus waits from its second crash on, and
// crash-loop detection counts every crash, immediate restarts included.
func (s *Supervisor) backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	b := s.cfg.RestartBackoff
	for i := 2; i < n && b < s.cfg.MaxRestartBackoff; i++ {
		b *= 2
	}
	return min(b, s.cfg.MaxRestartBackoff)
}

// Reset clears the crash history of a skill (of every version when version
// is ""), so a crashlooping skill may run again.
func (s *Supervisor) Reset(skillID, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, sl := range s.sidecars {
		if k.id == skillID && (version == "" || k.version == version) {
			sl.looping = false
			sl.crashes = nil
			sl.consecutive = 0
			sl.nextStart = time.Time{}
			sl.lastErr = ""
		}
	}
}
