package hooks

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
)

// invJournal is a real inventory journal as a Journal, kinds spelled as
// hook events, as the daemon's is.
type invJournal struct{ db *inventory.DB }

func (j invJournal) After(ctx context.Context, after int64, limit int) ([]events.Event, error) {
	page, err := j.db.Events(ctx, inventory.EventFilter{AfterID: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]events.Event, len(page))
	for i, e := range page {
		out[i] = events.Event{ID: e.ID, Kind: strings.Replace(string(e.Kind), ".", ":", 1), SkillID: e.SkillID, At: e.At}
	}
	return out, nil
}

func (j invJournal) Head(ctx context.Context) (int64, error) { return j.db.LastEventID(ctx) }

// journalFixture is a state dir with a real inventory and a bindings store
// whose new cursors start at its journal head.
type journalFixture struct {
	t     *testing.T
	dir   string
	db    *inventory.DB
	store *Store
	clock atomic.Int64
}

func newJournalFixture(t *testing.T) *journalFixture {
	t.Helper()
	dir := t.TempDir()
	db, err := inventory.Open(context.Background(), filepath.Join(dir, "inventory.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &journalFixture{t: t, dir: dir, db: db}
	f.clock.Store(1700000000000)
	f.store = OpenStore(dir, WithJournalHead(db.LastEventID))
	// Every binding gets its own creation time.
	f.store.now = func() time.Time { return time.UnixMilli(f.clock.Add(1)) }
	return f
}

// journal appends kinds (inventory spelling, "skill.enabled") and returns
// their ids.
func (f *journalFixture) journal(kinds ...string) []int64 {
	f.t.Helper()
	var ids []int64
	err := f.db.Update(context.Background(), func(tx *inventory.Tx) error {
		for _, k := range kinds {
			id, err := tx.AppendEvent(inventory.Event{Kind: inventory.EventKind(k), SkillID: "acme.subject", Principal: "test"})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return ids
}

func (f *journalFixture) bind(b Binding) Binding {
	f.t.Helper()
	out, err := f.store.Bind(context.Background(), b)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *journalFixture) cursor(hookID string) int64 {
	f.t.Helper()
	cs, err := f.store.Cursors()
	if err != nil {
		f.t.Fatal(err)
	}
	c, ok := cs[hookID]
	if !ok {
		f.t.Fatalf("no cursor for %s in %v", hookID, cs)
	}
	return c.EventID
}

// dispatcher starts a Dispatcher over the fixture with call; its outcomes
// go to the returned channel. It is closed at the end of the test.
func (f *journalFixture) dispatcher(call CallFunc, cfg DispatcherConfig) (*Dispatcher, <-chan Outcome) {
	out := make(chan Outcome, 1024)
	cfg.Store, cfg.Call, cfg.Journal = f.store, call, invJournal{f.db}
	cfg.OnOutcome = func(o Outcome) { out <- o }
	d := NewDispatcher(cfg)
	f.t.Cleanup(func() { d.Close(context.Background()) })
	return d, out
}

func take(t *testing.T, c <-chan Outcome, n int) []Outcome {
	t.Helper()
	deadline := time.After(time.Minute) // a lost outcome fails, nothing is timed
	var got []Outcome
	for len(got) < n {
		select {
		case o := <-c:
			got = append(got, o)
		case <-deadline:
			t.Fatalf("%d outcomes of %d: %+v", len(got), n, got)
		}
	}
	return got
}

// recordCall is a hook tool that answers continue and sends the journal
// id of each event it is given.
func recordCall(ids chan<- int64) CallFunc {
	return func(_ context.Context, _, _ string, input json.RawMessage) (int32, json.RawMessage, error) {
		var in struct{ Payload events.Event }
		if err := json.Unmarshal(input, &in); err != nil {
			return 0, nil, err
		}
		ids <- in.Payload.ID
		return 0, nil, nil
	}
}

// TestCursorLifecycle: a binding's cursor starts at the journal head when
// it is bound and when it is enabled again, never moves back, belongs to
// the binding it was made for, and goes with it.
func TestCursorLifecycle(t *testing.T) {
	ctx := context.Background()
	f := newJournalFixture(t)
	f.journal("skill.installed", "skill.enabled")
	b := f.bind(Binding{HookID: "a.enabled", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	if got := f.cursor("a.enabled"); got != 2 {
		t.Fatalf("new binding's cursor at %d, want the head 2", got)
	}
	if err := f.store.AdvanceCursors(ctx, []Binding{b}, 5); err != nil {
		t.Fatal(err)
	}
	if err := f.store.AdvanceCursors(ctx, []Binding{b}, 3); err != nil {
		t.Fatal(err)
	}
	if got := f.cursor("a.enabled"); got != 5 {
		t.Fatalf("cursor at %d after advancing to 5 then 3, want 5", got)
	}
	if _, err := f.store.SetEnabled(ctx, "a.enabled", false, "op"); err != nil {
		t.Fatal(err)
	}
	f.journal("skill.enabled", "skill.enabled", "skill.enabled", "skill.enabled", "skill.enabled") // 3..7
	if got := f.cursor("a.enabled"); got != 5 {
		t.Fatalf("disabling moved the cursor to %d", got)
	}
	if _, err := f.store.SetEnabled(ctx, "a.enabled", true, "op"); err != nil {
		t.Fatal(err)
	}
	if got := f.cursor("a.enabled"); got != 7 {
		t.Fatalf("enabling again left the cursor at %d, want the head 7: the events while disabled are not delivered", got)
	}
	// Enabling an enabled binding does not move it.
	if err := f.store.AdvanceCursors(ctx, []Binding{b}, 6); err != nil {
		t.Fatal(err)
	}
	f.journal("skill.enabled")
	if _, err := f.store.SetEnabled(ctx, "a.enabled", true, "op"); err != nil {
		t.Fatal(err)
	}
	if got := f.cursor("a.enabled"); got != 7 {
		t.Fatalf("enabling an enabled binding moved its cursor to %d", got)
	}
	// A cursor belongs to its binding: one advanced for an older binding
	// of the same id is not taken.
	if err := f.store.Remove(ctx, "a.enabled"); err != nil {
		t.Fatal(err)
	}
	if cs, _ := f.store.Cursors(); len(cs) != 0 {
		t.Fatalf("cursors after the remove: %v", cs)
	}
	nb := f.bind(Binding{HookID: "a.enabled", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	if err := f.store.AdvanceCursors(ctx, []Binding{b}, 100); err != nil {
		t.Fatal(err)
	}
	cs, err := f.store.Cursors()
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := CursorFor(cs, nb); !ok || c.EventID != 8 {
		t.Fatalf("the new binding's cursor: %+v %v, want the head 8 (the old binding's advance ignored)", c, ok)
	}
	if _, ok := CursorFor(cs, b); ok {
		t.Fatal("the old binding's cursor matches the new binding")
	}

	// A Store without a journal head leaves new cursors to the
	// Dispatcher, which starts them at the head (StartCursors).
	plain := OpenStore(f.dir)
	pb, err := plain.Bind(ctx, Binding{HookID: "b.enabled", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if cs, _ := plain.Cursors(); func() bool { _, ok := CursorFor(cs, pb); return ok }() {
		t.Fatal("a Store without a journal head made a cursor")
	}
	got, err := plain.StartCursors(ctx, []Binding{pb, nb}, 42)
	if err != nil {
		t.Fatal(err)
	}
	if got["b.enabled"].EventID != 42 || got["a.enabled"].EventID != 8 {
		t.Fatalf("StartCursors: %+v, want b.enabled at 42 and a.enabled kept at 8", got)
	}
}

// TestJournalCatchUpInPages: events journaled before a Dispatcher runs are
// delivered when it is notified, read a page at a time, each to the
// bindings of its kind once and in order; the cursors then stand at the
// end of the journal, also for a binding whose kind never came.
func TestJournalCatchUpInPages(t *testing.T) {
	f := newJournalFixture(t)
	f.journal("skill.installed") // history before the bindings
	f.bind(Binding{HookID: "h.enabled", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	f.bind(Binding{HookID: "h.disabled", Event: EventSkillDisabled, PluginID: "acme.hook", Enabled: true})
	f.bind(Binding{HookID: "h.removed", Event: EventSkillRemoved, PluginID: "acme.hook", Enabled: true})
	f.bind(Binding{HookID: "h.off", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: false})
	var kinds []string
	for i := range 40 {
		kinds = append(kinds, []string{"skill.enabled", "skill.disabled", "skill.audited"}[i%3])
	}
	ids := f.journal(kinds...)

	calls := make(chan int64, 100)
	var logs bytes.Buffer // read once the Dispatcher is closed
	d, outs := f.dispatcher(recordCall(calls), DispatcherConfig{PageSize: 7,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info, DisableTime: true})})
	d.Notify()
	var want []int64
	for i, id := range ids {
		if kinds[i] != "skill.audited" {
			want = append(want, id)
		}
	}
	got := take(t, outs, len(want))
	for i, o := range got {
		if o.Failed() || o.EventID != want[i] || o.Attempt != 1 {
			t.Fatalf("outcome %d: %+v, want event %d", i, o, want[i])
		}
		wantHook := "h.enabled"
		if kinds[slices.Index(ids, o.EventID)] == "skill.disabled" {
			wantHook = "h.disabled"
		}
		if o.HookID != wantHook {
			t.Fatalf("event %d went to %s, want %s", o.EventID, o.HookID, wantHook)
		}
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(outs) != 0 || len(calls) != len(want) {
		t.Fatalf("%d more outcomes, %d calls for %d events", len(outs), len(calls), len(want))
	}
	// The catch-up is logged: where it starts and ends, and what it did.
	for _, line := range []string{
		fmt.Sprintf("hooks catching up with the journal: skill_id=acme.hook from=1 to=%d page_size=7", ids[len(ids)-1]),
		fmt.Sprintf("hooks caught up with the journal: skill_id=acme.hook from=1 to=%d events=%d pages=6 took=", ids[len(ids)-1], len(want)),
	} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the log has no %q:\n%s", line, logs.String())
		}
	}
	last := ids[len(ids)-1]
	for _, h := range []string{"h.enabled", "h.disabled", "h.removed"} {
		if got := f.cursor(h); got != last {
			t.Errorf("cursor of %s at %d, want %d", h, got, last)
		}
	}
}

// TestJournalPrunedEventsSkipped: events gone from the journal (a
// retention job deleted them) before the hooks ran are skipped, counted
// and warned about; the ones after them are delivered.
func TestJournalPrunedEventsSkipped(t *testing.T) {
	f := newJournalFixture(t)
	f.bind(Binding{HookID: "h.enabled", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	ids := f.journal(slices.Repeat([]string{"skill.enabled"}, 10)...)
	// The retention job of a operator: the oldest 6 go.
	raw, err := sql.Open("sqlite", filepath.Join(f.dir, "inventory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`DELETE FROM skill_events WHERE id <= ?`, ids[5]); err != nil {
		t.Fatal(err)
	}
	calls := make(chan int64, 100)
	d, outs := f.dispatcher(recordCall(calls), DispatcherConfig{})
	d.Notify()
	got := take(t, outs, 4)
	for i, o := range got {
		if o.EventID != ids[6+i] || o.Failed() {
			t.Fatalf("outcome %d: %+v, want event %d", i, o, ids[6+i])
		}
	}
	if n := d.Skipped(); n != 6 {
		t.Fatalf("Skipped() = %d, want 6", n)
	}
}

// TestJournalRetriesThenGivesUp: a hook failing on a journal event is
// tried again after a backoff; one that recovers is done with the event;
// one that keeps failing is given up after Retries more tries (OnGiveUp
// sees it before the cursor moves on); a failure a retry cannot change (a
// decision the event does not allow) is given up at once.
func TestJournalRetriesThenGivesUp(t *testing.T) {
	f := newJournalFixture(t)
	f.bind(Binding{HookID: "flaky", Event: EventSkillEnabled, PluginID: "acme.flaky", Enabled: true})
	f.bind(Binding{HookID: "broken", Event: EventSkillEnabled, PluginID: "acme.broken", Enabled: true})
	f.bind(Binding{HookID: "blocker", Event: EventSkillEnabled, PluginID: "acme.blocker", Enabled: true})
	ids := f.journal("skill.enabled", "skill.enabled")

	var flakyCalls atomic.Int32
	call := func(_ context.Context, skill, _ string, _ json.RawMessage) (int32, json.RawMessage, error) {
		switch skill {
		case "acme.flaky":
			if flakyCalls.Add(1)%3 != 0 { // two failures, then it works
				return 0, nil, ErrHookTimeout
			}
			return 0, nil, nil
		case "acme.blocker":
			return 30, nil, nil // block: not allowed for skill:enabled
		}
		return 0, nil, os.ErrNotExist
	}
	gaveUp := make(chan Outcome, 16)
	d, outs := f.dispatcher(call, DispatcherConfig{Retries: 2, RetryBackoff: time.Millisecond,
		OnGiveUp: func(_ context.Context, o Outcome) error { gaveUp <- o; return nil }})
	d.Notify()
	// flaky: 3 tries per event; broken: 3 tries per event; blocker: 1.
	got := take(t, outs, 2*(3+3+1))
	by := map[string][]Outcome{}
	for _, o := range got {
		by[o.HookID] = append(by[o.HookID], o)
	}
	for _, o := range by["flaky"] {
		if last := o.Attempt == 3; o.Failed() == last || o.GaveUp {
			t.Fatalf("flaky: %+v", o)
		}
	}
	for i, o := range by["broken"] {
		if !o.Failed() || o.Attempt != i%3+1 || o.GaveUp != (o.Attempt == 3) || o.EventID != ids[i/3] {
			t.Fatalf("broken outcome %d: %+v", i, o)
		}
	}
	for i, o := range by["blocker"] {
		if o.Code != ErrDecisionNotAllowed.Code() || o.Attempt != 1 || !o.GaveUp || o.EventID != ids[i] {
			t.Fatalf("blocker outcome %d: %+v", i, o)
		}
	}
	if len(gaveUp) != 4 {
		t.Fatalf("%d give-ups reported, want 4 (broken and blocker, two events each)", len(gaveUp))
	}
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"flaky", "broken", "blocker"} {
		if got := f.cursor(h); got != ids[1] {
			t.Errorf("cursor of %s at %d, want %d", h, got, ids[1])
		}
	}
}

// TestJournalCloseKeepsCursor: a Dispatcher closed while a hook runs does
// not move the binding's cursor past the event whose hook it cut off; the
// next Dispatcher delivers it again (at least once).
func TestJournalCloseKeepsCursor(t *testing.T) {
	f := newJournalFixture(t)
	f.bind(Binding{HookID: "slow", Event: EventSkillEnabled, PluginID: "acme.slow", Enabled: true})
	ids := f.journal("skill.enabled", "skill.enabled")
	started := make(chan struct{}, 4)
	call := func(ctx context.Context, _, _ string, _ json.RawMessage) (int32, json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		return 0, nil, ctx.Err()
	}
	d, _ := f.dispatcher(call, DispatcherConfig{})
	d.Notify()
	<-started
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Close(cctx); err == nil {
		t.Fatal("Close with an ended ctx and a hook running reported nothing")
	}
	if got := f.cursor("slow"); got != 0 {
		t.Fatalf("cursor at %d after the cut-off, want 0", got)
	}
	calls := make(chan int64, 4)
	d2, outs := f.dispatcher(recordCall(calls), DispatcherConfig{})
	d2.Notify()
	got := take(t, outs, 2)
	if got[0].EventID != ids[0] || got[1].EventID != ids[1] {
		t.Fatalf("after a restart: events %d, %d; want %v", got[0].EventID, got[1].EventID, ids)
	}
}

// TestCursorsConcurrentWriters: the daemon advancing cursors while the CLI
// (another Store on the same directory) binds and removes hooks loses
// nothing: every binding made keeps its cursor, the advanced one ends
// where it was moved, and no cursor outlives its binding.
func TestCursorsConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	f := newJournalFixture(t)
	f.journal("skill.enabled")
	b := f.bind(Binding{HookID: "daemon.hook", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	cli := OpenStore(f.dir, WithJournalHead(f.db.LastEventID))
	done := make(chan error, 1)
	go func() {
		for i := range 20 {
			id := fmt.Sprintf("cli.h%02d", i)
			if _, err := cli.Bind(ctx, Binding{HookID: id, Event: EventSkillDisabled, PluginID: "acme.other", Enabled: true}); err != nil {
				done <- err
				return
			}
			if i%2 == 1 {
				if err := cli.Remove(ctx, id); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	for id := int64(2); id <= 200; id++ {
		if err := f.store.AdvanceCursors(ctx, []Binding{b}, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	bs, err := f.store.List()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := f.store.Cursors()
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 11 || len(cs) != 11 {
		t.Fatalf("%d bindings and %d cursors, want 11 of each: %v", len(bs), len(cs), cs)
	}
	for _, b := range bs {
		if _, ok := CursorFor(cs, b); !ok {
			t.Errorf("binding %s has no cursor", b.HookID)
		}
	}
	if cs["daemon.hook"].EventID != 200 {
		t.Fatalf("the advanced cursor at %d, want 200", cs["daemon.hook"].EventID)
	}
}

// TestJournalBindingDisabledMidPage: a binding disabled while its runner
// is in the middle of a page is not run for the rest of it.
func TestJournalBindingDisabledMidPage(t *testing.T) {
	f := newJournalFixture(t)
	f.bind(Binding{HookID: "once", Event: EventSkillEnabled, PluginID: "acme.hook", Enabled: true})
	f.journal(slices.Repeat([]string{"skill.enabled"}, 10)...)
	var calls atomic.Int32
	call := func(ctx context.Context, _, _ string, _ json.RawMessage) (int32, json.RawMessage, error) {
		calls.Add(1)
		_, err := f.store.SetEnabled(ctx, "once", false, "op") // the operator, during the first run
		return 0, nil, err
	}
	d, outs := f.dispatcher(call, DispatcherConfig{})
	d.Notify()
	if o := take(t, outs, 1)[0]; o.Failed() {
		t.Fatalf("first run: %+v", o)
	}
	if err := d.Close(context.Background()); err != nil { // waits for the runner
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the hook ran %d times; disabled during its first run, it should not run again", n)
	}
}
