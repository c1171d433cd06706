package main

import (
	"context"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/stats"
)

// contender is one side of a comparison: a call and its timings.
type contender struct {
	name string
	// prep and after run untimed before and after each call (both may be
	// nil).
	prep  func(ctx context.Context) error
	call  func(ctx context.Context) error
	after func()
	times stats.Sample
}

// interleave runs every contender once per round, rotating the order each
// round so none always goes first, for warm rounds untimed and then rounds
// timed. Interleaving puts the machine's noise on every side alike.
func interleave(ctx context.Context, warm, rounds int, cs ...*contender) error {
	for r := range warm + rounds {
		for i := range cs {
			c := cs[(i+r)%len(cs)]
			if c.prep != nil {
				if err := c.prep(ctx); err != nil {
					return fmt.Errorf("%s: prepare: %w", c.name, err)
				}
			}
			start := time.Now()
			err := c.call(ctx)
			d := time.Since(start)
			if c.after != nil {
				c.after()
			}
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if r >= warm {
				c.times.Add(d)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// timing turns a contender's timings into a Measurement in unit
// (time.Microsecond or time.Millisecond).
func (c *contender) timing(unit time.Duration) report.Measurement {
	return report.FromDurations(c.name, &c.times, unit)
}

// compare is a Row of ours against a peer.
func compare(scenario, title string, ours, peer report.Measurement, goal *report.Goal, note string) report.Row {
	r := report.NewRow(scenario, title, ours, &peer, goal)
	r.Note = note
	return r
}

// absolute is a Row with no peer.
func absolute(scenario, title string, ours report.Measurement, goal *report.Goal, note string) report.Row {
	r := report.NewRow(scenario, title, ours, nil, goal)
	r.Note = note
	return r
}

// ratioGoal is a goal on ours/peer: at most target.
func ratioGoal(text string, target float64) *report.Goal {
	return &report.Goal{Text: text, On: report.OnRatio, Op: report.AtMost, Target: target}
}

// valueGoal is a goal on our median: op target.
func valueGoal(text, op string, target float64) *report.Goal {
	return &report.Goal{Text: text, On: report.OnValue, Op: op, Target: target}
}
