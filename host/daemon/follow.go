package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/inventory"
)

// followInterval is how often the follower reads the journal when no
// in-process event wakes it (changes made by another process, such as the
// CLI working on the state directory directly).
const followInterval = 500 * time.Millisecond

// Kinds of the events the daemon adds to the stream (not journaled).
const (
	EventHookDispatched = "hook:dispatched"
	EventHookFailed     = "hook:failed"
)

// streamEvent converts a journal event to the stream's shape: its kind
// spelled as Palyra's hook events are ("skill.quarantined" becomes
// "skill:quarantined").
func streamEvent(e inventory.Event) events.Event {
	ev := events.Event{
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

// startFollower starts following the journal from its current end: every
// event journaled from now on (by this daemon or by any process working on
// the state directory) is published on the stream, in journal order, and
// handed to the hooks.
func (d *Daemon) startFollower(ctx context.Context) error {
	last, err := d.host.Installer().Inventory().LastEventID(ctx)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	d.cursor.Store(last)
	wake := d.wake.Subscribe(ctx, 16)
	d.loops.Add(1)
	go func() {
		defer d.loops.Done()
		defer wake.Close()
		t := time.NewTicker(followInterval)
		defer t.Stop()
		for {
			if err := d.followOnce(ctx); err != nil && ctx.Err() == nil {
				d.log.Error("following the journal", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-wake.C():
			case <-t.C:
			}
		}
	}()
	return nil
}

// followOnce publishes every journal event after the cursor.
func (d *Daemon) followOnce(ctx context.Context) error {
	_, err := d.replay(ctx, d.cursor.Load(), math.MaxInt64, func(ev events.Event) error {
		// The cursor moves first: a stream that subscribes between the
		// two then replays this event rather than missing it.
		d.cursor.Store(ev.ID)
		d.stream.Publish(ev)
		if _, err := hooks.NormalizeEvent(ev.Kind); err == nil && !d.disp.Enqueue(ev.Kind, ev) {
			d.log.Warn("hook queue full; event not dispatched", "event", ev.Kind, "event_id", ev.ID)
		}
		return nil
	})
	return err
}

// HookCaller returns the hooks.CallFunc that runs a hook's tool in the hook
// skill's sidecar through h, so a hook call passes the same gates as any
// call (status, trust, grants, schemas). An empty toolID means the skill's
// operator.plugin.default_tool_id. The CLI's local `hooks fire` uses it too.
func HookCaller(h *host.Host) hooks.CallFunc {
	return func(ctx context.Context, skillID, toolID string, input json.RawMessage) (int32, json.RawMessage, error) {
		if toolID == "" {
			t, err := defaultTool(ctx, h, skillID)
			if err != nil {
				return 0, nil, err
			}
			toolID = t
		}
		res, err := h.Call(ctx, skillID, toolID, input)
		if err != nil {
			// A non-zero exit code is a tool_error to a tool caller (sdk/ABI.md
			// §4) but a decision to a hook (Palyra facts §8).
			if res != nil && res.ExitCode != 0 && errcode.Of(err) == "tool_error" {
				return res.ExitCode, nil, nil
			}
			return 0, nil, err
		}
		return res.ExitCode, res.Output, nil
	}
}

// ErrNoHookTool is a hook binding without tool_id whose skill names no
// operator.plugin.default_tool_id.
var ErrNoHookTool = errcode.New("hook_tool_missing", "the hook names no tool and its skill has no default tool")

func defaultTool(ctx context.Context, h *host.Host, skillID string) (string, error) {
	info, err := h.Installer().Info(ctx, skillID, "")
	if err != nil {
		return "", err
	}
	var m struct {
		Operator struct {
			Plugin *struct {
				DefaultToolID string `json:"default_tool_id"`
			} `json:"plugin"`
		} `json:"operator"`
	}
	if err := json.Unmarshal(info.Manifest, &m); err != nil || m.Operator.Plugin == nil || m.Operator.Plugin.DefaultToolID == "" {
		return "", fmt.Errorf("%w: skill %s", ErrNoHookTool, skillID)
	}
	return m.Operator.Plugin.DefaultToolID, nil
}

// hookOutcome publishes a hook's outcome on the stream, counts and logs it.
func (d *Daemon) hookOutcome(o hooks.Outcome) {
	kind := EventHookDispatched
	result := string(o.Decision)
	if o.Err != "" {
		kind, result = EventHookFailed, o.Code
	}
	details := map[string]any{
		"hook_id": o.HookID, "event": o.Event, "tool_id": o.ToolID, "exit_code": o.ExitCode,
		"decision": o.Decision, "duration_ms": o.Duration.Milliseconds(),
	}
	if len(o.Output) > 0 {
		details["output"] = json.RawMessage(o.Output)
	}
	if o.Err != "" {
		details["error"], details["code"] = o.Err, o.Code
	}
	d.stream.Publish(events.Event{Kind: kind, SkillID: o.PluginID, At: time.Now().UTC(), Details: details})
	d.metrics.ObserveHook(o.Event, result, o.Duration)
	if o.Err != "" {
		d.log.Warn("hook failed", "hook_id", o.HookID, "event", o.Event, "skill_id", o.PluginID, "code", o.Code, "error", o.Err)
	} else {
		d.log.Info("hook dispatched", "hook_id", o.HookID, "event", o.Event, "skill_id", o.PluginID, "decision", o.Decision, "duration", o.Duration)
	}
}

// replay sends the journal events after afterID, up to upTo, to send,
// oldest first, a page at a time, and returns the last ID sent. The
// follower publishes with it; streams catch up with it before going live.
func (d *Daemon) replay(ctx context.Context, afterID int64, upTo int64, send func(events.Event) error) (int64, error) {
	inv := d.host.Installer().Inventory()
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

// follow delivers the stream to send: the journal after afterID (afterID <
// 0 means from now on), then live events, until ctx ends or the daemon
// stops. Events are delivered once each, in journal order.
func (d *Daemon) follow(ctx context.Context, afterID int64, send func(events.Event) error) error {
	sub := d.stream.Subscribe(ctx, 0)
	defer sub.Close()
	last := d.cursor.Load()
	var dropped uint64
	if afterID >= 0 && afterID < last {
		var err error
		if last, err = d.replay(ctx, afterID, last, send); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.stopping:
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
				if last, err = d.replay(ctx, last, d.cursor.Load(), send); err != nil {
					return err
				}
			}
			if ev.ID != 0 && ev.ID <= last {
				continue
			}
			if ev.ID != 0 {
				last = ev.ID
			}
			if err := send(ev); err != nil {
				return err
			}
		}
	}
}
