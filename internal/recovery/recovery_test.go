package recovery

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"
)

// sleeper starts a real child process that runs until killed, and reaps
// it when the test ends.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// TestMeasure kills a real child process as the victim's sidecar and
// checks that Measure kills it, counts the failed calls in between, and
// ends at the first success served by another process; a success that
// names the killed pid does not count.
func TestMeasure(t *testing.T) {
	tests := []struct {
		name string
		// replies are the Call outcomes in order: a pid of -1 stands for
		// the killed pid, an error for a failed call.
		replies    []error
		killedPIDs int // leading successful replies from the killed pid
		wantFailed int
	}{
		{"first call succeeds", nil, 0, 0},
		{"two crashed calls first", []error{errors.New("sidecar_crashed"), errors.New("sidecar_crashed")}, 0, 2},
		{"an answer of the killed sidecar does not count", nil, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			victim := sleeper(t)
			other := sleeper(t)
			calls := 0
			p := Probe{
				PID: func(context.Context) (int, error) { return victim.Process.Pid, nil },
				Call: func(context.Context) (int, error) {
					calls++
					if !Dead(victim.Process.Pid) {
						t.Errorf("call %d before the victim died", calls)
					}
					if calls <= len(tt.replies) {
						return 0, tt.replies[calls-1]
					}
					if calls <= len(tt.replies)+tt.killedPIDs {
						return victim.Process.Pid, nil
					}
					return other.Process.Pid, nil
				},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := Measure(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if s.Killed != victim.Process.Pid || s.Served != other.Process.Pid || s.Failed != tt.wantFailed || s.Recovery <= 0 {
				t.Errorf("sample %+v, want killed %d served %d failed %d", s, victim.Process.Pid, other.Process.Pid, tt.wantFailed)
			}
			if (tt.wantFailed == 0) != (s.LastErr == nil) {
				t.Errorf("last error %v with %d failures", s.LastErr, s.Failed)
			}
			if Dead(other.Process.Pid) {
				t.Error("the other process died")
			}
		})
	}
}

// TestMeasureErrors checks the measurements that cannot be made: no
// sidecar to kill, and no success before ctx ends (the failures counted).
func TestMeasureErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Measure(ctx, Probe{PID: func(context.Context) (int, error) { return 0, nil }}); !errors.Is(err, ErrNoSidecar) {
		t.Errorf("no sidecar: %v", err)
	}
	victim := sleeper(t)
	cctx, cancel := context.WithCancel(ctx)
	n := 0
	s, err := Measure(cctx, Probe{
		PID: func(context.Context) (int, error) { return victim.Process.Pid, nil },
		Call: func(context.Context) (int, error) {
			if n++; n == 3 {
				cancel()
			}
			return 0, errors.New("down")
		},
	})
	if !errors.Is(err, context.Canceled) || s.Failed != 3 {
		t.Errorf("never recovers: %+v, %v", s, err)
	}
}

func TestSummarize(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	samples := func(d ...int) []Sample {
		out := make([]Sample, len(d))
		for i, v := range d {
			out[i] = Sample{Recovery: ms(v), Failed: 1}
		}
		return out
	}
	tests := []struct {
		name string
		in   []Sample
		goal time.Duration
		want Summary
	}{
		{"none", nil, ms(100), Summary{}},
		{"odd count", samples(30, 10, 20), 0, Summary{N: 3, Median: ms(20), Min: ms(10), Max: ms(30), P90: ms(30), Failed: 3}},
		{"even count", samples(40, 10, 30, 20), ms(25), Summary{N: 4, Median: ms(25), Min: ms(10), Max: ms(40), P90: ms(40), Failed: 4, OverGoal: 2, Goal: ms(25)}},
		{"ten", samples(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), ms(100), Summary{N: 10, Median: 5500 * time.Microsecond, Min: ms(1), Max: ms(10), P90: ms(9), Failed: 10, Goal: ms(100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.in, tt.goal); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := Summarize(samples(10, 200), ms(100)).String(); got != "n=2 median=105.0ms p90=200.0ms max=200.0ms min=10.0ms failed_calls=2 over_100.0ms=1" {
		t.Errorf("String: %s", got)
	}
}
