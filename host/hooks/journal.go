package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/events"
)

// Defaults of the delivery from the journal.
const (
	// DefaultRetries is how many times a hook that failed on a journal
	// event is tried again when DispatcherConfig.Retries is 0.
	DefaultRetries = 3
	// DefaultRetryBackoff is the wait before the first retry when
	// DispatcherConfig.RetryBackoff is not set; each next wait doubles.
	DefaultRetryBackoff = time.Second
	// MaxRetryBackoff caps the wait between two tries.
	MaxRetryBackoff = time.Minute
	// DefaultPageSize is how many journal events a skill's runner reads at
	// once when DispatcherConfig.PageSize is not set.
	DefaultPageSize = 256
)

// Journal is the durable, ordered log of events the Dispatcher delivers
// from: the inventory's journal in the daemon. Ids are positive, grow with
// every event and are never reused; a gap between two ids is events that
// were removed (pruned) from the journal.
type Journal interface {
	// After returns up to limit events with an id above afterID, oldest
	// first, their Kind spelled as the hook events are (skill:enabled).
	After(ctx context.Context, afterID int64, limit int) ([]events.Event, error)
	// Head returns the id of the newest event, 0 when the journal is
	// empty.
	Head(ctx context.Context) (int64, error)
}

// runner is the state of a skill's journal runner (under Dispatcher.smu).
type runner struct {
	// again is set by Notify while the runner runs: it reads the journal
	// once more before it returns.
	again bool
}

// errStopping ends a runner: the Dispatcher is closing, or Close's ctx
// ended. The cursors stay where they are.
var errStopping = errors.New("hooks: dispatcher stopping")

// IsJournalEvent reports whether event (normalized) is one the daemon
// delivers from the journal: the skill lifecycle events.
func IsJournalEvent(event string) bool {
	return strings.HasPrefix(event, "skill:")
}

// Skipped returns how many journal events the Dispatcher found gone from
// the journal (pruned) before the hooks bound to them ran, counted once
// per skill whose runner stepped over them.
func (d *Dispatcher) Skipped() uint64 { return d.skipped.Load() }

// Notify tells the Dispatcher that the journal may hold events its
// bindings have not been delivered yet: the daemon calls it when it
// starts (the catch-up) and whenever it sees new events. It never blocks
// on the hooks: every hook skill with an enabled binding to a skill event
// gets a runner goroutine, unless it has one, which delivers the events
// after the bindings' cursors and returns when it has reached the end of
// the journal. It does nothing without DispatcherConfig.Journal or once
// the Dispatcher is closed.
func (d *Dispatcher) Notify() {
	if d.journal == nil {
		return
	}
	bs, err := d.store.List()
	if err != nil {
		d.log.Error("hooks: reading the bindings to deliver journal events", "error", err)
		return
	}
	var skills []string
	for _, b := range bs {
		if b.Enabled && IsJournalEvent(b.Event) {
			skills = append(skills, b.PluginID)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.smu.Lock()
	defer d.smu.Unlock()
	for _, skill := range skills {
		if r, ok := d.runners[skill]; ok {
			r.again = true
			continue
		}
		r := &runner{}
		d.runners[skill] = r
		d.wg.Add(1)
		go d.runJournal(skill, r)
	}
}

// stopped reports whether Close was called.
func (d *Dispatcher) stopped() bool {
	select {
	case <-d.stopping:
		return true
	default:
		return false
	}
}

// wait waits for dur, and reports false when the Dispatcher began closing
// first.
func (d *Dispatcher) wait(dur time.Duration) bool {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-d.stopping:
		return false
	case <-d.base.Done():
		return false
	}
}

// runJournal delivers the journal to skill's bindings until it reaches
// the end of the journal with no Notify in between, or the Dispatcher
// closes. A failure to read the journal or the bindings is logged and
// tried again after a backoff.
func (d *Dispatcher) runJournal(skill string, r *runner) {
	defer d.wg.Done()
	fails := 0
	for {
		err := d.drain(skill)
		if errors.Is(err, errStopping) || d.stopped() {
			d.smu.Lock()
			delete(d.runners, skill)
			d.smu.Unlock()
			return
		}
		if err != nil {
			fails++
			d.log.Error("hooks: delivering journal events; trying again", "skill_id", skill, "error", err, "failures", fails)
			d.wait(d.retryWait(fails)) // when stopping, the next pass returns
			continue
		}
		fails = 0
		d.smu.Lock()
		if r.again {
			r.again = false
			d.smu.Unlock()
			continue
		}
		delete(d.runners, skill)
		d.smu.Unlock()
		return
	}
}

// retryWait is the wait before try attempt+1: RetryBackoff doubled for
// each try after the first, at most MaxRetryBackoff.
func (d *Dispatcher) retryWait(attempt int) time.Duration {
	w := d.backoff
	for i := 1; i < attempt && w < MaxRetryBackoff; i++ {
		w *= 2
	}
	return min(w, MaxRetryBackoff)
}

// drain delivers to skill's enabled bindings of skill events the journal
// events after their cursors, a page at a time, until the end of the
// journal. Each binding is delivered the events of its kind in journal
// order; its cursor moves past an event once its hook ran for it (or gave
// up on it), and past the events of other kinds at the end of each page.
func (d *Dispatcher) drain(skill string) error {
	ctx := d.base
	start := time.Now()
	var (
		from, to  int64 = -1, 0
		delivered int
		pages     int
	)
	defer func() {
		if pages == 0 {
			return
		}
		// events counts the hook runs: an event bound by two of the
		// skill's hooks counts twice.
		args := []any{"skill_id", skill, "from", from, "to", to, "events", delivered, "pages", pages, "took", time.Since(start)}
		d.smu.Lock()
		first := !d.drained[skill]
		d.drained[skill] = true
		d.smu.Unlock()
		if pages > 1 || (first && delivered > 0) {
			// The catch-up of a Dispatcher that starts, or of a backlog.
			d.log.Info("hooks caught up with the journal", args...)
		} else {
			d.log.Debug("hooks delivered journal events", args...)
		}
	}()
	for {
		if d.stopped() {
			return errStopping
		}
		f, err := d.store.Load()
		if err != nil {
			return err
		}
		var bs []Binding
		for _, b := range f.EnabledFor(skill) {
			if IsJournalEvent(b.Event) {
				bs = append(bs, b)
			}
		}
		if len(bs) == 0 {
			return nil
		}
		cs, err := d.store.Cursors()
		if err != nil {
			return err
		}
		var fresh []string
		for _, b := range bs {
			if _, ok := CursorFor(cs, b); !ok {
				fresh = append(fresh, b.HookID)
			}
		}
		if len(fresh) > 0 {
			head, err := d.journal.Head(ctx)
			if err != nil {
				return fmt.Errorf("hooks: journal head: %w", err)
			}
			if cs, err = d.store.StartCursors(ctx, bs, head); err != nil {
				return err
			}
			d.log.Info("hooks: bindings without a journal cursor start at the journal head", "skill_id", skill, "hook_ids", fresh, "event_id", head)
		}
		pos := int64(-1)
		for _, b := range bs {
			c, ok := cs[b.HookID]
			if !ok { // removed since Load: skip it
				continue
			}
			if pos < 0 || c.EventID < pos {
				pos = c.EventID
			}
		}
		if pos < 0 {
			return nil
		}
		if from < 0 {
			from = pos
		}
		page, err := d.journal.After(ctx, pos, d.pageSize)
		if err != nil {
			return fmt.Errorf("hooks: read the journal after event %d: %w", pos, err)
		}
		if len(page) == 0 {
			return nil
		}
		if pages == 0 {
			if head, err := d.journal.Head(ctx); err == nil && head-pos > int64(d.pageSize) {
				d.log.Info("hooks catching up with the journal", "skill_id", skill, "from", pos, "to", head, "page_size", d.pageSize)
			}
		}
		pages++
		if gap := page[0].ID - pos - 1; gap > 0 {
			n := d.skipped.Add(uint64(gap))
			d.log.Warn("hooks: journal events gone from the journal (pruned) were never delivered to the skill's hooks; skipped",
				"skill_id", skill, "first_missing", pos+1, "last_missing", page[0].ID-1, "skipped", gap, "skipped_total", n)
		}
		for _, ev := range page {
			to = ev.ID
			kind, err := NormalizeEvent(ev.Kind)
			if err != nil {
				continue // nothing can be bound to it
			}
			var due []Binding
			for _, b := range bs {
				if c, ok := cs[b.HookID]; ok && b.Event == kind && c.EventID < ev.ID {
					due = append(due, b)
				}
			}
			if len(due) == 0 {
				continue
			}
			payload, err := encodePayload(ev)
			if err != nil {
				d.log.Warn("hooks: journal event not delivered: its payload cannot be encoded", "event_id", ev.ID, "event", kind, "error", err)
				continue
			}
			// The bindings as they are now: one disabled or removed since
			// the page began is not run.
			now, err := d.store.Load()
			if err != nil {
				return err
			}
			for _, b := range due {
				if i, ok := find(now, b.HookID); !ok || !now.Entries[i].Enabled || now.Entries[i].CreatedAtUnixMs != b.CreatedAtUnixMs {
					continue
				}
				if !d.deliver(b, kind, ev.ID, payload) {
					return errStopping
				}
				if err := d.store.AdvanceCursors(ctx, []Binding{b}, ev.ID); err != nil {
					return err
				}
				c := cs[b.HookID]
				c.EventID = ev.ID
				cs[b.HookID] = c
				delivered++
			}
		}
		last := page[len(page)-1].ID
		var behind []Binding
		for _, b := range bs {
			if c, ok := cs[b.HookID]; ok && c.EventID < last {
				behind = append(behind, b)
			}
		}
		if len(behind) > 0 {
			if err := d.store.AdvanceCursors(ctx, behind, last); err != nil {
				return err
			}
		}
	}
}

// deliver runs b's hook for the journal event id, trying again after a
// backoff while it fails, up to Retries times, and reports every try's
// outcome. It returns true when the binding is done with the event (the
// hook ran, or the Dispatcher gave up on it), false when the Dispatcher
// began closing first: the event is then delivered again by the next
// Dispatcher.
func (d *Dispatcher) deliver(b Binding, kind string, id int64, payload []byte) bool {
	for attempt := 1; ; attempt++ {
		if d.stopped() {
			return false
		}
		select {
		case d.slots <- struct{}{}:
		case <-d.stopping:
			return false
		case <-d.base.Done():
			return false
		}
		o := d.runHook(d.base, kind, b, payload)
		<-d.slots
		o.EventID, o.Attempt = id, attempt
		if d.base.Err() != nil {
			// Cut off by Close: not the hook's failure.
			d.report(o)
			return false
		}
		if !o.Failed() {
			d.report(o)
			return true
		}
		if attempt > d.retries || !retryable(o.Code) {
			// Recorded before it is reported: whoever sees the outcome
			// finds the record.
			o.GaveUp = true
			d.log.Warn("hooks: gave up on a journal event; the binding's cursor moves past it",
				"hook_id", b.HookID, "skill_id", b.PluginID, "event", kind, "event_id", id, "attempts", attempt, "code", o.Code)
			if d.onGiveUp != nil {
				if err := d.onGiveUp(d.base, o); err != nil {
					d.log.Error("hooks: recording a hook given up", "hook_id", b.HookID, "event_id", id, "error", err)
				}
			}
			d.report(o)
			return true
		}
		d.report(o)
		if !d.wait(d.retryWait(attempt)) {
			return false
		}
	}
}

// retryable reports whether a failure of code may go away on another try:
// every failure but a decision the event does not allow and output that is
// not JSON, which the same hook gives again for the same event.
func retryable(code string) bool {
	return code != ErrDecisionNotAllowed.Code() && code != ErrInvalidHookOutput.Code()
}
