package supervisor

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/internal/buildinfo"
)

// binPath is the palyra-sidecar binary TestMain builds once; sockRoot is
// where the supervisors under test put their sidecars' socket dirs.
var binPath, testDir, hostTmp string

// rawPath is the raw go-plugin baseline of the benchmarks
// (testdata/rawplugin), built by TestMain.
var rawPath string

// fakePath is testdata/fakesidecar, built by TestMain under a name that
// sidecarChildren counts too.
var fakePath string

func TestMain(m *testing.M) {
	if os.Getenv("PALYRA_SUPERVISOR_HELPER") == "1" {
		helperProcess()
		return
	}
	if fuzzWorker() {
		// go test -fuzz runs the fuzz function in worker processes: the
		// supervisor's fuzz targets start no sidecar, and a worker's files
		// must not land in the TMPDIR the parent checks for leftovers.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "palyra-sup-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = dir
	binPath = filepath.Join(dir, "palyra-sidecar")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-ldflags="+buildinfo.SidecarLDFlags, "-o", binPath, "github.com/palyra-go/palyra/cmd/palyra-sidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building palyra-sidecar:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	rawPath = filepath.Join(dir, "rawplugin")
	build = exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", rawPath, "github.com/palyra-go/palyra/host/supervisor/testdata/rawplugin")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building testdata/rawplugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	fakePath = filepath.Join(dir, "palyra-sidecar-fake")
	build = exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", fakePath, "github.com/palyra-go/palyra/host/supervisor/testdata/fakesidecar")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building testdata/fakesidecar:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	hostTmp = filepath.Join(dir, "tmp")
	if err := os.Mkdir(hostTmp, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", hostTmp)
	goleak.VerifyTestMain(wrap{m, func(code int) int {
		if code == 0 {
			if left := sidecarChildren(); len(left) > 0 {
				fmt.Fprintln(os.Stderr, "sidecar processes left behind:", left)
				code = 1
			}
			if entries, _ := os.ReadDir(hostTmp); len(entries) > 0 {
				fmt.Fprintln(os.Stderr, "files left in TMPDIR:", entries)
				code = 1
			}
		}
		os.RemoveAll(dir)
		return code
	}})
}

// fuzzWorker reports whether this process is a worker of go test -fuzz.
func fuzzWorker() bool {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzzworker") {
			return true
		}
	}
	return false
}

type wrap struct {
	m     *testing.M
	after func(int) int
}

func (w wrap) Run() int { return w.after(w.m.Run()) }

// sidecarChildren lists live (non-zombie) processes whose parent is this
// process and whose executable is a palyra-sidecar (or the fake one).
func sidecarChildren() []int {
	return children(func(exe string) bool { return strings.Contains(filepath.Base(exe), "palyra-sidecar") })
}

// children lists the live (non-zombie) children of this process whose
// executable path passes match.
func children(match func(exe string) bool) []int {
	var out []int
	me := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state := procStat(pid)
		if ppid != me || state == "Z" || state == "" {
			continue
		}
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if match(exe) {
			out = append(out, pid)
		}
	}
	return out
}

// waitChild waits up to 30 s for a live child of this process running exe
// and returns its pid.
func waitChild(t testing.TB, exe string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if pids := children(func(e string) bool { return e == exe }); len(pids) > 0 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no child running %s", exe)
		}
	}
}

// procStat returns a process's parent pid and state ("" when it is gone).
func procStat(pid int) (ppid int, state string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	_, st := procStat(pid)
	return st != "" && st != "Z"
}

// waitGone waits up to 5 s for pid to end: the supervisor kills and reaps
// after it has updated a sidecar's state, not before.
func waitGone(t testing.TB, pid int, what string) {
	t.Helper()
	for gone := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(gone) {
			t.Errorf("%s %d still alive after 5s", what, pid)
			return
		}
	}
}

// fixture returns a Target for a testdata/wasm module.
func fixture(t testing.TB, skillID, name string) Target {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "testdata", "wasm", name))
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(wasm)
	return Target{SkillID: skillID, Version: "1.0.0", ModulePath: path, ModuleSHA256: hex.EncodeToString(h[:])}
}

// newSup returns a Supervisor whose cleanup closes it and checks that no
// sidecar process nor socket dir is left. SidecarPath defaults to the real
// palyra-sidecar.
func newSup(t testing.TB, cfg Config) *Supervisor {
	t.Helper()
	if cfg.SidecarPath == "" {
		cfg.SidecarPath = binPath
	}
	if cfg.SocketDir == "" {
		cfg.SocketDir = shortDir(t)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	t.Cleanup(func() {
		pids = append(pids, seenPIDs(s)...)
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("second Close: %v", err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("sidecar pid %d alive after Close", pid)
			}
		}
		if left := sidecarChildren(); len(left) > 0 {
			t.Errorf("sidecar children left after Close: %v", left)
		}
		if entries, _ := os.ReadDir(cfg.SocketDir); len(entries) > 0 {
			t.Errorf("socket dirs left after Close: %v", entries)
		}
	})
	return s
}

// shortDir is a temp dir with a short path (Unix socket paths are limited
// to 108 bytes, and t.TempDir's carry the test name).
func shortDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp(testDir, "s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func seenPIDs(s *Supervisor) []int {
	var out []int
	for _, st := range s.States() {
		if st.PID != 0 {
			out = append(out, st.PID)
		}
	}
	return out
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// helperProcess is the child of TestSupervisorKilled: it starts two
// sidecars, prints their pids and waits to be killed.
func helperProcess() {
	s, err := New(Config{SidecarPath: os.Getenv("PALYRA_SIDECAR_BIN"), SocketDir: os.Getenv("PALYRA_SOCKET_DIR")})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	wasm := os.Getenv("PALYRA_ANSWER_WASM")
	b, err := os.ReadFile(wasm)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	h := sha256.Sum256(b)
	w := bufio.NewWriter(os.Stdout)
	for _, id := range []string{"helper.one", "helper.two"} {
		tg := Target{SkillID: id, Version: "1", ModulePath: wasm, ModuleSHA256: hex.EncodeToString(h[:]), Entrypoint: "answer"}
		res, err := s.Call(context.Background(), tg, "t", nil, CallOptions{})
		if err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Fprintf(w, "PID %d\n", res.PID)
	}
	fmt.Fprintln(w, "READY")
	w.Flush()
	select {}
}
