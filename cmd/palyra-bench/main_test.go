package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    options
		wantErr string
	}{
		{args: nil, want: options{}},
		{args: []string{"--quick", "--json", "--out", "d"}, want: options{quick: true, json: true, out: "d"}},
		{args: []string{"-only", " a, c ,"}, want: options{only: []string{"A", "C"}}},
		{args: []string{"--only", "G"}, wantErr: `--only: no scenario "G" (scenarios are A to F)`},
		{args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
		{args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope"},
	} {
		got, err := parseFlags(c.args, io.Discard)
		if c.wantErr != "" {
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("parseFlags(%q) error = %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.quick != c.want.quick || got.json != c.want.json || got.out != c.want.out || !slices.Equal(got.only, c.want.only) {
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
