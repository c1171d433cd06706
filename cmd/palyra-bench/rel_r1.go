package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/stats"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/supervisor"
)

// r1Skill is one of R1's four skills.
type r1Skill struct {
	id, tool, kind string // kind: "Go-guest" or "WAT"
	input          []byte
	want           string
}

// relKillSidecar is R1: 8 callers over 4 skills (two Go-guest echo skills,
// two WAT skills) while the sidecars are SIGKILLed one at a time, in turn.
// Per kill: the victim is probed until a call succeeds (the recovery time,
// kill → the victim's next successful call); the other skills' calls must
// not fail, and the victim's failures must carry an error code.
func relKillSidecar(ctx context.Context, e *env) ([]relRow, error) {
	// The crash-loop rule would stop restarts after 5 kills of a skill in a
	// minute; R1 measures recovery, so the threshold is out of the way.
	// The restart backoff is the default.
	h, _, closeHost, err := e.openHost(ctx, "r1", true, supervisor.Config{IdleTimeout: -1, CrashLoopThreshold: 1 << 20})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	skills := []r1Skill{
		{id: "rel.echo0", tool: "palyra.echo", kind: "Go-guest", input: echoInput, want: echoOutput},
		{id: "bench.r1t0", tool: "bench.trivial", kind: "WAT", input: echoInput, want: trivialOutput},
		{id: "rel.echo1", tool: "palyra.echo", kind: "Go-guest", input: echoInput, want: echoOutput},
		{id: "bench.r1t1", tool: "bench.trivial", kind: "WAT", input: echoInput, want: trivialOutput},
	}
	for _, s := range skills {
		var data []byte
		if s.kind == "WAT" {
			data, err = e.trivialArtifact(s.id[len("bench."):])
		} else {
			data, err = e.echoArtifact(s.id, e.echoWasm)
		}
		if err != nil {
			return nil, err
		}
		if _, err := e.install(ctx, h, data); err != nil {
			return nil, err
		}
		if err := callOnce(ctx, h, s); err != nil {
			return nil, fmt.Errorf("first call of %s: %w", s.id, err)
		}
	}

	var (
		victim      atomic.Int32 // index+1 of the skill being killed, 0 for none
		calls       atomic.Int64
		otherFails  atomic.Int64
		untyped     atomic.Int64
		mu          sync.Mutex
		victimCodes = map[string]int{}
		otherCodes  = map[string]int{}
	)
	record := func(i int, v0 int32, err error) {
		calls.Add(1)
		if err == nil {
			return
		}
		code := errcode.Of(err)
		if code == "" {
			untyped.Add(1)
			code = "untyped: " + err.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		if v0 == int32(i+1) || victim.Load() == int32(i+1) {
			victimCodes[code]++
			return
		}
		otherFails.Add(1)
		otherCodes[code]++
	}
	lctx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for c := range throughputCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; lctx.Err() == nil; k++ {
				i := (c + k) % len(skills)
				v0 := victim.Load()
				err := callOnce(lctx, h, skills[i])
				if lctx.Err() != nil {
					return
				}
				record(i, v0, err)
			}
		}()
	}
	defer func() { stopLoad(); wg.Wait() }()

	kills := e.opts.n(4, 40) // full: 20 of each kind (Go guest, WAT)
	recovery := map[string]*stats.Sample{"Go-guest": {}, "WAT": {}}
	row := relRow{Scenario: "R1", Title: fmt.Sprintf("SIGKILL a sidecar under %d callers × %d skills", throughputCallers, len(skills))}
	failedRecoveries := 0
	time.Sleep(e.opts.d(300*time.Millisecond, time.Second)) // load settles
	// Every skill is in use under the load, so each gets its standby
	// about a second after its second call: the first kills wait for
	// them, like the later ones, which come seconds after a restart.
	if err := waitStandbys(ctx, h, skills); err != nil {
		return nil, err
	}
	for k := range kills {
		i := k % len(skills)
		s := skills[i]
		pid, err := sidecarPID(ctx, h, s.id)
		if err != nil {
			return nil, err
		}
		before := otherFails.Load() + untyped.Load()
		victim.Store(int32(i + 1))
		killed := time.Now()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return nil, fmt.Errorf("kill sidecar %d of %s: %w", pid, s.id, err)
		}
		rec, err := probeUntilUp(ctx, h, s, killed, pid, func(err error) { record(i, int32(i+1), err) })
		if err != nil {
			failedRecoveries++
			row.check(false, "kill %d of %s: no recovery: %v", k+1, s.id, err)
		} else {
			recovery[s.kind].Add(rec)
		}
		// The load runs on the restarted victim for a while before the
		// next kill; its failures still count as the victim's.
		time.Sleep(e.opts.d(150*time.Millisecond, 400*time.Millisecond))
		victim.Store(0)
		if err == nil {
			row.check(otherFails.Load()+untyped.Load() == before, "kill %d of %s: other skills failed or untyped errors", k+1, s.id)
		}
	}
	time.Sleep(100 * time.Millisecond)
	stopLoad()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	row.Figures = append(row.Figures,
		fmt.Sprintf("other skills' failures: %d of %d calls (must be 0)%s", otherFails.Load(), calls.Load(), codesSuffix(otherCodes)),
		fmt.Sprintf("victim's errors: %s", counts(victimCodes)),
		fmt.Sprintf("untyped errors: %d", untyped.Load()))
	for _, kind := range []string{"Go-guest", "WAT"} {
		r := recovery[kind]
		if r.Len() == 0 {
			continue
		}
		med, mx := time.Duration(r.Median()), time.Duration(r.Percentile(100))
		goal := "✓"
		if med > 100*time.Millisecond {
			goal = "✗"
		}
		row.Figures = append(row.Figures, fmt.Sprintf("recovery %s: median %s, max %s over %d kills (goal median ≤ 100 ms %s)",
			kind, ms(med), ms(mx), r.Len(), goal))
	}
	row.Note = "recovery = SIGKILL → the victim's next successful call; restart backoff at its default, crash-loop threshold lifted"
	return []relRow{row}, nil
}

func codesSuffix(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	return ": " + counts(m)
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// callOnce calls s's tool on h and checks its output.
func callOnce(ctx context.Context, h *host.Host, s r1Skill) error {
	res, err := h.Call(ctx, host.CallRequest{SkillID: s.id, ToolID: s.tool, Input: json.RawMessage(s.input)})
	if err != nil {
		return err
	}
	if string(res.Output) != s.want {
		return fmt.Errorf("%s: output %s, want %s", s.id, res.Output, s.want)
	}
	return nil
}

// sidecarPID is the pid of skillID's running sidecar, waiting up to 10 s
// for one to run.
func sidecarPID(ctx context.Context, h *host.Host, skillID string) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		states, err := h.Sidecars(ctx)
		if err != nil {
			return 0, err
		}
		for _, st := range states {
			if st.SkillID == skillID && st.PID > 0 && st.Status == supervisor.StatusRunning {
				return st.PID, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no running sidecar for %s: %+v", skillID, states)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStandbys waits up to 10 s until every skill of skills has a running
// sidecar and its standby.
func waitStandbys(ctx context.Context, h *host.Host, skills []r1Skill) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		states, err := h.Sidecars(ctx)
		if err != nil {
			return err
		}
		ready := 0
		for _, s := range skills {
			for _, st := range states {
				if st.SkillID == s.id && st.Status == supervisor.StatusRunning && st.StandbyPID > 0 {
					ready++
					break
				}
			}
		}
		if ready == len(skills) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d skills have a standby after 10 s: %+v", ready, len(skills), states)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// probeUntilUp calls s until a call succeeds on a sidecar other than
// oldPID and returns the time since killed; it gives up after 15 s.
// Every failed probe is passed to onErr.
func probeUntilUp(ctx context.Context, h *host.Host, s r1Skill, killed time.Time, oldPID int, onErr func(error)) (time.Duration, error) {
	deadline := killed.Add(15 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		res, err := h.Call(ctx, host.CallRequest{SkillID: s.id, ToolID: s.tool, Input: json.RawMessage(s.input)})
		if err == nil && string(res.Output) == s.want && res.SidecarPID != oldPID {
			return time.Since(killed), nil
		}
		if err != nil {
			last = err
			onErr(err)
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
	return 0, fmt.Errorf("no successful call within 15 s (last error: %v)", last)
}
