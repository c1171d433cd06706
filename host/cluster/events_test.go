package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// evCluster is an n-node embedded cluster whose nodes run real hosts on
// temp state directories; onHook, when set, receives every hook outcome
// of every host with the host's index.
type evCluster struct {
	links []*Link
	hosts []*host.Host
	nodes []*Node
}

func startEvCluster(t *testing.T, n int, onHook func(i int, o hooks.Outcome)) *evCluster {
	t.Helper()
	ctx := context.Background()
	cfgs := embeddedConfigs(t, n)
	c := &evCluster{links: make([]*Link, n), hosts: make([]*host.Host, n), nodes: make([]*Node, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := cfgs[i]
			cfg.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Name: cfg.NodeName})
			c.links[i], errs[i] = Dial(ctx, cfg)
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for i := range c.links {
			if c.nodes[i] != nil {
				if err := c.nodes[i].Close(ctx); err != nil {
					t.Errorf("node %d Close: %v", i, err)
				}
			}
			if c.hosts[i] != nil {
				if err := c.hosts[i].Close(ctx); err != nil {
					t.Errorf("host %d Close: %v", i, err)
				}
			}
			if c.links[i] != nil {
				c.links[i].Close()
			}
		}
	})
	for i := range errs {
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
	}
	for i := range n {
		sock, err := os.MkdirTemp("", "hs")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(sock) })
		cfg := host.Config{
			StateDir:    t.TempDir(),
			SidecarPath: filepath.Join(bin, "palyra-sidecar"),
			HookTimeout: hooks.MaxHookTimeout,
			Supervisor:  supervisor.Config{SocketDir: sock},
			Logger:      hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Name: fmt.Sprintf("host%d", i)}),
		}
		if onHook != nil {
			cfg.OnHook = func(o hooks.Outcome) { onHook(i, o) }
		}
		if c.hosts[i], err = host.Open(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		if c.nodes[i], err = NewNode(ctx, c.links[i], c.hosts[i], NodeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// restart closes node i and makes a new node of the same link and host.
func (c *evCluster) restart(t *testing.T, i int) {
	t.Helper()
	ctx := context.Background()
	if err := c.nodes[i].Close(ctx); err != nil {
		t.Fatalf("node %d Close: %v", i, err)
	}
	c.nodes[i] = nil
	n, err := NewNode(ctx, c.links[i], c.hosts[i], NodeOptions{})
	if err != nil {
		t.Fatalf("node %d again: %v", i, err)
	}
	c.nodes[i] = n
}

// opEvents returns the events an op of seq journals: count events of
// skill skillID, alternately disabled and enabled.
func opEvents(seq uint64, count int, skillID string) []host.Event {
	var evs []host.Event
	for i := range count {
		kind := "skill:disabled"
		if (int(seq)+i)%2 == 0 {
			kind = "skill:enabled"
		}
		evs = append(evs, host.Event{
			ID: int64(1000*seq) + int64(i), Kind: kind, SkillID: skillID, Version: "0.1.0",
			Reason: fmt.Sprintf("op %d event %d", seq, i), Principal: "admin", At: time.Now().UTC(),
		})
	}
	return evs
}

// applyEverywhere calls opApplied for op seq on every node given, at once,
// as the applier of each node would.
func applyEverywhere(t *testing.T, nodes []*Node, seq uint64, at time.Time, evs []host.Event) {
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.opApplied(context.Background(), seq, at, evs)
			markApplied(t, n, seq)
		}()
	}
	wg.Wait()
}

// markApplied records op seq as applied on n (in memory and on disk, for
// a node made again of the same host), as its applier does after
// publishing the op's events (the hooks of an op's event wait for it).
func markApplied(t *testing.T, n *Node, seq uint64) {
	s := n.ops
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq > s.applied {
		if err := fsutil.WriteAtomic(n.appliedPath(), []byte(strconv.FormatUint(seq, 10)+"\n"), 0o600); err != nil {
			t.Errorf("node %s: record op %d applied: %v", n.Name(), seq, err)
			return
		}
		s.applied = seq
		close(s.changed)
		s.changed = make(chan struct{})
	}
}

// readEvents reads node's events after after without following.
func readEvents(t *testing.T, n *Node, after int64) []host.Event {
	t.Helper()
	var got []host.Event
	if err := n.Events(context.Background(), host.EventsRequest{After: after}, func(ev host.Event) error {
		got = append(got, ev)
		return nil
	}); err != nil {
		t.Fatalf("Events: %v", err)
	}
	return got
}

// TestEventsStoredOncePerCluster: the events of an op that all three nodes
// applied (and published) are stored once, in op order, with the op's
// sequence in a header; an op older than the de-duplication window is not
// published again; a node that starts skips the ops older than the last
// stored op event; a hook outcome or an anomaly quarantine the local host
// records is published by its node.
func TestEventsStoredOncePerCluster(t *testing.T) {
	c := startEvCluster(t, 3, nil)
	ctx := context.Background()
	now := time.Now()
	for seq := uint64(1); seq <= 5; seq++ {
		applyEverywhere(t, c.nodes, seq, now, opEvents(seq, 2, "palyra.echo"))
	}
	got := readEvents(t, c.nodes[2], 0)
	if len(got) != 10 {
		t.Fatalf("%d events stored, want 10 (5 ops × 2 events, published by 3 nodes each): %+v", len(got), got)
	}
	for i, ev := range got {
		seq, idx := uint64(i/2+1), i%2
		want := opEvents(seq, 2, "palyra.echo")[idx]
		if ev.ID != int64(i+1) || ev.Kind != want.Kind || ev.Reason != want.Reason || ev.SkillID != "palyra.echo" {
			t.Fatalf("event %d = %+v, want ID %d, kind %s, reason %q", i, ev, i+1, want.Kind, want.Reason)
		}
	}
	m, err := c.links[0].Events().GetMsg(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get(HeaderOpSeq) != "5" || m.Subject != "palyra.events.skill.enabled" || m.Header.Get(HeaderNode) == "" {
		t.Fatalf("last event: subject %s, headers %v", m.Subject, m.Header)
	}

	cases := []struct {
		name  string
		node  int
		seq   uint64
		at    time.Time
		evs   int // events of the op
		delta int // events stored by it
	}{
		{"an op older than the de-duplication window", 0, 6, now.Add(-3 * time.Minute), 1, 0},
		{"a new op", 2, 7, now, 1, 1},
		// Op 4 had 2 events: its third one has a new message id, so only
		// the op's sequence keeps it out.
		{"an op below the last stored op event, through a node started after it", 1, 4, now, 3, 0},
		{"the same through a node started before it", 0, 4, now, 3, 1},
	}
	c.restart(t, 1) // it reads op 5 as the last stored op event
	for _, tc := range cases {
		before := len(readEvents(t, c.nodes[0], 0))
		c.nodes[tc.node].opApplied(ctx, tc.seq, tc.at, opEvents(tc.seq, tc.evs, "palyra.echo"))
		if after := len(readEvents(t, c.nodes[0], 0)); after-before != tc.delta {
			t.Errorf("%s: %d events stored, want %d", tc.name, after-before, tc.delta)
		}
	}
}

// TestEventsReplayAndFollow: Events on node 2 replays the events stored
// through node 0 after the ID given and follows the new ones, in stream
// order; After < 0 replays nothing; the stream ends when ctx ends and when
// the node closes.
func TestEventsReplayAndFollow(t *testing.T) {
	c := startEvCluster(t, 3, nil)
	now := time.Now()
	for seq := uint64(1); seq <= 4; seq++ {
		c.nodes[0].opApplied(context.Background(), seq, now, opEvents(seq, 1, "palyra.echo"))
	}

	// Replay only.
	tests := []struct {
		after int64
		want  []int64
	}{
		{-1, nil},
		{0, []int64{1, 2, 3, 4}},
		{2, []int64{3, 4}},
		{4, nil},
		{40, nil},
	}
	for _, tc := range tests {
		var ids []int64
		for _, ev := range readEvents(t, c.nodes[2], tc.after) {
			ids = append(ids, ev.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
			t.Errorf("after %d: IDs %v, want %v", tc.after, ids, tc.want)
		}
	}

	// An error of fn ends the stream with it.
	stop := errors.New("enough")
	seen := 0
	err := c.nodes[1].Events(context.Background(), host.EventsRequest{After: 0, Follow: true}, func(host.Event) error {
		seen++
		return stop
	})
	if !errors.Is(err, stop) || seen != 1 {
		t.Fatalf("Events with a failing fn: %v after %d events, want %v after 1", err, seen, stop)
	}

	// Replay and follow, and follow only.
	type stream struct {
		ch     chan host.Event
		done   chan error
		cancel context.CancelFunc
	}
	open := func(n *Node, after int64) *stream {
		ctx, cancel := context.WithCancel(context.Background())
		s := &stream{ch: make(chan host.Event, 64), done: make(chan error, 1), cancel: cancel}
		go func() {
			s.done <- n.Events(ctx, host.EventsRequest{After: after, Follow: true}, func(ev host.Event) error {
				s.ch <- ev
				return nil
			})
		}()
		return s
	}
	replaying, live := open(c.nodes[2], 1), open(c.nodes[2], -1)
	defer replaying.cancel()
	defer live.cancel()
	next := func(s *stream) host.Event {
		t.Helper()
		select {
		case ev := <-s.ch:
			return ev
		case err := <-s.done:
			t.Fatalf("stream ended: %v", err)
		case <-time.After(30 * time.Second): // a lost event fails, not hangs
			t.Fatal("no event")
		}
		return host.Event{}
	}
	for id := int64(2); id <= 4; id++ {
		if ev := next(replaying); ev.ID != id {
			t.Fatalf("replayed %+v, want ID %d", ev, id)
		}
	}
	// The live stream's consumer exists once it was created; an event
	// published before then is not its to see, so it waits for one.
	for seq := uint64(5); ; seq++ {
		c.nodes[0].opApplied(context.Background(), seq, now, opEvents(seq, 1, "palyra.echo"))
		if ev := next(replaying); ev.ID != int64(seq) || ev.Reason != fmt.Sprintf("op %d event 0", seq) {
			t.Fatalf("followed %+v, want ID %d", ev, seq)
		}
		select {
		case ev := <-live.ch:
			// Its first event may be of an earlier round, which it saw
			// late; from there on it sees every event in order.
			for id := ev.ID + 1; id <= int64(seq); id++ {
				if ev := next(live); ev.ID != id {
					t.Fatalf("live stream got %+v, want ID %d", ev, id)
				}
			}
			for seq2 := seq + 1; seq2 < seq+4; seq2++ {
				c.nodes[0].opApplied(context.Background(), seq2, now, opEvents(seq2, 1, "palyra.echo"))
				for _, s := range []*stream{replaying, live} {
					if ev := next(s); ev.ID != int64(seq2) {
						t.Fatalf("followed %+v, want ID %d", ev, seq2)
					}
				}
			}
			replaying.cancel()
			if err := <-replaying.done; err != nil {
				t.Fatalf("stream ended by its ctx: %v", err)
			}
			if err := c.nodes[2].Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := <-live.done; err != nil {
				t.Fatalf("stream ended by Close: %v", err)
			}
			return
		case <-time.After(200 * time.Millisecond):
			if seq > 100 {
				t.Fatal("the live stream never started")
			}
		}
	}
}
