//go:build !linux

package harden

// Apply applies nothing on this system: it has neither seccomp nor
// Landlock, and the sidecar runs with the operating system's process
// isolation only. The Report says so (Supported false), and the
// supervisor's sidecar state and metrics carry it.
func Apply(cfg Config) (Report, error) {
	return Report{Supported: false, Seccomp: SeccompUnsupported, Landlock: LandlockNone}, nil
}

// Restrict applies nothing on this system (see Apply).
func Restrict(cfg Config, rep *Report) error { return nil }
