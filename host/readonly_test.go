package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/dirsnap"
)

// TestReadOnly opens a read-only host on a state dir with an installed
// skill and on one that does not exist: the verbs that look answer as the
// writable host does, every other verb is host_read_only, and the tree is
// exactly as it was (the absent dir is not created).
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	writable, state := openHostWith(t, supervisor.Config{})
	want, err := writable.List(ctx, host.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if err := writable.Close(ctx); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		state   string
		entries int
	}{
		{"installed skill", state, len(want.Entries)},
		{"absent state dir", filepath.Join(t.TempDir(), "absent"), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := dirsnap.Take(t, tt.state)
			h, err := host.Open(ctx, host.Config{StateDir: tt.state, ReadOnly: true, SidecarPath: sidecarPath})
			if err != nil {
				t.Fatal(err)
			}
			l, err := h.List(ctx, host.ListRequest{})
			if err != nil || l.Count != tt.entries || len(l.Entries) != tt.entries {
				t.Fatalf("list: %+v, %v", l, err)
			}
			if tt.entries > 0 {
				if info, err := h.Info(ctx, host.SkillRef{SkillID: "palyra.echo"}); err != nil || info.Inventory.SkillID != "palyra.echo" {
					t.Fatalf("info: %v", err)
				}
			} else if _, err := h.Info(ctx, host.SkillRef{SkillID: "palyra.echo"}); !errors.Is(err, host.ErrSkillNotFound) {
				t.Fatalf("info on an empty state dir: %v, want skill_not_found", err)
			}
			if bs, err := h.Hooks(ctx); err != nil || len(bs) != 0 {
				t.Fatalf("hooks: %v, %v", bs, err)
			}
			refused := map[string]error{}
			_, refused["install"] = h.Install(ctx, host.InstallRequest{Artifact: []byte("x")})
			_, refused["call"] = h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{}`)})
			_, refused["quarantine"] = h.Quarantine(ctx, host.StatusRequest{SkillID: "palyra.echo", Reason: "x"})
			_, refused["verify"] = h.Verify(ctx, host.SkillRef{SkillID: "palyra.echo"})
			_, refused["bind hook"] = h.BindHook(ctx, host.HookBinding{HookID: "h", Event: "skill:enabled", PluginID: "palyra.echo", Enabled: true})
			_, refused["fire hooks"] = h.FireHooks(ctx, host.FireRequest{Event: "skill:enabled"})
			_, refused["tools"] = h.Tools(ctx)
			refused["events"] = h.Events(ctx, host.EventsRequest{After: 0}, func(host.Event) error { return nil })
			for verb, err := range refused {
				if !errors.Is(err, host.ErrReadOnly) {
					t.Errorf("%s on a read-only host: %v, want host_read_only", verb, err)
				}
			}
			if err := h.Close(ctx); err != nil {
				t.Fatal(err)
			}
			dirsnap.Unchanged(t, before)
		})
	}
}
