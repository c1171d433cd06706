package skill_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

// TestHookDecisions: a hook handler decides its run phase by returning a
// decision: the tool ends with the decision's exit code (Palyra's table,
// as the host reads it) and the reason as its tool error's message; a
// wrapped decision counts too; nil continues and any other error
// annotates (exit code 1).
func TestHookDecisions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int32
		code   string
		reason string
	}{
		{"continue", nil, 0, "", ""},
		{"annotate", skill.Annotate("looked at it"), 10, "hook_annotate", "looked at it"},
		{"request approval", skill.RequestApproval("amount over 1000"), 20, "hook_request_approval", "amount over 1000"},
		{"block", skill.Block("not on weekends"), 30, "hook_block", "not on weekends"},
		{"transform preview", skill.TransformPreview("3 rows"), 40, "hook_transform_preview", "3 rows"},
		{"fail run", skill.FailRun("budget spent"), 50, "hook_fail_run", "budget spent"},
		{"wrapped", fmt.Errorf("policy: %w", skill.Block("wrapped")), 30, "hook_block", "wrapped"},
		{"plain error", errors.New("boom"), 1, "tool_error", "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := skill.NewMux()
			mux.Handle("acme.hook.t", func(*skill.Context, json.RawMessage) (json.RawMessage, error) {
				if tc.err != nil {
					return nil, tc.err
				}
				return json.RawMessage(`{}`), nil
			})
			r := skilltest.Run(mux, skilltest.Call{ToolID: "acme.hook.t", Input: json.RawMessage(`{"hook_id":"h","event":"run:before_tool","payload":{}}`)})
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
			if tc.status != 0 && (r.ErrorCode() != tc.code || r.ErrorMessage() != tc.reason) {
				t.Fatalf("tool error %q %q, want %q %q", r.ErrorCode(), r.ErrorMessage(), tc.code, tc.reason)
			}
		})
	}
}
