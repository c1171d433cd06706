package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/inventory"
)

// followInterval is how often the journal follower reads the journal when
// no in-process event wakes it (changes made by another process, such as
// the CLI working on the state directory directly).
const followInterval = 500 * time.Millisecond

// streamEvent converts a journal event to the stream's shape: its kind
// spelled as Palyra's hook events are ("skill.quarantined" becomes
// "skill:quarantined").
func streamEvent(e inventory.Event) Event {
	ev := Event{
		ID: e.ID, Kind: strings.Replace(string(e.Kind), ".", ":", 1), SkillID: e.SkillID, Version: e.Version,
		Status: string(e.Status), Reason: e.Reason, Principal: e.Principal, At: e.At.UTC(),
	}
	if len(e.Details) > 0 {
		var m map[string]any
		if json.Unmarshal(e.Details, &m) == nil {
			ev.Details = m
		}
	}
	return ev
}

// startFollower starts following the journal from its current end, unless
// the host already does: every event journaled from then on (by this host
// or by any process working on the state directory) is published on the
// stream, in journal order. With Config.DispatchHooks the hooks are told at
// once (they catch up from their cursors) and after every new event. It stops when the host closes. A failure to start is returned and
// the next call tries again.
func (h *Host) startFollower() error {
	h.mu.Lock()
	following := h.following
	h.mu.Unlock()
	if following {
		return nil
	}
	last, err := h.in.Inventory().LastEventID(h.loopCtx)
	if err != nil {
		if h.loopCtx.Err() != nil {
			return ErrClosed // Close ended the query
		}
		return fmt.Errorf("host: %w", err)
	}
	// The follower is registered under the lock Close takes to mark the
	// host closed, so Close either refuses it here or waits for it.
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return ErrClosed
	case h.following:
		return nil
	}
	h.following = true
	h.cursor.Store(last)
	if h.cfg.DispatchHooks {
		// The catch-up: each binding is delivered what the journal holds
		// after its cursor, including the events journaled while no
		// host dispatched hooks.
		h.disp.Notify()
	}
	wake := h.wake.Subscribe(h.loopCtx, 16)
	h.loops.Add(1)
	go func() {
		defer h.loops.Done()
		defer wake.Close()
		t := time.NewTicker(followInterval)
		defer t.Stop()
		for {
			if err := h.publishJournal(h.loopCtx); err != nil && h.loopCtx.Err() == nil {
				h.log.Error("following the journal", "error", err)
			}
			select {
			case <-h.loopCtx.Done():
				return
			case <-wake.C():
			case <-t.C:
			}
		}
	}()
	return nil
}

// publishJournal publishes every journal event after the cursor and, with
// Config.DispatchHooks, tells the hooks when there were any.
func (h *Host) publishJournal(ctx context.Context) error {
	n := 0
	_, err := h.replay(ctx, h.cursor.Load(), math.MaxInt64, func(ev Event) error {
		// The cursor moves first: a stream that subscribes between the
		// two then replays this event rather than missing it.
		h.cursor.Store(ev.ID)
		h.stream.Publish(ev)
		n++
		return nil
	})
	if n > 0 && h.cfg.DispatchHooks {
		// The hooks read the journal themselves, each binding from its
		// own cursor (host/hooks, "Delivery from the journal").
		h.disp.Notify()
	}
	return err
}

// replay sends the journal events after afterID, up to upTo, to send,
// oldest first, a page at a time, and returns the last ID sent.
func (h *Host) replay(ctx context.Context, afterID int64, upTo int64, send func(Event) error) (int64, error) {
	inv := h.in.Inventory()
	for afterID < upTo {
		page, err := inv.Events(ctx, inventory.EventFilter{AfterID: afterID, Limit: inventory.MaxEventLimit})
		if err != nil {
			return afterID, err
		}
		for _, e := range page {
			if e.ID > upTo {
				return afterID, nil
			}
			if err := send(streamEvent(e)); err != nil {
				return afterID, err
			}
			afterID = e.ID
		}
		if len(page) < inventory.MaxEventLimit {
			break
		}
	}
	return afterID, nil
}

// Events implements Service: the journal after req.After, then (with
// Follow) live events, each delivered once, in journal order; hook
// outcomes (not journaled) come live only.
func (h *Host) Events(ctx context.Context, req EventsRequest, fn func(Event) error) error {
	if err := h.writable(); err != nil {
		return err
	}
	if !req.Follow {
		if req.After < 0 {
			return nil
		}
		_, err := h.replay(ctx, req.After, math.MaxInt64, fn)
		return err
	}
	if err := h.startFollower(); err != nil {
		return err
	}
	sub := h.stream.Subscribe(ctx, 0)
	defer sub.Close()
	last := h.cursor.Load()
	var dropped uint64
	if req.After >= 0 && req.After < last {
		var err error
		if last, err = h.replay(ctx, req.After, last, fn); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-h.loopCtx.Done():
			return nil
		case ev, ok := <-sub.C():
			if !ok {
				return nil
			}
			if n := sub.Dropped(); n != dropped {
				// This stream fell behind and lost events: the journaled
				// ones are read back from the journal.
				dropped = n
				var err error
				if last, err = h.replay(ctx, last, h.cursor.Load(), fn); err != nil {
					return err
				}
			}
			if ev.ID != 0 && ev.ID <= last {
				continue
			}
			if ev.ID != 0 {
				last = ev.ID
			}
			if err := fn(ev); err != nil {
				return err
			}
		}
	}
}
