package clusterproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// Target is a tool the load calls.
type Target struct {
	Skill, Tool string
	Input       json.RawMessage
}

// Outcome is one call of the load.
type Outcome struct {
	// Node is the node whose API the call went to; Caller the caller's
	// index.
	Node   string
	Caller int
	Target Target
	// Start and End bound the call as the caller saw it.
	Start, End time.Time
	// Code is "ok", the error's stable code, or CodeHung when the node did
	// not answer within the call's deadline plus the grace.
	Code string
	Err  error
}

// CodeHung is the code of a call whose node did not answer within the
// call's deadline plus Load.Grace.
const CodeHung = "hung"

// Load is callers calling targets through the nodes' APIs until its
// context ends: caller i calls through Nodes[i%len(Nodes)] and walks the
// targets round-robin from target i.
type Load struct {
	Nodes   []*Node
	Targets []Target
	Callers int
	// Deadline is each call's timeout (sent with the request); Grace is
	// how long past it the caller waits for the answer before it counts
	// the call as hung.
	Deadline, Grace time.Duration
	// Pause is the caller's pause between calls (0: none).
	Pause time.Duration
}

// Run runs the load until ctx ends and returns every call's outcome in the
// order the calls ended.
func (l Load) Run(ctx context.Context) []Outcome {
	if l.Deadline <= 0 {
		l.Deadline = 5 * time.Second
	}
	if l.Grace <= 0 {
		l.Grace = 3 * time.Second
	}
	var mu sync.Mutex
	var out []Outcome
	var wg sync.WaitGroup
	for i := range l.Callers {
		n := l.Nodes[i%len(l.Nodes)]
		cl := n.Client
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := i; ctx.Err() == nil; k++ {
				t := l.Targets[k%len(l.Targets)]
				o := Outcome{Node: n.Name, Caller: i, Target: t, Start: time.Now()}
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.Deadline+l.Grace)
				_, err := cl.Call(cctx, host.CallRequest{SkillID: t.Skill, ToolID: t.Tool, Input: t.Input, Timeout: l.Deadline})
				o.End, o.Err = time.Now(), err
				switch {
				case err == nil:
					o.Code = "ok"
				case cctx.Err() != nil:
					o.Code = CodeHung
				default:
					o.Code = errcode.Of(err)
				}
				cancel()
				mu.Lock()
				out = append(out, o)
				mu.Unlock()
				if l.Pause > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(l.Pause):
					}
				}
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(a, b int) bool { return out[a].End.Before(out[b].End) })
	return out
}

// Counts is the number of outcomes per code.
func Counts(os []Outcome) map[string]int {
	m := map[string]int{}
	for _, o := range os {
		m[o.Code]++
	}
	return m
}

// FormatCounts prints counts as "ok=12 node_lost=1" (sorted by code).
func FormatCounts(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

// Median is the median of ds (0 when empty).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s[len(s)/2]
}

// Until calls try every interval until it returns nil or ctx ends, and
// returns how long that took (the time to first success) or the last
// error with ctx's.
func Until(ctx context.Context, interval time.Duration, try func(context.Context) error) (time.Duration, error) {
	start := time.Now()
	for {
		err := try(ctx)
		if err == nil {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), errors.Join(ctx.Err(), err)
		case <-time.After(interval):
		}
	}
}
