package daemon_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/proctest"
)

// shortDir is a fresh directory with a short path: a state directory
// short enough for <state>/run, or a $TMPDIR short enough for its
// palyra-<hash> root (t.TempDir's paths are too long for either).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "pd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// walk lists every path under root (root itself excluded; none when root
// is absent).
func walk(root string) []string {
	var out []string
	filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err == nil && path != root {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// childDirs counts the children's private directories (sc-*, pc-*) in the
// instance directories of root.
func childDirs(root string) int {
	n := 0
	for _, p := range walk(root) {
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) == 2 && (strings.HasPrefix(parts[1], "sc-") || strings.HasPrefix(parts[1], "pc-")) {
			n++
		}
	}
	return n
}

// stableChildren waits until the child processes of pid and the files
// under root are the same in two looks 300 ms apart (at most 20 s), and
// returns them.
func stableChildren(t *testing.T, pid int, root string) ([]int, []string) {
	t.Helper()
	kids, files := proctest.Children(pid), walk(root)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		k, f := proctest.Children(pid), walk(root)
		if slices.Equal(k, kids) && slices.Equal(f, files) {
			return kids, files
		}
		kids, files = k, f
	}
	t.Fatalf("the children of %d never settled: %v, files %q", pid, kids, files)
	return nil, nil
}

// onlyLive checks that the run roots of state hold one instance at most
// (the live daemon's: no lock file without a holder, no entry of a dead
// one) and that nothing else of the host is in its TMPDIR tmp.
func onlyLive(t *testing.T, l statedir.Layout, tmp string, round int) {
	t.Helper()
	if left, err := rundir.Leftovers(l, tmp); len(left) != 0 || err != nil {
		t.Fatalf("round %d: left by dead owners: %q (%v)", round, left, err)
	}
	used := 0
	for _, root := range rundir.Candidates(l, tmp) {
		ents, _ := os.ReadDir(root)
		if len(ents) == 0 {
			continue
		}
		used++
		if len(ents) != 2 || ents[0].Name()+".lock" != ents[1].Name() {
			t.Fatalf("round %d: %s holds %v, want one instance and its lock", round, root, ents)
		}
	}
	if used > 1 {
		t.Fatalf("round %d: more than one run root in use", round)
	}
	fallback := rundir.Candidates(l, tmp)[1]
	for _, p := range walk(tmp) {
		if p != fallback && !strings.HasPrefix(p, fallback+string(filepath.Separator)) {
			t.Fatalf("round %d: %s in the daemon's TMPDIR is not in its run root", round, p)
		}
	}
}

// TestSIGKILLLeavesNothing: palyra-host is SIGKILLed five times, each time
// with two sidecars running; each restart removes what the dead daemon and
// its sidecars left (the dead instance was there, with its children's
// socket dirs, before the restart), and nothing else of the host's is in
// its TMPDIR at any point. Both places of the run root: <state>/run for a
// short state directory, $TMPDIR/palyra-<hash> for a long one.
func TestSIGKILLLeavesNothing(t *testing.T) {
	tests := []struct {
		name  string
		state func(t *testing.T) string
		root  int // index in rundir.Candidates of the root in use
	}{
		{"short state dir", func(t *testing.T) string { return filepath.Join(shortDir(t), "state") }, 0},
		{"long state dir", func(t *testing.T) string { return filepath.Join(t.TempDir(), strings.Repeat("s", 40)) }, 1},
	}
	ids := []string{"test.rundir_a", "test.rundir_b"}
	const kills = 5
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, tmp := tt.state(t), shortDir(t)
			l := statedir.At(state)
			root := rundir.Candidates(l, tmp)[tt.root]
			var p *proc
			for round := 0; ; round++ {
				p = startDaemonTmp(t, state, tmp, "")
				onlyLive(t, l, tmp, round)
				if round == 0 {
					for _, id := range ids {
						p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, id), nil)
					}
				}
				if round == kills {
					break
				}
				for _, id := range ids {
					p.must(http.StatusOK, http.MethodPost, "/v1/skills/"+id+"/tools/test.probe/call", map[string]any{"input": map[string]any{"round": round}}, nil)
				}
				kids := proctest.Children(p.cmd.Process.Pid)
				if len(kids) < len(ids) || childDirs(root) < len(ids) {
					t.Fatalf("round %d: %d children, %d child dirs in %s, want %d sidecars running", round, len(kids), childDirs(root), root, len(ids))
				}
				if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-p.done
				proctest.WaitGone(t, kids, 10*time.Second)
				// What is left now is for the next start to remove. A sidecar
				// the daemon was starting when it died may still hold the
				// instance's lock for a moment (forked, not yet exec'd: it
				// has the lock's descriptor until its exec closes it, and
				// it was not among the children listed above): the dead
				// instance shows once it is gone.
				var left []string
				var err error
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					left, err = rundir.Leftovers(l, tmp)
					if err != nil || len(left) == 2 || time.Now().After(deadline) {
						break
					}
				}
				if err != nil || len(left) != 2 || childDirs(root) < len(ids) {
					t.Fatalf("round %d: after the SIGKILL, left %q (%v) with %d child dirs: the dead instance is not where the test looks", round, left, err, childDirs(root))
				}
				onlyOurs := rundir.Candidates(l, tmp)[1]
				for _, q := range walk(tmp) {
					if q != onlyOurs && !strings.HasPrefix(q, onlyOurs+"/") {
						t.Fatalf("round %d: the killed daemon left %s in its TMPDIR outside its run root", round, q)
					}
				}
			}
			p.stop() // checks that TMPDIR is empty after a clean stop
			for _, c := range rundir.Candidates(l, tmp) {
				if _, err := os.Lstat(c); err == nil {
					t.Errorf("run root %s left after the last host closed: %q", c, walk(c))
				}
			}
		})
	}
}

// TestLiveOwnerSurvivesAnotherHostsStart: a library host opened (writable,
// with sidecars) on the state directory of a running daemon removes
// nothing of the daemon's, whose sidecar keeps serving, the same process;
// the library host's own sidecar lives in an instance of its own, gone
// with its Close while the daemon's stays.
func TestLiveOwnerSurvivesAnotherHostsStart(t *testing.T) {
	state, tmp := filepath.Join(shortDir(t), "state"), shortDir(t)
	l := statedir.At(state)
	p := startDaemonTmp(t, state, tmp, "")
	const id = "test.rundir_live"
	p.must(http.StatusCreated, http.MethodPost, "/v1/skills?allow_tofu=true", probeArtifact(t, id), nil)
	call := func() {
		t.Helper()
		p.must(http.StatusOK, http.MethodPost, "/v1/skills/"+id+"/tools/test.probe/call", map[string]any{"input": map[string]any{}}, nil)
	}
	call()
	// The supervisor starts a standby and a spare sidecar in the
	// background after the first call: wait until the daemon's children
	// stop changing.
	kids, daemonFiles := stableChildren(t, p.cmd.Process.Pid, l.RunDir())
	if len(kids) == 0 || childDirs(l.RunDir()) != len(kids) {
		t.Fatalf("daemon: children %v, files %q; want a private dir per sidecar in %s", kids, daemonFiles, l.RunDir())
	}

	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: filepath.Join(bin, "palyra-sidecar")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	if _, err := h.Call(ctx, host.CallRequest{SkillID: id, ToolID: "test.probe", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	both := walk(l.RunDir())
	for _, f := range daemonFiles {
		if !slices.Contains(both, f) {
			t.Errorf("the library host's start removed the daemon's %s", f)
		}
	}
	if childDirs(l.RunDir()) <= len(kids) {
		t.Errorf("run dir with both hosts: %q, want the library host's sidecar dirs beside the daemon's %d", both, len(kids))
	}
	call()
	if now := proctest.Children(p.cmd.Process.Pid); !slices.Equal(now, kids) {
		t.Errorf("the daemon's sidecars went from %v to %v", kids, now)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if after := walk(l.RunDir()); !slices.Equal(after, daemonFiles) {
		t.Errorf("after the library host closed: %q, want the daemon's %q", after, daemonFiles)
	}
	if left, err := rundir.Leftovers(l, tmp); len(left) != 0 || err != nil {
		t.Errorf("left: %q (%v)", left, err)
	}
	p.stop()
}
