package supervisor

// takeSpare returns a live spare sidecar, or nil when none is ready. Spares
// that died while waiting are ended in the background.
func (s *Supervisor) takeSpare() *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.spares) > 0 {
		p := s.spares[0]
		s.spares = s.spares[1:]
		if !p.child.Exited() {
			return p
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.endProc(p, false)
		}()
	}
	return nil
}

// refillSpares wakes the spare filler (after a successful start: a
// supervisor whose sidecars cannot start does not spawn spares in vain).
func (s *Supervisor) refillSpares() {
	if s.cfg.SpareSidecars <= 0 {
		return
	}
	select {
	case s.refill <- struct{}{}:
	default:
	}
}

// spareFiller keeps Config.SpareSidecars spares ready, starting them one
// at a time when woken. A spare that fails to start is logged and not
// retried until the next wake-up. It ends when Close closes s.stop; Close
// ends the spares left.
func (s *Supervisor) spareFiller() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.refill:
		}
		for {
			s.mu.Lock()
			need := !s.closed && len(s.spares) < s.cfg.SpareSidecars
			s.mu.Unlock()
			if !need {
				break
			}
			p, err := s.spawn()
			if err != nil {
				s.log.Warn("starting a spare sidecar failed", "error", err)
				break
			}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				s.endProc(p, false)
				return
			}
			s.spares = append(s.spares, p)
			s.mu.Unlock()
		}
	}
}

// endSpares ends every spare; Close calls it once the filler is done.
func (s *Supervisor) endSpares() {
	s.mu.Lock()
	spares := s.spares
	s.spares = nil
	s.mu.Unlock()
	for _, p := range spares {
		s.endProc(p, false)
	}
}

// ReadySpares returns how many spare sidecars (Config.SpareSidecars) are
// started and waiting for a skill, for diagnostics and measurements.
func (s *Supervisor) ReadySpares() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.spares)
}
