package hooks

import (
	"context"
	"errors"
	"os"
	"testing"
)

// TestOnFailure checks the on_failure field: its values, its default per
// phase, its refusal on notifications, and its round trip through the
// file.
func TestOnFailure(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	cases := []struct {
		event, on string
		want      string // effective; "" when the bind must fail
	}{
		{EventRunBeforeRun, "", OnFailureClosed},
		{EventRunBeforeTool, "", OnFailureClosed},
		{EventRunBeforeDelivery, "", OnFailureClosed},
		{EventRunAfterTool, "", OnFailureOpen},
		{EventRunAfterRun, "", OnFailureOpen},
		{EventRunBeforeTool, " Open ", OnFailureOpen},
		{EventRunAfterRun, "closed", OnFailureClosed},
		{EventRunBeforeTool, "maybe", ""},
		{EventSkillEnabled, "closed", ""},
	}
	for i, tc := range cases {
		b, err := s.Bind(ctx, Binding{HookID: "h" + string(rune('a'+i)), Event: tc.event, PluginID: "p", OnFailure: tc.on, Enabled: true})
		if tc.want == "" {
			var fe *FieldError
			if !errors.Is(err, ErrInvalidBinding) || !errors.As(err, &fe) || fe.Field != "on_failure" {
				t.Errorf("%s on_failure %q: %v, want an invalid_hook_binding naming on_failure", tc.event, tc.on, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s on_failure %q: %v", tc.event, tc.on, err)
		}
		if b.EffectiveOnFailure() != tc.want || b.FailClosed() != (tc.want == OnFailureClosed) {
			t.Errorf("%s on_failure %q: effective %q, want %q", tc.event, tc.on, b.EffectiveOnFailure(), tc.want)
		}
		got, err := s.Get(b.HookID)
		if err != nil || got.OnFailure != b.OnFailure {
			t.Errorf("stored %+v, %v; want on_failure %q", got, err, b.OnFailure)
		}
	}
	if _, err := Parse([]byte(`{"schema_version":1,"entries":[{"hook_id":"a","event":"run:before_tool","plugin_id":"p","enabled":true,"on_failure":7}]}`)); !errors.Is(err, ErrInvalidBindings) {
		t.Errorf("on_failure of the wrong type: %v", err)
	}
}

// TestSnapshot checks that a Snapshot follows every change of the file:
// through the Store, through another Store on the same file (another
// process), and by hand; and that it indexes enabled bindings by event.
func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	snap, err := s.Snapshot()
	if err != nil || snap.HasRunHooks() || len(snap.Entries()) != 0 {
		t.Fatalf("snapshot of a missing file: %+v, %v", snap, err)
	}
	if again, _ := s.Snapshot(); again != snap {
		t.Errorf("an unchanged file was read again")
	}
	if _, err := s.Bind(ctx, Binding{HookID: "n", Event: EventSkillEnabled, PluginID: "p", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if snap, _ = s.Snapshot(); snap.HasRunHooks() || len(snap.Enabled(EventSkillEnabled)) != 1 {
		t.Fatalf("after a notification binding: %+v", snap)
	}
	other := &Store{path: s.path, now: s.now}
	if _, err := other.Bind(ctx, Binding{HookID: "r", Event: EventRunBeforeTool, PluginID: "p", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if snap, _ = s.Snapshot(); snap.HasRunHooks() || len(snap.Entries()) != 2 {
		t.Fatalf("a disabled run binding counts: %+v", snap)
	}
	if _, err := other.SetEnabled(ctx, "r", true, "x"); err != nil {
		t.Fatal(err)
	}
	if snap, _ = s.Snapshot(); !snap.HasRunHooks() || len(snap.Enabled(EventRunBeforeTool)) != 1 {
		t.Fatalf("another store's enable was not seen: %+v", snap)
	}
	// By hand: the file replaced with an empty one.
	if err := os.WriteFile(s.path+".new", []byte(`{"schema_version":1,"entries":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(s.path+".new", s.path); err != nil {
		t.Fatal(err)
	}
	if snap, _ = s.Snapshot(); snap.HasRunHooks() || len(snap.Entries()) != 0 {
		t.Fatalf("a hand edit was not seen: %+v", snap)
	}
	// A file that does not parse is an error, not an empty set.
	if err := os.WriteFile(s.path, []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot(); !errors.Is(err, ErrInvalidBindings) {
		t.Fatalf("snapshot of a broken file: %v", err)
	}
}

// BenchmarkSnapshotUnchanged is the cost the call gate pays per call to
// learn whether run hooks are bound: one stat when the file is unchanged.
func BenchmarkSnapshotUnchanged(b *testing.B) {
	s := OpenStore(b.TempDir())
	if _, err := s.Bind(context.Background(), Binding{HookID: "n", Event: EventSkillEnabled, PluginID: "p", Enabled: true}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for range b.N {
		snap, err := s.Snapshot()
		if err != nil || snap.HasRunHooks() {
			b.Fatal(snap, err)
		}
	}
}
