package rundir_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/statedir"
)

// shortDir is a fresh directory with a short path (t.TempDir's are too
// long for a state directory whose run root is <state>/run).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "rd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestRoot: the run root is <state>/run when short enough, else a
// per-state-directory directory in $TMPDIR, else in /tmp; every choice
// fits MaxRootLen.
func TestRoot(t *testing.T) {
	short := filepath.Join(shortDir(t), "state")
	long := filepath.Join(shortDir(t), strings.Repeat("s", 60))
	longTmp := filepath.Join(shortDir(t), strings.Repeat("t", 60))
	shortTmp := shortDir(t)
	tests := []struct {
		name, state, tmpdir string
		want                func(l statedir.Layout) string
	}{
		{"short state dir", short, "/tmp", func(l statedir.Layout) string { return l.RunDir() }},
		{"long state dir", long, shortTmp, func(l statedir.Layout) string { return rundir.Candidates(l, shortTmp)[1] }},
		{"long TMPDIR too", long, longTmp, func(l statedir.Layout) string { return rundir.Candidates(l, longTmp)[2] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := statedir.At(tt.state)
			got, err := rundir.Root(l, tt.tmpdir)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.want(l); got != want {
				t.Fatalf("Root = %q, want %q (candidates %q)", got, want, rundir.Candidates(l, tt.tmpdir))
			}
			if len(got) > rundir.MaxRootLen {
				t.Fatalf("Root %q is %d bytes, over %d", got, len(got), rundir.MaxRootLen)
			}
			if tt.name != "short state dir" && (!strings.HasPrefix(filepath.Base(got), "palyra-") || !strings.HasPrefix(got, "/tmp/")) {
				t.Fatalf("fallback root %q is not named palyra-<hash>", got)
			}
		})
	}
	// Two state directories never share a fallback root.
	a, b := rundir.Candidates(statedir.At(long), ""), rundir.Candidates(statedir.At(long+"2"), "")
	if a[1] == b[1] {
		t.Fatalf("two state dirs share the root %q", a[1])
	}
}

// TestSocketBudget: a Unix socket at the deepest path the host makes (see
// the package comment) binds under a root of MaxRootLen bytes, and does
// not under one byte more, so MaxRootLen is exactly the limit.
func TestSocketBudget(t *testing.T) {
	base := shortDir(t)
	for _, extra := range []int{0, 1} {
		root := base + "/" + strings.Repeat("r", rundir.MaxRootLen+extra-len(base)-1)
		dir := filepath.Join(root, "h4294967295", "sc-4294967295", "plugin-dir4294967295")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("unix", filepath.Join(dir, "plugin4294967295"))
		if extra == 0 {
			if err != nil {
				t.Fatalf("root of %d bytes: %v", len(root), err)
			}
			ln.Close()
		} else if err == nil {
			ln.Close()
			t.Fatalf("root of %d bytes: a socket bound past the limit", len(root))
		}
		os.RemoveAll(root)
	}
}

// holder is a test binary process holding an instance in root.
type holder struct {
	cmd *exec.Cmd
	dir string
}

func startHolder(t *testing.T, root string) *holder {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &holder{cmd: cmd}
	t.Cleanup(h.kill)
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "DIR ") {
		t.Fatalf("holder said %q (%v)", sc.Text(), sc.Err())
	}
	h.dir = strings.TrimPrefix(sc.Text(), "DIR ")
	return h
}

// kill SIGKILLs the holder and reaps it (idempotent).
func (h *holder) kill() {
	if h.cmd.ProcessState == nil {
		h.cmd.Process.Signal(syscall.SIGKILL)
		h.cmd.Wait()
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// TestSweepRemovesOnlyDeadOwners: instances of SIGKILLed processes, a lock
// file without its directory and a directory without its lock file are
// removed; the instances of a live process and of this process stay, and
// so does the root they are in.
func TestSweepRemovesOnlyDeadOwners(t *testing.T) {
	for _, state := range []string{filepath.Join(shortDir(t), "state"), filepath.Join(t.TempDir(), strings.Repeat("s", 50))} {
		l := statedir.At(state)
		root, err := rundir.Root(l, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(root) })
		var dead []*holder
		for range 3 {
			h := startHolder(t, root)
			h.kill()
			dead = append(dead, h)
		}
		live := startHolder(t, root)
		mine, err := rundir.Acquire(root)
		if err != nil {
			t.Fatal(err)
		}
		orphanDir := filepath.Join(root, "h12345")
		orphanLock := filepath.Join(root, "h54321.lock")
		if err := os.Mkdir(orphanDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(orphanLock, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, h := range dead {
			want = append(want, h.dir, h.dir+".lock")
		}
		want = append(want, orphanDir, orphanLock)
		slices.Sort(want)

		left, err := rundir.Leftovers(l, "")
		slices.Sort(left)
		if err != nil || !slices.Equal(left, want) {
			t.Fatalf("Leftovers = %q, %v; want %q", left, err, want)
		}
		gone, err := rundir.Sweep(l, "")
		slices.Sort(gone)
		if err != nil || !slices.Equal(gone, want) {
			t.Fatalf("Sweep = %q, %v; want %q", gone, err, want)
		}
		for _, p := range want {
			if exists(p) {
				t.Errorf("%s survived the sweep", p)
			}
		}
		for _, p := range []string{live.dir, live.dir + ".lock", filepath.Join(live.dir, "socket-stand-in"), mine.Dir(), mine.Dir() + ".lock"} {
			if !exists(p) {
				t.Errorf("live %s was removed", p)
			}
		}
		if left, err := rundir.Leftovers(l, ""); len(left) != 0 || err != nil {
			t.Fatalf("Leftovers after Sweep = %q, %v", left, err)
		}
		// Now the other process dies too: its instance is the one left.
		live.kill()
		if left, _ := rundir.Leftovers(l, ""); !slices.Equal(left, []string{live.dir, live.dir + ".lock"}) {
			t.Fatalf("Leftovers after the holder died = %q", left)
		}
		if _, err := rundir.Sweep(l, ""); err != nil {
			t.Fatal(err)
		}
		if err := mine.Close(); err != nil {
			t.Fatal(err)
		}
		if exists(root) {
			ents, _ := os.ReadDir(root)
			t.Fatalf("root left after the last instance closed: %v", ents)
		}
	}
}

// TestTwoInstancesOfOneProcess: flock belongs to the open file, so a
// second host in the same process does not take the first one's
// instance for a dead owner's; closing one keeps the root for the other.
func TestTwoInstancesOfOneProcess(t *testing.T) {
	l := statedir.At(filepath.Join(shortDir(t), "state"))
	root, _ := rundir.Root(l, "")
	a, err := rundir.Acquire(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rundir.Acquire(root)
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir() == b.Dir() {
		t.Fatalf("two instances share %s", a.Dir())
	}
	if gone, err := rundir.Sweep(l, ""); len(gone) != 0 || err != nil {
		t.Fatalf("Sweep removed %q, %v", gone, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(a.Dir()) || exists(a.Dir()+".lock") || !exists(b.Dir()) {
		t.Fatalf("after closing a: a %v, b %v", exists(a.Dir()), exists(b.Dir()))
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(root) {
		t.Fatal("root left after the last instance closed")
	}
}

// TestUnsafeRoot: a root that is not a private directory of this user is
// refused by Acquire and left untouched by Sweep.
func TestUnsafeRoot(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
	}{
		{"group readable", func(t *testing.T, root string) {
			must(t, os.Mkdir(root, 0o700))
			must(t, os.Chmod(root, 0o750))
		}},
		{"symbolic link", func(t *testing.T, root string) {
			target := filepath.Join(filepath.Dir(root), "elsewhere")
			must(t, os.Mkdir(target, 0o700))
			must(t, os.Symlink(target, root))
		}},
		{"another user's", func(t *testing.T, root string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory away")
			}
			must(t, os.Mkdir(root, 0o700))
			must(t, os.Chown(root, 65534, 65534))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := statedir.At(filepath.Join(shortDir(t), "state"))
			must(t, os.Mkdir(l.Dir(), 0o700))
			root := l.RunDir()
			tt.setup(t, root)
			// A dead-looking entry that a sweep would remove in a private root.
			stray := filepath.Join(root, "h1")
			must(t, os.Mkdir(stray, 0o700))
			if _, err := rundir.Acquire(root); !errors.Is(err, rundir.ErrUnusable) {
				t.Fatalf("Acquire = %v, want ErrUnusable", err)
			}
			if _, err := rundir.Sweep(l, ""); err != nil {
				t.Fatal(err)
			}
			if !exists(stray) {
				t.Fatal("Sweep removed an entry of a root that is not ours")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentHosts: hosts that start, sweep and close at the same time
// in one root (goroutines here; the lock is per open file, as between
// processes) never lose a live instance: each one's directory and lock file
// are there until its own Close, whatever the others' sweeps did.
func TestConcurrentHosts(t *testing.T) {
	l := statedir.At(filepath.Join(shortDir(t), "state"))
	root, _ := rundir.Root(l, "")
	const workers, rounds = 6, 40
	errs := make(chan error, workers)
	for range workers {
		go func() {
			errs <- func() error {
				for range rounds {
					in, err := rundir.Acquire(root)
					if err != nil {
						return err
					}
					if _, err := rundir.Sweep(l, ""); err != nil {
						return err
					}
					if !exists(in.Dir()) || !exists(in.Dir()+".lock") {
						return errors.New("a sweep removed the live instance " + in.Dir())
					}
					if err := in.Close(); err != nil {
						return err
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if exists(root) {
		t.Errorf("root left: %q", rundir.Candidates(l, ""))
	}
}
