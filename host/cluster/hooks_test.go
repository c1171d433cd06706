package cluster

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// hookLog collects the hook outcomes of every host of a cluster.
type hookLog struct {
	mu     sync.Mutex
	ids    []int64 // the event IDs the hooks got, in the order they finished
	byHost map[int]int
	failed []hooks.Outcome
	more   chan struct{}
}

func newHookLog() *hookLog {
	return &hookLog{byHost: map[int]int{}, more: make(chan struct{}, 1)}
}

func (l *hookLog) add(i int, o hooks.Outcome) {
	var in struct {
		Payload struct {
			ID int64 `json:"id"`
		} `json:"payload"`
	}
	_ = json.Unmarshal(o.Payload, &in)
	l.mu.Lock()
	if o.Failed() {
		l.failed = append(l.failed, o)
	}
	l.ids = append(l.ids, in.Payload.ID)
	l.byHost[i]++
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
}

// wait returns once n outcomes arrived (failing t after a generous bound,
// so that a lost event fails the test instead of hanging it).
func (l *hookLog) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	for {
		l.mu.Lock()
		got := len(l.ids)
		l.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("%d hook outcomes of %d arrived", got, n)
		}
	}
}

// installEventLog installs the event-log example on every host and binds
// it to skill:enabled and skill:disabled there (the ops part replicates
// bindings; this test binds on each host directly).
func installEventLog(t *testing.T, c *evCluster) {
	t.Helper()
	ctx := context.Background()
	manifest, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, "event-log"), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	module, err := os.ReadFile(examplebuild.MustBuild(t, "event-log"))
	if err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(20)
	art := testskill.Build(t, string(manifest), module, key)
	trusted := []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}}
	for i, h := range c.hosts {
		if _, err := h.Install(ctx, host.InstallRequest{Artifact: art, TrustedPublishers: trusted}); err != nil {
			t.Fatalf("host %d install: %v", i, err)
		}
		for _, b := range []host.HookBinding{
			{HookID: "log.enabled", Event: hooks.EventSkillEnabled, PluginID: "palyra.event_log", Enabled: true},
			{HookID: "log.disabled", Event: hooks.EventSkillDisabled, PluginID: "palyra.event_log", Enabled: true},
		} {
			if _, err := h.BindHook(ctx, b); err != nil {
				t.Fatalf("host %d bind: %v", i, err)
			}
		}
	}
}

// TestHooksWaitForTheirOp: the event of an op is published by the first
// node that applied the op, and any node may pull it for its hooks; a
// node that has not applied the op yet (nor the ones before it, such as
// the hook's binding) waits until it did before it fires the hooks, so a
// hook bound just before the event is not missed. Each round, only node
// 0 has the binding and has applied the op when the event is published;
// the others get both a moment later. Every round's event fires its hook
// once, whichever node pulled it.
func TestHooksWaitForTheirOp(t *testing.T) {
	l := newHookLog()
	c := startEvCluster(t, 3, l.add)
	installEventLog(t, c)
	ctx := context.Background()
	for _, h := range c.hosts[1:] {
		if err := h.RemoveHook(ctx, "log.enabled"); err != nil {
			t.Fatal(err)
		}
		if err := h.RemoveHook(ctx, "log.disabled"); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	const rounds = 4
	for seq := uint64(1); seq <= rounds; seq++ {
		evs := opEvents(seq, 1, "palyra.echo")
		c.nodes[0].opApplied(ctx, seq, now, evs)
		markApplied(t, c.nodes[0], seq)
		time.Sleep(300 * time.Millisecond) // the lagging nodes' moment
		hookID := "log.disabled"
		if evs[0].Kind == "skill:enabled" {
			hookID = "log.enabled"
		}
		for i, h := range c.hosts[1:] {
			if _, err := h.BindHook(ctx, host.HookBinding{HookID: hookID, Event: evs[0].Kind, PluginID: "palyra.event_log", Enabled: true}); err != nil {
				t.Fatal(err)
			}
			markApplied(t, c.nodes[i+1], seq)
		}
		l.wait(t, int(seq))
		// The next round's nodes 1 and 2 lag again: without the binding.
		for _, h := range c.hosts[1:] {
			if err := h.RemoveHook(ctx, hookID); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkOnce(t, c, l, rounds)
}

// checkOnce asserts that the hooks consumer acked every event (so none
// can be delivered again), that the hooks got every one of the n
// lifecycle events of the stream exactly once, in stream order, without
// failing, and that the stream holds one hook:dispatched event for each.
func checkOnce(t *testing.T, c *evCluster, l *hookLog, n int) {
	t.Helper()
	ctx := context.Background()
	cons, err := c.links[0].JetStream().Consumer(ctx, EventsStream, HooksConsumer)
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 && info.AckFloor.Consumer >= uint64(n) {
			break
		}
		if time.Since(start) > time.Minute { // a failure bound, not a measurement
			t.Fatalf("hooks consumer not done: %+v", info)
		}
	}
	var lifecycle []int64
	dispatched := 0
	for _, ev := range readEvents(t, c.nodes[1], 0) {
		switch {
		case strings.HasPrefix(ev.Kind, "skill:"):
			lifecycle = append(lifecycle, ev.ID)
		case ev.Kind == host.EventHookDispatched:
			dispatched++
		}
	}
	if len(lifecycle) != n || dispatched != n {
		t.Fatalf("the stream holds %d lifecycle events and %d hook:dispatched, want %d of each", len(lifecycle), dispatched, n)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failed) > 0 {
		t.Fatalf("%d hooks failed, first %+v", len(l.failed), l.failed[0])
	}
	if fmt.Sprint(l.ids) != fmt.Sprint(lifecycle) {
		t.Fatalf("the hooks got the events %v, want %v (each once, in stream order)", l.ids, lifecycle)
	}
	t.Logf("hooks of %d events ran once each, in order; by node: %v", n, l.byHost)
}

// TestHooksOncePerCluster: with three nodes pulling, each lifecycle event
// (published by all three) fires its hook once in the cluster, in stream
// order, and the hook outcome reaches the cluster's stream once.
func TestHooksOncePerCluster(t *testing.T) {
	l := newHookLog()
	c := startEvCluster(t, 3, l.add)
	installEventLog(t, c)
	const ops, perOp = 12, 2
	now := time.Now()
	for seq := uint64(1); seq <= ops; seq++ {
		applyEverywhere(t, c.nodes, seq, now, opEvents(seq, perOp, "palyra.echo"))
	}
	l.wait(t, ops*perOp)
	checkOnce(t, c, l, ops*perOp)

	// Hooks fired through a node's API run there and their outcomes join
	// the cluster's events too.
	res, err := c.nodes[2].FireHooks(context.Background(), host.FireRequest{Event: "skill:enabled", Payload: json.RawMessage(`{"kind":"skill:enabled","id":999}`)})
	if err != nil || len(res.Outcomes) != 1 || res.Outcomes[0].Failed() {
		t.Fatalf("FireHooks: %+v, %v", res, err)
	}
	var last host.Event
	for _, ev := range readEvents(t, c.nodes[0], 0) {
		last = ev
	}
	if last.Kind != host.EventHookDispatched || last.Details["hook_id"] != "log.enabled" {
		t.Fatalf("last event %+v, want the fired hook's outcome", last)
	}
}

// TestHooksOnceWhileNodesComeAndGo: nodes closing (letting the event whose
// hooks they run finish) and opening again while events flow run no hook
// twice and lose none. (A node that dies mid-hook is another matter: its
// event is delivered again after hooksAckWait, at least once.)
func TestHooksOnceWhileNodesComeAndGo(t *testing.T) {
	l := newHookLog()
	c := startEvCluster(t, 3, l.add)
	installEventLog(t, c)
	const ops, perOp = 18, 2
	now := time.Now()
	for seq := uint64(1); seq <= ops; seq++ {
		applyEverywhere(t, c.nodes, seq, now, opEvents(seq, perOp, "palyra.echo"))
		if seq%3 == 0 {
			c.restart(t, int(seq/3)%3)
		}
	}
	l.wait(t, ops*perOp)
	checkOnce(t, c, l, ops*perOp)
}

// TestAnomalyQuarantinePublishedByItsNode: a quarantine the local host
// records with principal host.PrincipalAnomaly (its anomaly detector's)
// comes from no op, so the node that recorded it publishes it, once; an
// operator's change made on one host directly (not through an op) is not
// published by the follower.
func TestAnomalyQuarantinePublishedByItsNode(t *testing.T) {
	c := startEvCluster(t, 3, nil)
	installEventLog(t, c)
	ctx := context.Background()
	manifest, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, "echo"), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	module, err := os.ReadFile(examplebuild.MustBuild(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(21)
	if _, err := c.hosts[0].Install(ctx, host.InstallRequest{
		Artifact:          testskill.Build(t, string(manifest), module, key),
		TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}},
	}); err != nil {
		t.Fatal(err)
	}
	// Journal order on host 0: the operator's quarantine, then the
	// detector's; the follower publishes in that order or not at all.
	if _, err := c.hosts[0].Quarantine(host.WithPrincipal(ctx, "admin"), host.StatusRequest{SkillID: "palyra.echo", Reason: "by hand"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.hosts[0].Quarantine(host.WithPrincipal(ctx, host.PrincipalAnomaly), host.StatusRequest{SkillID: "palyra.event_log", Reason: "error rate"}); err != nil {
		t.Fatal(err)
	}
	var got []host.Event
	for start := time.Now(); len(got) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > time.Minute { // a failure bound, not a measurement
			t.Fatal("the anomaly quarantine never reached the cluster's stream")
		}
		got = readEvents(t, c.nodes[2], 0)
	}
	if len(got) != 1 || got[0].Kind != "skill:quarantined" || got[0].SkillID != "palyra.event_log" || got[0].Principal != host.PrincipalAnomaly {
		t.Fatalf("the cluster's stream holds %+v, want the anomaly quarantine of palyra.event_log only", got)
	}
	m, err := c.links[1].Events().GetMsg(ctx, uint64(got[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get(HeaderNode) != "n0" || m.Header.Get(HeaderOpSeq) != "" {
		t.Fatalf("published with headers %v, want node n0 and no op", m.Header)
	}
	// The quarantine is the cluster's: an op the other nodes apply, quiet
	// (the event above is its only one in the stream).
	for i := 1; i < 3; i++ {
		for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
			info, err := c.hosts[i].Info(ctx, host.SkillRef{SkillID: "palyra.event_log"})
			if err != nil {
				t.Fatal(err)
			}
			if info.Inventory.Status == "quarantined" {
				break
			}
			if time.Since(start) > time.Minute { // a failure bound, not a measurement
				t.Fatalf("node %d: palyra.event_log is %+v, want the anomaly quarantine replicated", i, info.Inventory)
			}
		}
	}
	if got := readEvents(t, c.nodes[2], 0); len(got) != 1 {
		t.Fatalf("the cluster's stream holds %d events after the replicated quarantine, want 1: %+v", len(got), got)
	}
}
