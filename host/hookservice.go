package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/inventory"
)

// Kinds of the events the host adds to its stream (not journaled).
const (
	EventHookDispatched = "hook:dispatched"
	EventHookFailed     = "hook:failed"
)

// ErrNoHookTool is a hook binding without tool_id whose skill names no
// operator.plugin.default_tool_id.
var ErrNoHookTool = errcode.New("hook_tool_missing", "the hook names no tool and its skill has no default tool")

// Hooks implements Service.
func (h *Host) Hooks(ctx context.Context) ([]HookBinding, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	bs, err := h.hooks.List()
	if err != nil {
		return nil, err
	}
	if bs == nil {
		bs = []HookBinding{}
	}
	return bs, nil
}

// BindHook implements Service: who acts is the binding's updater and,
// unless the binding names one, its owner.
func (h *Host) BindHook(ctx context.Context, b HookBinding) (*HookBinding, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	p := PrincipalFrom(ctx)
	b.Operator.UpdatedBy = p
	if b.Operator.OwnerPrincipal == "" {
		b.Operator.OwnerPrincipal = p
	}
	out, err := h.hooks.Bind(ctx, b)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SetHookEnabled implements Service.
func (h *Host) SetHookEnabled(ctx context.Context, hookID string, enabled bool) (*HookBinding, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	out, err := h.hooks.SetEnabled(ctx, hookID, enabled, PrincipalFrom(ctx))
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// RemoveHook implements Service.
func (h *Host) RemoveHook(ctx context.Context, hookID string) error {
	if err := h.writable(); err != nil {
		return err
	}
	return h.hooks.Remove(ctx, hookID)
}

// FireHooks implements Service: the hooks bound to the event run now,
// each through the same gate as any call.
func (h *Host) FireHooks(ctx context.Context, req FireRequest) (*FireResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	ev, err := hooks.NormalizeEvent(req.Event)
	if err != nil {
		return nil, err
	}
	var payload any = map[string]any{"source": "api.fire", "principal": PrincipalFrom(ctx)}
	if len(bytes.TrimSpace(req.Payload)) > 0 {
		payload = req.Payload
	}
	outs, res, err := h.disp.Fire(ctx, ev, payload)
	if err != nil {
		return nil, err
	}
	if outs == nil {
		outs = []HookOutcome{}
	}
	return &FireResult{Event: ev, Outcomes: outs, Resolution: res}, nil
}

// hookCall runs a hook's tool in the hook skill's sidecar, through the
// same gate as any call (status, trust, grants, schemas). An empty toolID
// means the skill's operator.plugin.default_tool_id.
func (h *Host) hookCall(ctx context.Context, skillID, toolID string, input json.RawMessage) (int32, json.RawMessage, error) {
	if toolID == "" {
		t, err := h.defaultTool(ctx, skillID)
		if err != nil {
			return 0, nil, err
		}
		toolID = t
	}
	res, err := h.run(ctx, skillID, toolID, input, nil, nil) // a hook's own call: no run hooks, no approval
	if err != nil {
		// A non-zero exit code is a tool_error to a tool caller (sdk/ABI.md
		// §4) but a decision to a hook.
		// Its tool error ({"code","message"}) is the hook's output: the
		// message is the reason of a block or the text of an annotation.
		if res != nil && res.ExitCode != 0 && errcode.Of(err) == "tool_error" {
			return res.ExitCode, hookToolError(res), nil
		}
		return 0, nil, err
	}
	return res.ExitCode, res.Output, nil
}

func (h *Host) defaultTool(ctx context.Context, skillID string) (string, error) {
	info, err := h.in.Info(ctx, skillID, "")
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

// hookOutcome publishes a hook's outcome on the event stream, logs it and
// hands it to Config.OnHook.
func (h *Host) hookOutcome(o hooks.Outcome) {
	h.stream.Publish(HookOutcomeEvent(o))
	if h.cfg.OnHook != nil {
		h.cfg.OnHook(o)
	}
	if o.Err != "" {
		h.log.Warn("hook failed", "hook_id", o.HookID, "event", o.Event, "skill_id", o.PluginID, "code", o.Code, "error", o.Err)
	} else {
		h.log.Info("hook dispatched", "hook_id", o.HookID, "event", o.Event, "skill_id", o.PluginID, "decision", o.Decision, "duration", o.Duration)
	}
}

// HookOutcomeEvent is the event (not journaled: its ID is 0) that tells
// of a hook's outcome on the event stream: hook:dispatched, or hook:failed
// with the error and its code.
func HookOutcomeEvent(o HookOutcome) Event {
	kind := EventHookDispatched
	if o.Err != "" {
		kind = EventHookFailed
	}
	details := map[string]any{
		"hook_id": o.HookID, "event": o.Event, "tool_id": o.ToolID, "exit_code": o.ExitCode,
		"decision": o.Decision, "duration_ms": o.Duration.Milliseconds(),
	}
	if len(o.Output) > 0 {
		details["output"] = json.RawMessage(o.Output)
	}
	if o.EventID != 0 {
		// Delivered from the journal: which event, which try.
		details["event_id"], details["attempt"] = o.EventID, o.Attempt
		if o.GaveUp {
			details["gave_up"] = true
		}
	}
	if o.Err != "" {
		details["error"], details["code"] = o.Err, o.Code
	}
	return Event{Kind: kind, SkillID: o.PluginID, At: time.Now().UTC(), Details: details}
}

// PrincipalHooks is the principal of the journal events the hook
// dispatcher records (skill.hook_gave_up).
const PrincipalHooks = "system:hooks"

// EventHookGaveUp is the journal kind of a hook the host gave up on for a
// journal event after its retries (Config.HookRetries): the event's skill
// id is the hook skill's, the reason the last error, and the details name
// the hook, the event, its journal id, the tries and the error code.
const EventHookGaveUp = inventory.EventKind("skill.hook_gave_up")

// hookJournal is the inventory's journal as the hook dispatcher reads it.
type hookJournal struct{ h *Host }

// After implements hooks.Journal.
func (j hookJournal) After(ctx context.Context, afterID int64, limit int) ([]Event, error) {
	page, err := j.h.in.Inventory().Events(ctx, inventory.EventFilter{AfterID: afterID, Limit: min(limit, inventory.MaxEventLimit)})
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(page))
	for i, e := range page {
		out[i] = streamEvent(e)
	}
	return out, nil
}

// Head implements hooks.Journal.
func (j hookJournal) Head(ctx context.Context) (int64, error) {
	return j.h.in.Inventory().LastEventID(ctx)
}

// hookGaveUp journals that the dispatcher gave up on a hook for a journal
// event, before the binding's cursor moves past it.
func (h *Host) hookGaveUp(ctx context.Context, o hooks.Outcome) error {
	details, err := json.Marshal(map[string]any{
		"hook_id": o.HookID, "event": o.Event, "event_id": o.EventID, "tool_id": o.ToolID,
		"attempts": o.Attempt, "code": o.Code,
	})
	if err != nil {
		return err
	}
	reason := o.Err
	if len(reason) > inventory.MaxReasonBytes {
		reason = strings.ToValidUTF8(reason[:inventory.MaxReasonBytes], "")
	}
	return h.in.Inventory().Update(ctx, func(tx *inventory.Tx) error {
		_, err := tx.AppendEvent(inventory.Event{Kind: EventHookGaveUp, SkillID: o.PluginID, Reason: reason, Principal: PrincipalHooks, Details: details})
		return err
	})
}
