package hooks

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestLockedWritesOnlyOnSave: Locked writes the file on each save and
// never otherwise, returns fn's error unchanged, and a save of an earlier
// copy (Clone) puts the earlier content back.
func TestLockedWritesOnlyOnSave(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	for _, b := range []Binding{
		{HookID: "a.on", Event: EventSkillEnabled, PluginID: "acme.a", Enabled: true},
		{HookID: "a.off", Event: EventSkillRemoved, PluginID: "Acme.A", Enabled: false},
		{HookID: "b.on", Event: EventRunBeforeTool, PluginID: "acme.b", Enabled: true},
		{HookID: "a.two", Event: EventRunAfterRun, PluginID: "acme.a", Enabled: true},
	} {
		if _, err := s.Bind(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	orig, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}

	// No save: nothing written, fn's error returned as is.
	boom := errors.New("boom")
	err = s.Locked(ctx, func(f *File, _ func(*File) error) error {
		s.DisableIn(f, []string{"a.on"}, "user:x")
		return boom
	})
	if err != boom {
		t.Fatalf("Locked = %v, want fn's error", err)
	}
	if now, _ := os.ReadFile(s.Path()); string(now) != string(orig) {
		t.Fatal("Locked wrote without save")
	}

	// EnabledFor names the enabled bindings of a skill only, by its
	// normalized id.
	err = s.Locked(ctx, func(f *File, save func(*File) error) error {
		var ids []string
		for _, b := range f.EnabledFor(" ACME.A ") {
			ids = append(ids, b.HookID)
		}
		if strings.Join(ids, ",") != "a.on,a.two" {
			t.Errorf("EnabledFor = %v", ids)
		}
		before := f.Clone()
		s.DisableIn(f, []string{"a.on", "a.two", "no.such"}, " user:x ")
		if err := save(f); err != nil {
			return err
		}
		got, err := s.Get("a.on")
		if err != nil || got.Enabled || got.Operator.UpdatedBy != "user:x" {
			t.Errorf("after save: %+v %v", got, err)
		}
		if i, ok := find(before, "a.on"); !ok || !before.Entries[i].Enabled {
			t.Error("Clone shares entries with the file")
		}
		return save(before)
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(orig)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, want.Entries) {
		t.Errorf("after saving the clone:\n%+v\nwant\n%+v", after, want.Entries)
	}

	// A save of an invalid file is refused and writes nothing.
	err = s.Locked(ctx, func(f *File, save func(*File) error) error {
		s.DisableIn(f, []string{"b.on"}, strings.Repeat("p", MaxOperatorFieldBytes+1))
		return save(f)
	})
	if err == nil {
		t.Fatal("save of an invalid file succeeded")
	}
	if got, _ := s.Get("b.on"); !got.Enabled {
		t.Errorf("an invalid save changed the file: %+v", got)
	}
}
