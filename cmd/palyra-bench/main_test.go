package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    options
		wantErr string
	}{
		{args: nil, want: options{}},
		{args: []string{"--quick", "--json", "--out", "d"}, want: options{quick: true, json: true, out: "d"}},
		{args: []string{"-only", " a, c ,"}, want: options{only: []string{"A", "C"}}},
		{args: []string{"--only", "Z"}, wantErr: `--only: no scenario "Z" (scenarios are A to H)`},
		{args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
		{args: []string{"--only", "r1, R8", "--reliability", "--quick"}, want: options{reliability: true, quick: true, only: []string{"R1", "R8"}}},
		{args: []string{"--reliability", "--only", "A"}, wantErr: `--only: no reliability scenario "A" (scenarios are R1 to R8)`},
		{args: []string{"--only", "R1"}, wantErr: `--only: no scenario "R1" (scenarios are A to H)`},
		{args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
		{args: []string{"--cluster-demo", "--cluster-bin", "b", "--cluster-artifacts", "x.palyra-skill, y.palyra-skill,"},
			want: options{clusterDemo: true, clusterBin: "b", clusterArtifacts: []string{"x.palyra-skill", "y.palyra-skill"}}},
	} {
		got, err := parseFlags(c.args, io.Discard)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("parseFlags(%q) error = %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.quick != c.want.quick || got.reliability != c.want.reliability || got.json != c.want.json || got.out != c.want.out || !slices.Equal(got.only, c.want.only) ||
			got.clusterDemo != c.want.clusterDemo || got.clusterBin != c.want.clusterBin || !slices.Equal(got.clusterArtifacts, c.want.clusterArtifacts) {
			t.Errorf("parseFlags(%q) = %+v, %v; want %+v", c.args, got, err, c.want)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

// TestInterleave: every contender runs once per round, prep and after
// around each call, the order rotating; warm rounds are not timed; the
// first error stops the run and names its contender.
func TestInterleave(t *testing.T) {
	var order []string
	mk := func(name string) *contender {
		return &contender{
			name:  name,
			prep:  func(context.Context) error { order = append(order, "prep "+name); return nil },
			call:  func(context.Context) error { order = append(order, name); return nil },
			after: func() { order = append(order, "after "+name) },
		}
	}
	a, b := mk("a"), mk("b")
	if err := interleave(context.Background(), 1, 2, a, b); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"prep a", "a", "after a", "prep b", "b", "after b", // warm round
		"prep b", "b", "after b", "prep a", "a", "after a",
		"prep a", "a", "after a", "prep b", "b", "after b",
	}
	if !slices.Equal(order, want) {
		t.Errorf("order\n %q\nwant\n %q", order, want)
	}
	if a.times.Len() != 2 || b.times.Len() != 2 {
		t.Errorf("timed %d and %d calls, want 2 each", a.times.Len(), b.times.Len())
	}
	boom := errors.New("boom")
	bad := &contender{name: "bad", call: func(context.Context) error { return boom }}
	if err := interleave(context.Background(), 0, 3, a, bad); !errors.Is(err, boom) || err.Error() != "bad: boom" {
		t.Errorf("interleave with a failing contender = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := interleave(ctx, 0, 3, mk("c")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled interleave = %v", err)
	}
}

// TestLoad: every caller calls until the time is up, each call is timed
// once, the caller and call numbers reach call, and the first error stops
// the run.
func TestLoad(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{} // caller → calls
	rate, lat, err := load(context.Background(), 50*time.Millisecond, 3, func(_ context.Context, caller, k int) error {
		mu.Lock()
		defer mu.Unlock()
		if k != seen[caller] {
			return fmt.Errorf("caller %d: call %d after %d calls", caller, k, seen[caller])
		}
		seen[caller]++
		time.Sleep(time.Millisecond)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for c := range 3 {
		if seen[c] == 0 {
			t.Errorf("caller %d made no call", c)
		}
		total += seen[c]
	}
	if lat.Len() != total || rate <= 0 {
		t.Errorf("%d latencies and rate %v for %d calls", lat.Len(), rate, total)
	}

	boom := errors.New("boom")
	_, _, err = load(context.Background(), time.Minute, 4, func(ctx context.Context, caller, k int) error {
		if caller == 2 && k == 3 {
			return boom
		}
		return ctx.Err()
	})
	if !errors.Is(err, boom) {
		t.Errorf("load with a failing call = %v, want boom", err)
	}
}
