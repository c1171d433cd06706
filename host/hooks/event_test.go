package hooks

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

func TestNormalizeEvent(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" means ErrUnknownEvent
	}{
		{"skill:enabled", EventSkillEnabled},
		{"  Skill:Enabled\t", EventSkillEnabled},
		{"SKILL:QUARANTINED", EventSkillQuarantined},
		{"skill.quarantined", EventSkillQuarantined},
		{"skill.crashlooping", EventSkillCrashLooping},
		{"gateway.startup", EventGatewayStartup},
		{"gateway:startup", EventGatewayStartup},
		{"before_tool", EventRunBeforeTool},
		{"BEFORE_RUN", EventRunBeforeRun},
		{"run:after_run", EventRunAfterRun},
		{"run.before_delivery", EventRunBeforeDelivery},
		{"after_tool", EventRunAfterTool},
		{"skill:installed", EventSkillInstalled},
		{"skill:updated", EventSkillUpdated},
		{"skill:disabled", EventSkillDisabled},
		{"skill:removed", EventSkillRemoved},
		{"", ""},
		{"   ", ""},
		{"enabled", ""}, // only run phases may drop their prefix
		{"startup", ""},
		{"skill:enabled:", ""},
		{"skill:nope", ""},
		{"run:run:before_tool", ""},
		{"skill.quarantined.x", ""}, // one dot only becomes the colon
		{"skill:quarantined.", ""},
		{"run:" + EventRunBeforeRun, ""},
		{strings.Repeat("a", MaxEventNameBytes+1), ""},
	}
	for _, tt := range tests {
		got, err := NormalizeEvent(tt.in)
		if tt.want == "" {
			if !errors.Is(err, ErrUnknownEvent) || errcode.Of(err) != "unknown_hook_event" {
				t.Errorf("NormalizeEvent(%q) = %q, %v; want ErrUnknownEvent", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeEvent(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeEventListsKnownEvents(t *testing.T) {
	_, err := NormalizeEvent("skill:exploded")
	for _, e := range Events() {
		if !strings.Contains(err.Error(), e) {
			t.Errorf("error %q does not list %s", err, e)
		}
	}
}

func TestEventsAreCanonical(t *testing.T) {
	for _, e := range Events() {
		if got, err := NormalizeEvent(e); err != nil || got != e {
			t.Errorf("NormalizeEvent(%q) = %q, %v", e, got, err)
		}
		if IsRunPhase(e) != strings.HasPrefix(e, "run:") {
			t.Errorf("IsRunPhase(%q) = %v", e, IsRunPhase(e))
		}
	}
	if len(Events()) != 13 {
		t.Errorf("Events() has %d kinds, want 13", len(Events()))
	}
}

func TestDecisionFromExitCode(t *testing.T) {
	tests := []struct {
		code int32
		want Decision
	}{
		{0, DecisionContinue},
		{10, DecisionAnnotate},
		{20, DecisionRequestApproval},
		{30, DecisionBlock},
		{40, DecisionTransformPreview},
		{50, DecisionFailRun},
		{255, DecisionFailRun},
		{-1, DecisionFailRun},
		{-2147483648, DecisionFailRun},
		{2147483647, DecisionFailRun},
		{1, DecisionAnnotate},
		{19, DecisionAnnotate},
		{21, DecisionAnnotate},
		{49, DecisionAnnotate},
	}
	for _, tt := range tests {
		if got := DecisionFromExitCode(tt.code); got != tt.want {
			t.Errorf("DecisionFromExitCode(%d) = %s, want %s", tt.code, got, tt.want)
		}
	}
}

func TestAllowed(t *testing.T) {
	// allowed[event] lists the decisions allowed for it, continue and
	// annotate aside (always allowed).
	allowed := map[string][]Decision{
		EventRunBeforeRun:      {DecisionRequestApproval, DecisionBlock, DecisionFailRun},
		EventRunBeforeTool:     {DecisionRequestApproval, DecisionBlock, DecisionFailRun},
		EventRunAfterTool:      {DecisionFailRun},
		EventRunBeforeDelivery: {DecisionRequestApproval, DecisionBlock, DecisionTransformPreview, DecisionFailRun},
		EventRunAfterRun:       {},
	}
	others := []Decision{DecisionRequestApproval, DecisionBlock, DecisionTransformPreview, DecisionFailRun}
	for _, e := range Events() {
		for _, d := range []Decision{DecisionContinue, DecisionAnnotate} {
			if !Allowed(e, d) {
				t.Errorf("Allowed(%s, %s) = false", e, d)
			}
		}
		for _, d := range others {
			want := false
			for _, a := range allowed[e] {
				want = want || a == d
			}
			if got := Allowed(e, d); got != want {
				t.Errorf("Allowed(%s, %s) = %v, want %v", e, d, got, want)
			}
		}
		if Allowed(e, Decision("maybe")) {
			t.Errorf("Allowed(%s, maybe) = true", e)
		}
	}
}

func TestResolve(t *testing.T) {
	vote := func(hook, plugin string, d Decision) Outcome {
		return Outcome{HookID: hook, PluginID: plugin, Decision: d}
	}
	failed := func(hook string) Outcome {
		return Outcome{HookID: hook, PluginID: "p", Decision: DecisionFailRun, Err: "boom", Code: "hook_timeout"}
	}
	tests := []struct {
		name string
		in   []Outcome
		want Resolution
	}{
		{
			name: "empty",
			want: Resolution{Decision: DecisionContinue, Source: RuntimeSource},
		},
		{
			name: "only failures",
			in:   []Outcome{failed("b"), failed("a")},
			want: Resolution{Decision: DecisionContinue, Source: RuntimeSource, Failed: []string{"a", "b"}},
		},
		{
			name: "highest priority wins",
			in:   []Outcome{vote("a", "p", DecisionAnnotate), vote("b", "p", DecisionBlock), vote("c", "p", DecisionTransformPreview), failed("d")},
			want: Resolution{
				Decision: DecisionBlock, Source: "hook", HookID: "b", PluginID: "p", Terminal: true,
				Conflicts: []Vote{{"c", "p", DecisionTransformPreview}, {"a", "p", DecisionAnnotate}},
				Failed:    []string{"d"},
			},
		},
		{
			name: "tie goes to lowest hook id",
			in:   []Outcome{vote("z", "a", DecisionBlock), vote("m", "z", DecisionBlock), vote("q", "q", DecisionContinue)},
			want: Resolution{
				Decision: DecisionBlock, Source: "hook", HookID: "m", PluginID: "z", Terminal: true,
				Conflicts: []Vote{{"q", "q", DecisionContinue}},
			},
		},
		{
			name: "tie on hook id goes to lowest plugin id",
			in:   []Outcome{vote("h", "b", DecisionAnnotate), vote("h", "a", DecisionAnnotate)},
			want: Resolution{Decision: DecisionAnnotate, Source: "hook", HookID: "h", PluginID: "a"},
		},
		{
			name: "fail_run above everything",
			in:   []Outcome{vote("a", "p", DecisionRequestApproval), vote("b", "p", DecisionFailRun)},
			want: Resolution{
				Decision: DecisionFailRun, Source: "hook", HookID: "b", PluginID: "p", Terminal: true,
				Conflicts: []Vote{{"a", "p", DecisionRequestApproval}},
			},
		},
		{
			name: "continue only",
			in:   []Outcome{vote("a", "p", DecisionContinue)},
			want: Resolution{Decision: DecisionContinue, Source: "hook", HookID: "a", PluginID: "p"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Resolve(tt.in)
			if !equalResolution(got, tt.want) {
				t.Errorf("Resolve = %+v\nwant      %+v", got, tt.want)
			}
		})
	}
}

func equalResolution(a, b Resolution) bool {
	if a.Decision != b.Decision || a.Source != b.Source || a.HookID != b.HookID || a.PluginID != b.PluginID || a.Terminal != b.Terminal {
		return false
	}
	if len(a.Conflicts) != len(b.Conflicts) || len(a.Failed) != len(b.Failed) {
		return false
	}
	for i := range a.Conflicts {
		if a.Conflicts[i] != b.Conflicts[i] {
			return false
		}
	}
	for i := range a.Failed {
		if a.Failed[i] != b.Failed[i] {
			return false
		}
	}
	return true
}

func TestPriorityOrder(t *testing.T) {
	order := []Decision{DecisionContinue, DecisionAnnotate, DecisionTransformPreview, DecisionRequestApproval, DecisionBlock, DecisionFailRun}
	for i, d := range order {
		if d.Priority() != 10*(i+1) {
			t.Errorf("%s.Priority() = %d, want %d", d, d.Priority(), 10*(i+1))
		}
	}
	if Decision("x").Priority() != 0 {
		t.Error("unknown decision has a priority")
	}
}
