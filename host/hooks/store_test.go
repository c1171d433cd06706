package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// testStore returns a store in a fresh state directory with a fixed clock.
func testStore(t *testing.T) *Store {
	t.Helper()
	s := OpenStore(t.TempDir())
	s.now = func() time.Time { return time.UnixMilli(1700000000000) }
	return s
}

func TestStoreLifecycle(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if got, err := s.List(); err != nil || len(got) != 0 {
		t.Fatalf("List of a missing file = %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Dir(s.Path())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading created the directory: %v", err)
	}

	b, err := s.Bind(ctx, Binding{
		HookID: " Audit.Quarantine ", Event: "skill.quarantined", PluginID: "Acme.Auditor", Enabled: true,
		Operator: Operator{OwnerPrincipal: " admin:ops "},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Binding{
		HookID: "audit.quarantine", Event: EventSkillQuarantined, PluginID: "acme.auditor", Enabled: true,
		Operator: Operator{OwnerPrincipal: "admin:ops"}, CreatedAtUnixMs: 1700000000000, UpdatedAtUnixMs: 1700000000000,
	}
	if b != want {
		t.Errorf("Bind = %+v\nwant %+v", b, want)
	}
	if got, err := s.Get("AUDIT.QUARANTINE"); err != nil || got != want {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := s.Bind(ctx, Binding{HookID: "audit.quarantine", Event: EventSkillEnabled, PluginID: "x"}); !errors.Is(err, ErrHookExists) || errcode.Of(err) != "hook_exists" {
		t.Errorf("second Bind: %v", err)
	}
	if _, err := s.Bind(ctx, Binding{HookID: "a", Event: EventRunBeforeTool, PluginID: "g", ToolID: "g.check", TimeoutMs: 1500}); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].HookID != "a" || list[1].HookID != "audit.quarantine" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if list[0].Timeout() != 1500*time.Millisecond {
		t.Errorf("Timeout = %v", list[0].Timeout())
	}

	s.now = func() time.Time { return time.UnixMilli(1700000000500) }
	b, err = s.SetEnabled(ctx, "audit.quarantine", false, "cli:alice")
	if err != nil {
		t.Fatal(err)
	}
	if b.Enabled || b.Operator.UpdatedBy != "cli:alice" || b.UpdatedAtUnixMs != 1700000000500 || b.CreatedAtUnixMs != 1700000000000 {
		t.Errorf("SetEnabled = %+v", b)
	}
	if got, _ := s.Get("audit.quarantine"); got != b {
		t.Errorf("Get after SetEnabled = %+v, want %+v", got, b)
	}
	if _, err := s.SetEnabled(ctx, "nope", true, ""); !errors.Is(err, ErrHookNotFound) {
		t.Errorf("SetEnabled of a missing hook: %v", err)
	}

	if err := s.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, "a"); !errors.Is(err, ErrHookNotFound) || errcode.Of(err) != "hook_not_found" {
		t.Errorf("second Remove: %v", err)
	}
	if _, err := s.Get("a"); !errors.Is(err, ErrHookNotFound) {
		t.Errorf("Get after Remove: %v", err)
	}

	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	f, err := s.Load()
	if err != nil || f.Migrated || f.UpdatedAtUnixMs != 1700000000500 || len(f.Entries) != 1 {
		t.Errorf("Load = %+v, %v", f, err)
	}
}

func TestStoreInvalidArguments(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	tests := []struct {
		name  string
		b     Binding
		field string
	}{
		{"bad hook id", Binding{HookID: "a b", Event: EventSkillEnabled, PluginID: "s"}, "hook_id"},
		{"bad plugin id", Binding{HookID: "a", Event: EventSkillEnabled, PluginID: ""}, "plugin_id"},
		{"bad event", Binding{HookID: "a", Event: "on_boot", PluginID: "s"}, "event"},
		{"bad tool", Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s", ToolID: "a/b"}, "tool_id"},
		{"timeout", Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s", TimeoutMs: MaxHookTimeout.Milliseconds() + 1}, "timeout_ms"},
		{"operator", Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s", Operator: Operator{DisplayName: strings.Repeat("x", MaxOperatorFieldBytes+1)}}, "operator.display_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Bind(ctx, tt.b)
			var fe *FieldError
			if !errors.Is(err, ErrInvalidBinding) || !errors.As(err, &fe) || fe.Field != tt.field || fe.Index != -1 {
				t.Errorf("Bind: %v", err)
			}
		})
	}
	for _, id := range []string{"", "a b", strings.Repeat("a", MaxIDLength+1)} {
		if _, err := s.Get(id); !errors.Is(err, ErrInvalidBinding) {
			t.Errorf("Get(%q): %v", id, err)
		}
		if err := s.Remove(ctx, id); !errors.Is(err, ErrInvalidBinding) {
			t.Errorf("Remove(%q): %v", id, err)
		}
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused call wrote the file: %v", err)
	}
}

// TestStoreMigratesOnWrite checks that a legacy file is read as it is and
// rewritten in the current form by the next mutation.
func TestStoreMigratesOnWrite(t *testing.T) {
	s := testStore(t)
	if err := os.MkdirAll(filepath.Dir(s.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	legacy := readTestdata(t, "legacy_no_version.json")
	if err := os.WriteFile(s.Path(), legacy, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := s.Load()
	if err != nil || !f.Migrated || len(f.Entries) != 2 {
		t.Fatalf("Load = %+v, %v", f, err)
	}
	if data, _ := os.ReadFile(s.Path()); string(data) != string(legacy) {
		t.Error("Load rewrote the file")
	}
	if err := s.Update(context.Background(), func(*File) error { return nil }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(readTestdata(t, "current.json")) {
		t.Errorf("not rewritten in the current form:\n%s", data)
	}
}

func TestStoreRefusesBadFile(t *testing.T) {
	tests := []struct {
		name    string
		content []byte
		want    error
	}{
		{"too new", readTestdata(t, "too_new.json"), ErrSchemaTooNew},
		{"invalid", []byte(`{"entries":[{"hook_id":"a"}]}`), ErrInvalidBindings},
		{"too large", append([]byte(`[]`), make([]byte, MaxBindingsFileBytes)...), ErrInvalidBindings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testStore(t)
			if err := os.MkdirAll(filepath.Dir(s.Path()), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.Path(), tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Load(); !errors.Is(err, tt.want) || !strings.Contains(err.Error(), s.Path()) {
				t.Errorf("Load: %v", err)
			}
			if _, err := s.Bind(context.Background(), Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s"}); !errors.Is(err, tt.want) {
				t.Errorf("Bind: %v", err)
			}
			if data, _ := os.ReadFile(s.Path()); string(data) != string(tt.content) {
				t.Error("a refused file was rewritten")
			}
		})
	}
}

func TestStoreTooManyHooks(t *testing.T) {
	s := testStore(t)
	err := s.Update(context.Background(), func(f *File) error {
		for i := range MaxEntries {
			f.Entries = append(f.Entries, Binding{HookID: fmt.Sprintf("h%04d", i), Event: EventSkillEnabled, PluginID: "s"})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Bind(context.Background(), Binding{HookID: "one.more", Event: EventSkillEnabled, PluginID: "s"}); !errors.Is(err, ErrTooManyHooks) {
		t.Errorf("Bind beyond MaxEntries: %v", err)
	}
}

// TestStoreConcurrentWriters runs two Stores on the same file from many
// goroutines: with the lock, no update is lost.
func TestStoreConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	stores := []*Store{OpenStore(dir), OpenStore(dir)}
	const perStore = 20
	var wg sync.WaitGroup
	errs := make(chan error, 2*perStore)
	for si, s := range stores {
		for i := range perStore {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Bind(context.Background(), Binding{HookID: fmt.Sprintf("s%d.h%02d", si, i), Event: EventSkillEnabled, PluginID: "s", Enabled: true})
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	list, err := stores[0].List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2*perStore {
		t.Errorf("%d bindings survived, want %d", len(list), 2*perStore)
	}
	entries, err := os.ReadDir(filepath.Dir(stores[0].Path()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "bindings.json" && e.Name() != "bindings.json.lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestStoreWaitsForLock holds the lock as another process would and checks
// that a mutation gives up with ErrLocked when its context ends.
func TestStoreWaitsForLock(t *testing.T) {
	s := testStore(t)
	if err := os.MkdirAll(filepath.Dir(s.Path()), 0o700); err != nil {
		t.Fatal(err)
	}
	lf, err := fsutil.LockExclusive(context.Background(), s.Path()+".lock", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = s.Bind(ctx, Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s"})
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) || errcode.Of(err) != "hook_bindings_locked" {
		t.Errorf("Bind while locked: %v", err)
	}
	lf.Close()
	if _, err := s.Bind(context.Background(), Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s"}); err != nil {
		t.Errorf("Bind after unlock: %v", err)
	}
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if err := s.Remove(done, "a"); !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
		t.Errorf("Remove with a done context: %v", err)
	}
}

func TestStoreUpdateErrorWritesNothing(t *testing.T) {
	s := testStore(t)
	boom := errors.New("boom")
	err := s.Update(context.Background(), func(f *File) error {
		f.Entries = append(f.Entries, Binding{HookID: "a", Event: EventSkillEnabled, PluginID: "s"})
		return boom
	})
	if err != boom {
		t.Errorf("Update = %v, want fn's error unchanged", err)
	}
	err = s.Update(context.Background(), func(f *File) error {
		f.Entries = append(f.Entries, Binding{HookID: "a", Event: "nope", PluginID: "s"})
		return nil
	})
	if !errors.Is(err, ErrInvalidBinding) {
		t.Errorf("Update with an invalid binding = %v", err)
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file written: %v", err)
	}
}
