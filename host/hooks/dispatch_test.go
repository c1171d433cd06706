package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/install"
)

// errQuarantined is the sentinel of the error the daemon's CallFunc returns
// for a quarantined skill.
var errQuarantined = install.ErrQuarantined

// toolFunc is the behaviour of one fake skill.
type toolFunc func(ctx context.Context, toolID string, input json.RawMessage) (int32, json.RawMessage, error)

// fakeSkills is a CallFunc over in-memory skills. It records every call.
type fakeSkills struct {
	t      *testing.T
	skills map[string]toolFunc
	mu     sync.Mutex
	calls  []fakeCall
}

type fakeCall struct {
	skillID, toolID string
	input           HookInput
}

func (f *fakeSkills) call(ctx context.Context, skillID, toolID string, input json.RawMessage) (int32, json.RawMessage, error) {
	var in HookInput
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		f.t.Errorf("hook input %s: %v", input, err)
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{skillID, toolID, in})
	f.mu.Unlock()
	tool, ok := f.skills[skillID]
	if !ok {
		return 0, nil, errors.New("no such skill " + skillID)
	}
	return tool(ctx, toolID, input)
}

func exits(code int32, output string) toolFunc {
	return func(context.Context, string, json.RawMessage) (int32, json.RawMessage, error) {
		if output == "" {
			return code, nil, nil
		}
		return code, json.RawMessage(output), nil
	}
}

// waitsForCtx answers only when its context is done, with the context's
// error, as a sidecar call does.
func waitsForCtx(ctx context.Context, _ string, _ json.RawMessage) (int32, json.RawMessage, error) {
	<-ctx.Done()
	return 0, nil, ctx.Err()
}

// outcomeLog collects OnOutcome calls.
type outcomeLog struct {
	mu   sync.Mutex
	outs []Outcome
	c    chan Outcome
}

func newOutcomeLog() *outcomeLog { return &outcomeLog{c: make(chan Outcome, 64)} }

func (l *outcomeLog) add(o Outcome) {
	l.mu.Lock()
	l.outs = append(l.outs, o)
	l.mu.Unlock()
	l.c <- o
}

func (l *outcomeLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.outs)
}

// newTestDispatcher binds bs in a fresh store and returns a Dispatcher over
// skills, closed when the test ends.
func newTestDispatcher(t *testing.T, cfg DispatcherConfig, skills map[string]toolFunc, bs ...Binding) (*Dispatcher, *fakeSkills) {
	t.Helper()
	s := testStore(t)
	for _, b := range bs {
		if _, err := s.Bind(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	fake := &fakeSkills{t: t, skills: skills}
	cfg.Store = s
	cfg.Call = fake.call
	d := NewDispatcher(cfg)
	t.Cleanup(func() {
		if err := d.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d, fake
}

func TestFire(t *testing.T) {
	log := newOutcomeLog()
	never := func(context.Context, string, json.RawMessage) (int32, json.RawMessage, error) {
		t.Error("a hook that must not run was called")
		return 0, nil, nil
	}
	d, fake := newTestDispatcher(t, DispatcherConfig{OnOutcome: log.add}, map[string]toolFunc{
		"acme.annotate": exits(10, `{"note":"looks odd"}`),
		"acme.block":    exits(30, ""),
		"acme.continue": exits(0, `null`),
		"acme.never":    never,
	},
		Binding{HookID: "h.annotate", Event: "before_tool", PluginID: "acme.annotate", ToolID: "acme.annotate.check", Enabled: true},
		Binding{HookID: "h.block", Event: EventRunBeforeTool, PluginID: "acme.block", Enabled: true},
		Binding{HookID: "h.continue", Event: EventRunBeforeTool, PluginID: "acme.continue", Enabled: true},
		Binding{HookID: "h.disabled", Event: EventRunBeforeTool, PluginID: "acme.never", Enabled: false},
		Binding{HookID: "h.other", Event: EventRunAfterTool, PluginID: "acme.never", Enabled: true},
	)
	payload := map[string]any{"tool": "palyra.fs.write", "args": map[string]any{"path": "/tmp/x"}}
	outs, res, err := d.Fire(context.Background(), "Run:Before_Tool", payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 3 {
		t.Fatalf("%d outcomes, want 3: %+v", len(outs), outs)
	}
	want := []struct {
		hook     string
		code     int32
		decision Decision
		output   string
	}{
		{"h.annotate", 10, DecisionAnnotate, `{"note":"looks odd"}`},
		{"h.block", 30, DecisionBlock, ""},
		{"h.continue", 0, DecisionContinue, "null"},
	}
	for i, w := range want {
		o := outs[i]
		if o.HookID != w.hook || o.ExitCode != w.code || o.Decision != w.decision || string(o.Output) != w.output || o.Failed() || o.Event != EventRunBeforeTool {
			t.Errorf("outcome %d = %+v, want %+v", i, o, w)
		}
		var in HookInput
		if err := json.Unmarshal(o.Payload, &in); err != nil || in.HookID != w.hook || in.Event != EventRunBeforeTool {
			t.Errorf("outcome %d payload %s: %v", i, o.Payload, err)
		}
	}
	if outs[0].ToolID != "acme.annotate.check" || outs[1].ToolID != "" {
		t.Errorf("tool ids %q, %q", outs[0].ToolID, outs[1].ToolID)
	}
	wantRes := Resolution{
		Decision: DecisionBlock, Source: "hook", HookID: "h.block", PluginID: "acme.block", Terminal: true,
		Conflicts: []Vote{{"h.annotate", "acme.annotate", DecisionAnnotate}, {"h.continue", "acme.continue", DecisionContinue}},
	}
	if !equalResolution(res, wantRes) {
		t.Errorf("resolution %+v\nwant %+v", res, wantRes)
	}
	if log.len() != 3 {
		t.Errorf("OnOutcome called %d times, want 3", log.len())
	}

	// The input contract: {"hook_id", "event", "payload": <payload as JSON>}.
	wantPayload, _ := json.Marshal(payload)
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.calls) != 3 {
		t.Fatalf("%d calls", len(fake.calls))
	}
	for _, c := range fake.calls {
		if !bytes.Equal(c.input.Payload, wantPayload) || c.input.Event != EventRunBeforeTool {
			t.Errorf("call %+v: payload %s, want %s", c, c.input.Payload, wantPayload)
		}
		if c.skillID == "acme.annotate" && c.toolID != "acme.annotate.check" {
			t.Errorf("tool id %q passed for acme.annotate", c.toolID)
		}
	}
}

func TestFireNoHooks(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatcherConfig{}, nil)
	outs, res, err := d.Fire(context.Background(), EventGatewayStartup, StartupPayload())
	if err != nil || len(outs) != 0 {
		t.Fatalf("Fire = %v, %v", outs, err)
	}
	if res.Decision != DecisionContinue || res.Source != RuntimeSource || res.Terminal {
		t.Errorf("resolution %+v", res)
	}
}

// TestFireDecisionNotAllowed checks that a decision outside its event's
// allowed set is a failure of the hook (Palyra's hook.failed), not a vote.
func TestFireDecisionNotAllowed(t *testing.T) {
	tests := []struct {
		event   string
		code    int32
		allowed bool
	}{
		{EventSkillEnabled, 0, true},
		{EventSkillEnabled, 10, true},
		{EventSkillEnabled, 7, true},
		{EventSkillEnabled, 20, false},
		{EventSkillEnabled, 30, false},
		{EventSkillQuarantined, 40, false},
		{EventGatewayStartup, -1, false},
		{EventRunAfterRun, 99, false},
		{EventRunAfterTool, 99, true},
		{EventRunBeforeRun, 40, false},
		{EventRunBeforeDelivery, 40, true},
	}
	for _, tt := range tests {
		d, _ := newTestDispatcher(t, DispatcherConfig{}, map[string]toolFunc{"s": exits(tt.code, "")},
			Binding{HookID: "h", Event: tt.event, PluginID: "s", Enabled: true})
		outs, res, err := d.Fire(context.Background(), tt.event, nil)
		if err != nil || len(outs) != 1 {
			t.Fatalf("Fire: %v, %v", outs, err)
		}
		o := outs[0]
		if o.Decision != DecisionFromExitCode(tt.code) || o.ExitCode != tt.code {
			t.Errorf("%s exit %d: outcome %+v", tt.event, tt.code, o)
		}
		if tt.allowed {
			if o.Failed() || res.HookID != "h" {
				t.Errorf("%s exit %d: failed %+v, resolution %+v", tt.event, tt.code, o, res)
			}
			continue
		}
		if o.Code != "hook_decision_not_allowed" || res.Source != RuntimeSource || len(res.Failed) != 1 {
			t.Errorf("%s exit %d: outcome %+v, resolution %+v", tt.event, tt.code, o, res)
		}
	}
}

func TestFireCallErrors(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatcherConfig{}, map[string]toolFunc{
		"quarantined": func(context.Context, string, json.RawMessage) (int32, json.RawMessage, error) {
			return 0, nil, errors.Join(errors.New("call acme.q"), errQuarantined)
		},
		"huge":    exits(0, `"`+strings.Repeat("x", MaxOutputBytes)+`"`),
		"garbage": exits(0, `{"a":`),
	},
		Binding{HookID: "missing", Event: EventSkillRemoved, PluginID: "gone", Enabled: true},
		Binding{HookID: "quarantined", Event: EventSkillRemoved, PluginID: "quarantined", Enabled: true},
		Binding{HookID: "huge", Event: EventSkillRemoved, PluginID: "huge", Enabled: true},
		Binding{HookID: "garbage", Event: EventSkillRemoved, PluginID: "garbage", Enabled: true},
	)
	outs, res, err := d.Fire(context.Background(), EventSkillRemoved, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"garbage":     "invalid_hook_output",
		"huge":        "invalid_hook_output",
		"missing":     errcode.Internal,
		"quarantined": "skill_quarantined",
	}
	for _, o := range outs {
		if !o.Failed() || o.Code != want[o.HookID] || o.Output != nil {
			t.Errorf("outcome %s: code %q, err %q, output %d bytes; want code %q", o.HookID, o.Code, o.Err, len(o.Output), want[o.HookID])
		}
	}
	if len(outs) != 4 || res.Source != RuntimeSource || len(res.Failed) != 4 {
		t.Errorf("outcomes %d, resolution %+v", len(outs), res)
	}
}

// TestFireCallErrorCutOnRune checks that a long error text from a call is
// cut to maxErrBytes on a rune boundary: a cut through a multi-byte rune
// would leave invalid UTF-8 in Outcome.Err.
func TestFireCallErrorCutOnRune(t *testing.T) {
	// "x" first puts byte maxErrBytes inside a 2-byte rune.
	msg := "x" + strings.Repeat("é", maxErrBytes)
	d, _ := newTestDispatcher(t, DispatcherConfig{}, map[string]toolFunc{
		"wordy": func(context.Context, string, json.RawMessage) (int32, json.RawMessage, error) {
			return 0, nil, errors.New(msg)
		},
	}, Binding{HookID: "wordy", Event: EventSkillRemoved, PluginID: "wordy", Enabled: true})
	outs, _, err := d.Fire(context.Background(), EventSkillRemoved, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 {
		t.Fatalf("outcomes %+v", outs)
	}
	got := outs[0].Err
	if !utf8.ValidString(got) {
		t.Errorf("outcome error is not valid UTF-8: ...%q", got[max(len(got)-8, 0):])
	}
	want := msg[:maxErrBytes-1] + "..."
	if got != want {
		t.Errorf("outcome error is %d bytes ending %q, want %d bytes ending %q", len(got), got[max(len(got)-8, 0):], len(want), want[len(want)-8:])
	}
}

// TestFireTimeout checks that a hook is cut at its time limit with code
// hook_timeout, and that Fire does not wait for a tool that ignores its
// context: the stuck tool is released only after Fire has returned.
func TestFireTimeout(t *testing.T) {
	release := make(chan struct{})
	stuck := func(context.Context, string, json.RawMessage) (int32, json.RawMessage, error) {
		<-release
		return 0, nil, nil
	}
	d, _ := newTestDispatcher(t, DispatcherConfig{Timeout: 1}, map[string]toolFunc{
		"slow":  waitsForCtx,
		"stuck": stuck,
		"fast":  exits(10, ""),
	},
		Binding{HookID: "a.fast", Event: EventRunBeforeRun, PluginID: "fast", Enabled: true, TimeoutMs: MaxHookTimeout.Milliseconds()},
		Binding{HookID: "b.slow", Event: EventRunBeforeRun, PluginID: "slow", Enabled: true, TimeoutMs: 1},
		Binding{HookID: "c.slow.default", Event: EventRunBeforeRun, PluginID: "slow", Enabled: true},
		Binding{HookID: "d.stuck", Event: EventRunBeforeRun, PluginID: "stuck", Enabled: true, TimeoutMs: 1},
	)
	outs, res, err := d.Fire(context.Background(), EventRunBeforeRun, nil)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 4 || outs[0].Failed() {
		t.Fatalf("outcomes %+v", outs)
	}
	for _, o := range outs[1:] {
		if o.Code != "hook_timeout" || o.Decision != "" {
			t.Errorf("outcome %s: code %q, err %q", o.HookID, o.Code, o.Err)
		}
	}
	if res.HookID != "a.fast" || res.Decision != DecisionAnnotate || len(res.Failed) != 3 {
		t.Errorf("resolution %+v", res)
	}
}

func TestFireCallerCancel(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatcherConfig{}, map[string]toolFunc{"slow": waitsForCtx},
		Binding{HookID: "h", Event: EventRunBeforeRun, PluginID: "slow", Enabled: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	outs, _, err := d.Fire(ctx, EventRunBeforeRun, nil)
	if err != nil || len(outs) != 1 || outs[0].Code != "hook_canceled" {
		t.Fatalf("Fire = %+v, %v", outs, err)
	}
}

func TestFireErrors(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatcherConfig{}, nil)
	ctx := context.Background()
	if _, _, err := d.Fire(ctx, "on_boot", nil); !errors.Is(err, ErrUnknownEvent) {
		t.Errorf("unknown event: %v", err)
	}
	for _, p := range []any{make(chan int), json.RawMessage(`{`), strings.Repeat("x", MaxPayloadBytes)} {
		if _, _, err := d.Fire(ctx, EventSkillEnabled, p); !errors.Is(err, ErrInvalidPayload) || errcode.Of(err) != "invalid_hook_payload" {
			t.Errorf("payload %T: %v", p, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(d.store.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.store.Path(), []byte(`{"entries":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Fire(ctx, EventSkillEnabled, nil); !errors.Is(err, ErrInvalidBindings) {
		t.Errorf("bad bindings file: %v", err)
	}
	if d.Enqueue(EventSkillEnabled, make(chan int)) {
		t.Error("Enqueue took an unencodable payload")
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Fire(ctx, EventSkillEnabled, nil); !errors.Is(err, ErrDispatcherClosed) {
		t.Errorf("Fire after Close: %v", err)
	}
	if d.Enqueue(EventSkillEnabled, nil) {
		t.Error("Enqueue after Close returned true")
	}
	if d.Dropped() != 0 {
		t.Errorf("Dropped = %d, want 0: refused events are not drops", d.Dropped())
	}
}

// gate is a tool that reports each call on started and answers only once
// release is closed.
func gate(started chan<- struct{}, release <-chan struct{}) toolFunc {
	return func(context.Context, string, json.RawMessage) (int32, json.RawMessage, error) {
		started <- struct{}{}
		<-release
		return 0, nil, nil
	}
}

// TestEnqueueQueueFull stalls the router (it waits for the skills' lock the
// test holds) with a one-slot queue behind it, and checks that the next
// event is dropped and counted without blocking.
func TestEnqueueQueueFull(t *testing.T) {
	log := newOutcomeLog()
	d, _ := newTestDispatcher(t, DispatcherConfig{QueueDepth: 1, OnOutcome: log.add},
		map[string]toolFunc{"s": exits(0, "")},
		Binding{HookID: "h", Event: EventSkillInstalled, PluginID: "s", Enabled: true})

	d.smu.Lock()
	if !d.Enqueue(EventSkillInstalled, events.Event{Kind: EventSkillInstalled, SkillID: "one"}) {
		t.Fatal("first Enqueue refused")
	}
	for len(d.queue) != 0 { // until the router has taken it (and waits for smu)
		runtime.Gosched()
	}
	if !d.Enqueue("skill.installed", events.Event{Kind: EventSkillInstalled, SkillID: "two"}) {
		t.Fatal("second Enqueue refused: the queue has a free slot")
	}
	if d.Enqueue(EventSkillInstalled, events.Event{Kind: EventSkillInstalled, SkillID: "three"}) {
		t.Fatal("third Enqueue accepted: the queue is full")
	}
	d.smu.Unlock()
	if d.Dropped() != 1 {
		t.Errorf("Dropped = %d, want 1", d.Dropped())
	}
	if d.Enqueue("skill:exploded", nil) || d.Dropped() != 1 {
		t.Error("an unknown event was enqueued or counted as a drop")
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if log.len() != 2 {
		t.Errorf("%d outcomes, want 2 (both queued events run before Close returns)", log.len())
	}
}

// TestSkillQueueFull: with one event running and SkillQueueDepth waiting
// for a skill, the next event is not run by the skill's hooks but reported
// as an outcome of code hook_queue_full for each of them and counted; the
// events that were queued still run. (TestEnqueueOrderPerSkill shows that
// a held skill does not hold another.)
func TestSkillQueueFull(t *testing.T) {
	log := newOutcomeLog()
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	d, _ := newTestDispatcher(t, DispatcherConfig{Workers: 2, SkillQueueDepth: 1, OnOutcome: log.add},
		map[string]toolFunc{"gate": gate(started, release)},
		Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "gate", Enabled: true},
		Binding{HookID: "b", Event: EventSkillEnabled, PluginID: "gate", Enabled: true})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	for i := range 3 {
		if !d.Enqueue(EventSkillEnabled, events.Event{ID: int64(i + 1), Kind: EventSkillEnabled}) {
			t.Fatalf("Enqueue %d refused", i+1)
		}
		if i == 0 {
			<-started // gate runs event 1 (hook a); event 2 waits; event 3 overflows
		}
	}
	// Before gate is released: hooks a and b of event 3, as
	// hook_queue_full.
	got := map[string]int{}
	for range 2 {
		o := <-log.c
		switch {
		case o.PluginID == "gate" && o.Code == "hook_queue_full" && strings.Contains(o.Err, "limit (SkillQueueDepth)"):
			var in HookInput
			var ev events.Event
			if json.Unmarshal(o.Payload, &in) != nil || json.Unmarshal(in.Payload, &ev) != nil || ev.ID != 3 {
				t.Errorf("overflow outcome for %s", o.Payload)
			}
			got["full "+o.HookID]++
		default:
			t.Errorf("outcome %+v", o)
		}
	}
	if fmt.Sprint(got) != "map[full a:1 full b:1]" || d.Overflowed() != 1 {
		t.Errorf("outcomes %v, Overflowed %d", got, d.Overflowed())
	}
	close(release)
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := log.len(); n != 6 || d.Dropped() != 0 {
		t.Errorf("%d outcomes, %d dropped; want 6 (hooks a and b of events 1 and 2 ran) and 0", n, d.Dropped())
	}
}

// TestEnqueueOrderPerSkill: the hooks of one skill see its events one at a
// time and in order, while another skill's hooks go on: skill "slow" is
// held on its first event until skill "fast" has run all of them.
func TestEnqueueOrderPerSkill(t *testing.T) {
	const n = 200
	type record struct {
		mu       sync.Mutex
		ids      []int64
		inflight int
		overlap  bool
	}
	recs := map[string]*record{"slow": {}, "fast": {}}
	hold := make(chan struct{})
	tool := func(skill string) toolFunc {
		r := recs[skill]
		return func(_ context.Context, _ string, input json.RawMessage) (int32, json.RawMessage, error) {
			var in struct{ Payload events.Event }
			if err := json.Unmarshal(input, &in); err != nil {
				return 0, nil, err
			}
			r.mu.Lock()
			r.inflight++
			r.overlap = r.overlap || r.inflight > 1
			r.ids = append(r.ids, in.Payload.ID)
			r.mu.Unlock()
			if skill == "slow" && in.Payload.ID == 1 {
				<-hold
			}
			runtime.Gosched() // give an overlapping call its chance
			r.mu.Lock()
			r.inflight--
			r.mu.Unlock()
			return 0, nil, nil
		}
	}
	log := &outcomeLog{c: make(chan Outcome, 2*n)}
	d, _ := newTestDispatcher(t, DispatcherConfig{Workers: 2, OnOutcome: log.add},
		map[string]toolFunc{"slow": tool("slow"), "fast": tool("fast")},
		Binding{HookID: "s", Event: EventSkillUpdated, PluginID: "slow", Enabled: true},
		Binding{HookID: "f", Event: EventSkillUpdated, PluginID: "fast", Enabled: true})
	for i := int64(1); i <= n; i++ {
		if !d.Enqueue(EventSkillUpdated, events.Event{ID: i, Kind: EventSkillUpdated}) {
			t.Fatalf("Enqueue %d refused", i)
		}
	}
	for range n {
		if o := <-log.c; o.PluginID != "fast" || o.Failed() {
			close(hold)
			t.Fatalf("outcome %+v while slow is held", o)
		}
	}
	close(hold)
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for skill, r := range recs {
		if len(r.ids) != n || r.overlap {
			t.Errorf("%s: %d calls, overlapping %v", skill, len(r.ids), r.overlap)
		}
		for i, id := range r.ids {
			if id != int64(i+1) {
				t.Fatalf("%s: call %d had event %d; order %v", skill, i, id, r.ids)
			}
		}
	}
}

// TestCloseCancelsInFlight checks that when Close's context ends, in-flight
// calls are cancelled (hook_canceled) and queued events are dropped.
func TestCloseCancelsInFlight(t *testing.T) {
	log := newOutcomeLog()
	started := make(chan struct{}, 4)
	d, _ := newTestDispatcher(t, DispatcherConfig{Workers: 1, OnOutcome: log.add},
		map[string]toolFunc{"slow": func(ctx context.Context, tool string, in json.RawMessage) (int32, json.RawMessage, error) {
			started <- struct{}{}
			return waitsForCtx(ctx, tool, in)
		}},
		Binding{HookID: "h", Event: EventSkillUpdated, PluginID: "slow", Enabled: true})
	if !d.Enqueue(EventSkillUpdated, nil) {
		t.Fatal("Enqueue refused")
	}
	<-started
	if !d.Enqueue(EventSkillUpdated, nil) {
		t.Fatal("Enqueue refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	if log.len() != 1 || log.outs[0].Code != "hook_canceled" {
		t.Errorf("outcomes %+v", log.outs)
	}
	if d.Dropped() != 1 {
		t.Errorf("Dropped = %d, want 1 (the queued event)", d.Dropped())
	}
	if err := d.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestFollow runs the daemon's path: an events.Bus subscription followed by
// the Dispatcher; the hook receives the event as its payload.
func TestFollow(t *testing.T) {
	log := newOutcomeLog()
	d, fake := newTestDispatcher(t, DispatcherConfig{OnOutcome: log.add},
		map[string]toolFunc{"auditor": exits(10, "")},
		Binding{HookID: "audit", Event: "skill.quarantined", PluginID: "auditor", Enabled: true})
	var bus events.Bus
	ctx, cancel := context.WithCancel(context.Background())
	sub := bus.Subscribe(context.Background(), 0)
	defer sub.Close()
	followed := make(chan error, 1)
	go func() { followed <- d.Follow(ctx, sub.C()) }()

	bus.Publish(events.Event{ID: 7, Kind: "skill:weird", SkillID: "x"})
	bus.Publish(events.Event{ID: 8, Kind: events.SkillQuarantined, SkillID: "acme.bad", Version: "1.0.0", Reason: "audit finding"})
	o := <-log.c
	if o.HookID != "audit" || o.Decision != DecisionAnnotate || o.Failed() {
		t.Errorf("outcome %+v", o)
	}
	fake.mu.Lock()
	in := fake.calls[0].input
	fake.mu.Unlock()
	var ev events.Event
	if err := json.Unmarshal(in.Payload, &ev); err != nil || ev.ID != 8 || ev.SkillID != "acme.bad" || ev.Reason != "audit finding" {
		t.Errorf("payload %s: %v", in.Payload, err)
	}
	cancel()
	if err := <-followed; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow = %v", err)
	}

	// A closed channel ends Follow without error.
	c := make(chan events.Event)
	close(c)
	if err := d.Follow(context.Background(), c); err != nil {
		t.Errorf("Follow of a closed channel = %v", err)
	}
}

func TestNewDispatcherDefaults(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatcherConfig{Timeout: 10 * MaxHookTimeout}, nil)
	if d.timeout != MaxHookTimeout || cap(d.queue) != DefaultQueueDepth {
		t.Errorf("timeout %v, queue %d", d.timeout, cap(d.queue))
	}
	d2, _ := newTestDispatcher(t, DispatcherConfig{}, nil)
	if d2.timeout != DefaultTimeout {
		t.Errorf("default timeout %v", d2.timeout)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewDispatcher without a Store did not panic")
		}
	}()
	NewDispatcher(DispatcherConfig{})
}

func TestOutcomeJSON(t *testing.T) {
	o := Outcome{HookID: "h", PluginID: "s", Event: EventSkillEnabled, Decision: DecisionAnnotate, ExitCode: 10, Payload: json.RawMessage(`{"hook_id":"h"}`)}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var back Outcome
	if err := json.Unmarshal(data, &back); err != nil || back.HookID != "h" || back.Decision != DecisionAnnotate || string(back.Payload) != `{"hook_id":"h"}` {
		t.Errorf("round trip %s: %+v, %v", data, back, err)
	}
}
