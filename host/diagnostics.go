package host

import "context"

// Diagnostics: operations on the host's machinery that no operator verb
// offers and no call path needs, for measurements and tests (the
// benchmark's cold-start scenario). They are not part of Service.

// StopSidecar stops the sidecar of a skill version if one runs (gracefully:
// its calls in flight finish first), so that the next call starts a new
// one. It is for diagnostics, such as measuring a cold start; it changes
// no status and journals nothing. Without a SidecarPath, or on a closed
// host, it does nothing.
func (h *Host) StopSidecar(skillID, version string) {
	if h.sup == nil || h.open() != nil {
		return
	}
	h.sup.Stop(context.Background(), skillID, version)
}

// ReadySpares returns how many spare sidecars (supervisor.Config's
// SpareSidecars) are started and waiting for a skill: 0 without a
// SidecarPath or on a closed host. A measurement of a cold start waits
// for them so that a spare still starting does not take its CPU.
func (h *Host) ReadySpares() int {
	if h.sup == nil || h.open() != nil {
		return 0
	}
	return h.sup.ReadySpares()
}
