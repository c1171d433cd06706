package host_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/statedir"
)

// TestOpenSweepsRunDir: a writable Open removes what dead host instances
// left in the state directory's run root (with or without sidecars), a
// read-only Open touches nothing, and a host with sidecars keeps its own
// instance there until Close, which leaves no run root behind.
func TestOpenSweepsRunDir(t *testing.T) {
	tests := []struct {
		name           string
		cfg            host.Config
		swept          bool
		ownsAnInstance bool
	}{
		{"read-only", host.Config{ReadOnly: true, SidecarPath: sidecarPath}, false, false},
		{"writable without sidecars", host.Config{}, true, false},
		{"writable with sidecars", host.Config{SidecarPath: sidecarPath}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := os.MkdirTemp("/tmp", "ht")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			l := statedir.At(filepath.Join(base, "state"))
			if root, _ := rundir.Root(l, ""); root != l.RunDir() {
				t.Fatalf("root %s, want %s", root, l.RunDir())
			}
			// A dead instance (lock file nobody holds) with a child's dir,
			// and a directory without its lock file.
			for _, p := range []string{"h1/sc-1", "h2"} {
				if err := os.MkdirAll(filepath.Join(l.RunDir(), p), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(l.RunDir(), "h1.lock"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(l.Dir(), 0o700); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			cfg := tt.cfg
			cfg.StateDir = l.Dir()
			h, err := host.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			left, err := rundir.Leftovers(l, "")
			if err != nil {
				t.Fatal(err)
			}
			if tt.swept && len(left) != 0 {
				t.Errorf("left after Open: %q", left)
			}
			if !tt.swept && len(left) != 3 {
				t.Errorf("a read-only Open changed the run dir: left %q", left)
			}
			ents, _ := os.ReadDir(l.RunDir())
			if tt.ownsAnInstance && len(ents) != 2 {
				t.Errorf("run dir of a host with sidecars: %v, want its instance and lock", ents)
			}
			if err := h.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(l.RunDir()); tt.swept && err == nil {
				t.Errorf("run dir left after Close: %v", ents)
			}
		})
	}
}
