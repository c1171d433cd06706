package clusterproc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/cluster"
)

// Call calls t through n with timeout and returns the error.
func Call(ctx context.Context, n *Node, t Target, timeout time.Duration) error {
	_, err := n.Client.Call(ctx, host.CallRequest{SkillID: t.Skill, ToolID: t.Tool, Input: t.Input, Timeout: timeout})
	return err
}

// QuarantineRounds quarantines t's skill through via, waits until every
// node of others refuses it with skill_quarantined, enables it again
// through via and waits until every one of others serves it, rounds
// times. It returns the time from each quarantine's answer to each node's
// first refusal (len(others) per round). Each wait is bounded by wait.
func QuarantineRounds(ctx context.Context, via *Node, others []*Node, t Target, rounds int, wait time.Duration) ([]time.Duration, error) {
	var took []time.Duration
	until := func(what string, ok func(error) bool, n *Node) (time.Duration, error) {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		d, err := Until(wctx, 5*time.Millisecond, func(ctx context.Context) error {
			err := Call(ctx, n, t, 5*time.Second)
			if ok(err) {
				return nil
			}
			return fmt.Errorf("call: %v", err)
		})
		if err != nil {
			return d, fmt.Errorf("%s through %s: %w", what, n.Name, err)
		}
		return d, nil
	}
	served := func(err error) bool { return err == nil }
	refused := func(err error) bool { return errors.Is(err, host.ErrQuarantined) }
	for _, n := range others {
		if _, err := until(t.Skill+" served", served, n); err != nil {
			return nil, err
		}
	}
	for round := range rounds {
		if _, err := via.Client.Quarantine(ctx, host.StatusRequest{SkillID: t.Skill, Reason: fmt.Sprintf("propagation round %d", round)}); err != nil {
			return took, fmt.Errorf("quarantine through %s: %w", via.Name, err)
		}
		for _, n := range others {
			d, err := until(t.Skill+" refused", refused, n)
			if err != nil {
				return took, err
			}
			took = append(took, d)
		}
		if _, err := via.Client.Enable(ctx, host.EnableRequest{SkillID: t.Skill, Reason: "next round", Override: true}); err != nil {
			return took, fmt.Errorf("enable through %s: %w", via.Name, err)
		}
		for _, n := range others {
			if _, err := until(t.Skill+" served again", served, n); err != nil {
				return took, err
			}
		}
	}
	return took, nil
}

// KillReport is what KillUnderLoad saw.
type KillReport struct {
	// Outcomes are every call's, in the order they ended.
	Outcomes []Outcome
	// Killed is when the victim was killed.
	Killed time.Time
	// NodeLost are the calls that failed with node_lost while in flight at
	// the kill; Bad every other call that did not succeed (another code, a
	// node_lost of a call that started after the kill, a hang).
	NodeLost, Bad []Outcome
	// Window is from the kill to the end of the last call that failed (0
	// when none did): how long the survivors routed to the dead node.
	Window time.Duration
	// AfterKill counts the calls that started after the kill.
	AfterKill int
	// Lost is, for each node the load called through that listed the
	// victim live before the kill (GET /v1/cluster), the time from the
	// kill to its status showing the victim not live: the liveness window
	// as measured. A node that never showed it lost within the run is
	// absent, and named in NotLost.
	Lost    map[string]time.Duration
	NotLost []string
}

// Held reports whether the kill went as it must: every call succeeded but
// those in flight on the victim (node_lost), none hung, calls went on
// after the kill, and every node that saw the victim live saw it lost.
func (r *KillReport) Held() bool { return len(r.Bad) == 0 && r.AfterKill > 0 && len(r.NotLost) == 0 }

// Summary is the report in one line.
func (r *KillReport) Summary() string {
	lost := "none listed the victim live before the kill"
	if len(r.Lost) > 0 || len(r.NotLost) > 0 {
		var parts []string
		for _, n := range sortedKeys(r.Lost) {
			parts = append(parts, fmt.Sprintf("%s %v", n, r.Lost[n].Round(time.Millisecond)))
		}
		for _, n := range r.NotLost {
			parts = append(parts, n+" never")
		}
		lost = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%d calls: %s; node_lost in flight at the kill %d, other failures %d; routing window %v; victim seen lost: %s; %d calls started after the kill",
		len(r.Outcomes), FormatCounts(Counts(r.Outcomes)), len(r.NodeLost), len(r.Bad), r.Window.Round(time.Millisecond), lost, r.AfterKill)
}

// KillUnderLoad runs load, kills victim with SIGKILL after before, lets the
// load run for after more, and sorts the calls' outcomes.
func KillUnderLoad(ctx context.Context, c *Cluster, load Load, victim string, before, after time.Duration) (*KillReport, error) {
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	outc := make(chan []Outcome, 1)
	go func() { outc <- load.Run(lctx) }()
	sleep := func(d time.Duration) {
		select {
		case <-lctx.Done():
		case <-time.After(d):
		}
	}
	sleep(before)
	var watch []*Node
	for _, n := range load.Nodes {
		if live, _ := sees(lctx, n, victim); live {
			watch = append(watch, n)
		}
	}
	r := &KillReport{Lost: map[string]time.Duration{}}
	if err := c.Kill(victim); err != nil {
		stop()
		<-outc
		return nil, err
	}
	// The signal's time, not the call's: listing the victim's children
	// before it (a scan of /proc) can take a while on a loaded machine.
	r.Killed = c.Node(victim).KilledAt
	// The watchers outlive the load by a little: a status request can
	// take a moment while a stream the victim led elects a new leader.
	// Each poll's time is when it was sent: the node computes its status
	// as of then.
	wctx, wstop := context.WithTimeout(ctx, after+10*time.Second)
	defer wstop()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range watch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for wctx.Err() == nil {
				sent := time.Now()
				if live, err := sees(wctx, n, victim); err == nil && !live {
					mu.Lock()
					r.Lost[n.Name] = sent.Sub(r.Killed)
					mu.Unlock()
					return
				}
				select {
				case <-wctx.Done():
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
	}
	sleep(after)
	stop()
	wg.Wait()
	for _, n := range watch {
		if _, ok := r.Lost[n.Name]; !ok {
			r.NotLost = append(r.NotLost, n.Name)
		}
	}
	r.Outcomes = <-outc
	var last time.Time
	for _, o := range r.Outcomes {
		if o.Start.After(r.Killed) {
			r.AfterKill++
		}
		switch {
		case o.Code == "ok":
			continue
		case o.Code == cluster.ErrNodeLost.Code() && o.Start.Before(r.Killed):
			r.NodeLost = append(r.NodeLost, o)
		default:
			r.Bad = append(r.Bad, o)
		}
		if o.End.After(last) {
			last = o.End
		}
	}
	if !last.IsZero() {
		r.Window = last.Sub(r.Killed)
	}
	return r, ctx.Err()
}

// sees reports whether n's cluster status lists node name as live.
func sees(ctx context.Context, n *Node, name string) (bool, error) {
	st, err := n.Client.Cluster(ctx)
	if err != nil {
		return false, err
	}
	for _, ns := range st.Nodes {
		if ns.Name == name {
			return ns.Live, nil
		}
	}
	return false, nil
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Describe is one failed outcome in a line.
func (o Outcome) Describe(killed time.Time) string {
	return fmt.Sprintf("%s.%s through %s (caller %d, started %v from the kill, took %v): %s: %v",
		o.Target.Skill, o.Target.Tool, o.Node, o.Caller, o.Start.Sub(killed).Round(time.Millisecond), o.End.Sub(o.Start).Round(time.Millisecond), o.Code, o.Err)
}
