// Package recovery measures how fast a skill recovers after its sidecar is
// killed: the time from a SIGKILL of the sidecar to the end of the skill's
// next successful call, served by a new sidecar. The supervisor's recovery
// benchmark (host/supervisor) and the reliability suite (cmd/palyra-bench)
// share it, so that both report the same figure the same way.
//
// The measurement is independent of how the skill is called: a [Probe]
// tells the package how to find the victim's sidecar and how to call the
// skill once (through a *supervisor.Supervisor, a host.Service, the daemon
// client...). Load on other skills, or on the victim itself, is the
// caller's business.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Probe is what Measure needs to know about the victim skill.
type Probe struct {
	// PID returns the pid of the victim's running sidecar, or 0 when none
	// runs (yet).
	PID func(ctx context.Context) (int, error)
	// Call makes one call of the victim skill and reports the pid of the
	// sidecar that served it (0 when the path does not say).
	Call func(ctx context.Context) (pid int, err error)
}

// Sample is one kill and its recovery.
type Sample struct {
	// Killed is the pid SIGKILLed; Served the pid of the sidecar that
	// served the first successful call after it (0 when Call does not say).
	Killed, Served int
	// Recovery is from just before the SIGKILL to the return of the first
	// successful call served by another sidecar.
	Recovery time.Duration
	// Failed counts the probe's failed calls in between (typed errors such
	// as sidecar_crashed, expected while the victim is down).
	Failed int
	// LastErr is the last of those failures (nil when none).
	LastErr error
}

// ErrNoSidecar reports that the victim had no running sidecar to kill.
var ErrNoSidecar = errors.New("recovery: the victim has no running sidecar")

// Measure SIGKILLs the victim's running sidecar, waits until the process
// is dead (so that no answer it had in flight can count), then calls the
// skill until a call succeeds on a sidecar other than the killed one. A
// failed call is retried at once; ctx bounds the whole measurement. The
// caller must make sure a sidecar runs before (e.g. one successful Call).
func Measure(ctx context.Context, p Probe) (Sample, error) {
	pid, err := p.PID(ctx)
	if err != nil {
		return Sample{}, fmt.Errorf("recovery: finding the victim's sidecar: %w", err)
	}
	if pid <= 0 {
		return Sample{}, ErrNoSidecar
	}
	s := Sample{Killed: pid}
	start := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return s, fmt.Errorf("recovery: killing sidecar pid %d: %w", pid, err)
	}
	for !Dead(pid) {
		if err := ctx.Err(); err != nil {
			return s, fmt.Errorf("recovery: sidecar pid %d not dead: %w", pid, err)
		}
		time.Sleep(100 * time.Microsecond)
	}
	for {
		served, err := p.Call(ctx)
		if err == nil && served != pid {
			s.Recovery = time.Since(start)
			s.Served = served
			return s, nil
		}
		if err == nil {
			err = fmt.Errorf("served by the killed sidecar pid %d", pid)
		}
		s.Failed++
		s.LastErr = err
		if cerr := ctx.Err(); cerr != nil {
			return s, fmt.Errorf("recovery: no successful call within the measurement's time (%d failed, last: %v): %w", s.Failed, err, cerr)
		}
	}
}

// Dead reports whether pid is no longer running: gone, or a zombie that
// its parent has not reaped yet.
func Dead(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	st := string(b)
	i := strings.LastIndexByte(st, ')')
	if i < 0 || i+2 >= len(st) {
		return false
	}
	return st[i+2] == 'Z' || st[i+2] == 'X'
}

// Summary is the distribution of recovery times over several kills.
type Summary struct {
	N           int
	Median, Max time.Duration
	Min, P90    time.Duration
	// Failed counts the failed probe calls over all samples.
	Failed int
	// OverGoal counts the samples whose recovery exceeded Goal (0: none
	// given).
	OverGoal int
	Goal     time.Duration
}

// Summarize returns the distribution of the samples' recovery times,
// counting those over goal (0: none counted).
func Summarize(samples []Sample, goal time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	d := make([]time.Duration, len(samples))
	sum := Summary{N: len(samples), Goal: goal}
	for i, s := range samples {
		d[i] = s.Recovery
		sum.Failed += s.Failed
		if goal > 0 && s.Recovery > goal {
			sum.OverGoal++
		}
	}
	slices.Sort(d)
	n := len(d)
	if n%2 == 1 {
		sum.Median = d[n/2]
	} else {
		sum.Median = (d[n/2-1] + d[n/2]) / 2
	}
	sum.Min, sum.Max = d[0], d[n-1]
	sum.P90 = d[min(n-1, (n*9+9)/10-1)]
	return sum
}

// String formats the summary on one line, in milliseconds.
func (s Summary) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	out := fmt.Sprintf("n=%d median=%sms p90=%sms max=%sms min=%sms failed_calls=%d", s.N, ms(s.Median), ms(s.P90), ms(s.Max), ms(s.Min), s.Failed)
	if s.Goal > 0 {
		out += fmt.Sprintf(" over_%sms=%d", ms(s.Goal), s.OverGoal)
	}
	return out
}
