package install

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// Child processes re-execute the test binary (go-plugin's helperProcess
// pattern): TestHelperProcess does the work when helperEnv names a mode.
const (
	helperEnv    = "PALYRA_INSTALL_HELPER"
	helperState  = "PALYRA_INSTALL_STATE"
	helperArts   = "PALYRA_INSTALL_ARTIFACTS"
	helperSeed   = "PALYRA_INSTALL_SEED"
	helperKillAt = "PALYRA_INSTALL_KILL_AT" // "<step>:<n>": SIGKILL at the n-th time the step is reached
	helperStart  = "PALYRA_INSTALL_START_AT"
)

// killSteps are every crashPoint step of an install and a remove, but
// "trust:saved", which only an install that pins a new key reaches
// (TestTOFUPinOnlyWithInstall kills there).
var killSteps = []string{
	"stage:created", "stage:artifact", "stage:entries", "stage:synced", "trust:decided",
	"set-aside", "renamed", "committed", "cleaned", "remove:committed", "remove:deleted",
}

// crashArtifacts are the artifacts the crash child installs, by name.
// Each carries an incompressible asset so that staging takes a while and
// random kills land inside it.
func crashArtifacts(tb testing.TB) map[string]skillSpec {
	asset := func(n int, seed uint64) []byte {
		r := rand.New(rand.NewPCG(seed, seed))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	return map[string]skillSpec{
		"a100":  {id: "crash.a", version: "1.0.0", asset: asset(192<<10, 1)},
		"a100b": {id: "crash.a", version: "1.0.0", asset: asset(160<<10, 2), signedAt: signedAt.Add(time.Hour)},
		"a110":  {id: "crash.a", version: "1.1.0", asset: asset(224<<10, 3)},
		"b100":  {id: "crash.b", version: "1.0.0", module: "cap_http_storage", hosts: []string{"api.example.com"}, writeRoots: []string{"cache"}, asset: asset(128<<10, 4)},
		"b200":  {id: "crash.b", version: "2.0.0", module: "cap_http_storage", hosts: []string{"api.example.com", "api2.example.com"}, writeRoots: []string{"cache"}, asset: asset(96<<10, 5)},
		"q100":  {id: "crash.q", version: "1.0.0", module: "wasi_path_open", asset: asset(64<<10, 6)},
	}
}

// TestHelperProcess is not a test: it is the body of the child processes.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	var err error
	switch mode {
	case "crash":
		err = crashChild()
	case "concurrent":
		err = concurrentChild()
	case "tofu":
		err = tofuChild()
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	os.Exit(0)
}

// armKill makes crashPoint SIGKILL the process at the step and count
// helperKillAt names, if it names one.
func armKill() error {
	at := os.Getenv(helperKillAt)
	if at == "" {
		return nil
	}
	i := strings.LastIndexByte(at, ':')
	step := at[:i]
	n, err := strconv.Atoi(at[i+1:])
	if err != nil {
		return err
	}
	hits := 0
	crashPoint = func(s string) {
		if s == step {
			if hits++; hits == n {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // not reached
			}
		}
	}
	return nil
}

// tofuChild installs the artifact at helperArts with trust on first use,
// once, and exits; the parent kills it on the way.
func tofuChild() error {
	if err := armKill(); err != nil {
		return err
	}
	ctx := context.Background()
	in, err := Open(ctx, Config{StateDir: os.Getenv(helperState)})
	if err != nil {
		return err
	}
	defer in.Close()
	data, err := os.ReadFile(os.Getenv(helperArts))
	if err != nil {
		return err
	}
	fmt.Println("ready")
	_, err = in.Install(ctx, data, InstallOptions{AllowTOFU: true})
	return err
}

// crashChild installs, upgrades, force-reinstalls, quarantines, enables
// and removes skills in a random order until it is killed.
func crashChild() error {
	if err := armKill(); err != nil {
		return err
	}
	ctx := context.Background()
	in, err := Open(ctx, Config{StateDir: os.Getenv(helperState)})
	if err != nil {
		return err
	}
	fmt.Println("ready")
	arts := map[string][]byte{}
	for name := range crashArtifacts(nil) {
		if arts[name], err = os.ReadFile(filepath.Join(os.Getenv(helperArts), name)); err != nil {
			return err
		}
	}
	seed, _ := strconv.ParseUint(os.Getenv(helperSeed), 10, 64)
	r := rand.New(rand.NewPCG(seed, 7))
	inst := func(name string) error {
		_, err := in.Install(ctx, arts[name], InstallOptions{Force: true, AcceptCapabilities: true, TrustedPublishers: trustAcme})
		return err
	}
	ops := []func() error{
		func() error { return inst("a100") },
		func() error { return inst("a100b") },
		func() error { return inst("a110") },
		func() error { return inst("b100") },
		func() error { return inst("b200") },
		func() error { return inst("q100") },
		func() error { _, err := in.Remove(ctx, "crash.a", "", ""); return err },
		func() error { _, err := in.Remove(ctx, "crash.b", "1.0.0", ""); return err },
		func() error { _, err := in.Remove(ctx, "crash.q", "", ""); return err },
		func() error { _, err := in.Quarantine(ctx, "crash.a", "", "test", ""); return err },
		func() error {
			_, err := in.Enable(ctx, "crash.a", "", EnableOptions{Override: true, Reason: "test"})
			return err
		},
	}
	for {
		err := ops[r.IntN(len(ops))]()
		switch code := errcode.Of(err); code {
		case "", "skill_not_found", "audit_failed":
		default:
			return fmt.Errorf("%v [%s]", err, code)
		}
	}
}

// concurrentChild installs the artifacts named in helperArts (a list of
// paths) once the start time passes, and prints "<path> <code|ok>" per
// artifact.
func concurrentChild() error {
	ctx := context.Background()
	if ns, err := strconv.ParseInt(os.Getenv(helperStart), 10, 64); err == nil {
		time.Sleep(time.Until(time.Unix(0, ns)))
	}
	in, err := Open(ctx, Config{StateDir: os.Getenv(helperState)})
	if err != nil {
		return err
	}
	defer in.Close()
	for _, p := range strings.Split(os.Getenv(helperArts), ",") {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = in.Install(ctx, data, InstallOptions{TrustedPublishers: trustAcme})
		code := errcode.Of(err)
		if code == "" {
			code = "ok"
		}
		fmt.Println(filepath.Base(p), code)
	}
	return nil
}

// helper returns the command of a child process in mode.
func helper(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode}, env...)...)
	return cmd
}

// TestCrashConsistency SIGKILLs a child process that installs, upgrades,
// force-reinstalls and removes skills: once at every step boundary
// (twice, at the first and second time the step is reached), and many
// times at random moments. After each kill it opens the state directory
// (which runs Recover) and checks every invariant of checkState: old state
// or new, never a half-installed skill.
func TestCrashConsistency(t *testing.T) {
	randomKills, stepHits := 100, 2
	if testing.Short() {
		randomKills, stepHits = 20, 1
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))

	artDir := t.TempDir()
	known := map[string][]string{}
	for name, s := range crashArtifacts(t) {
		data := build(t, s)
		if err := os.WriteFile(filepath.Join(artDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		k := s.id + "@" + s.version
		known[k] = append(known[k], sha(data))
	}
	state := t.TempDir()

	type kill struct {
		step string // "" for a random kill
		n    int
	}
	var plan []kill
	for _, s := range killSteps {
		for n := 1; n <= stepHits; n++ {
			plan = append(plan, kill{s, n})
		}
	}
	for range randomKills {
		plan = append(plan, kill{})
	}
	r.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })

	repaired, early := 0, 0
	for i, k := range plan {
		env := []string{helperState + "=" + state, helperArts + "=" + artDir, helperSeed + "=" + strconv.FormatUint(r.Uint64(), 10)}
		if k.step != "" {
			env = append(env, fmt.Sprintf("%s=%s:%d", helperKillAt, k.step, k.n))
		}
		cmd := helper("crash", env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		watchdog := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
		if k.step == "" && r.IntN(5) == 0 {
			// Now and then from the start, to kill Open's recovery too.
			time.Sleep(time.Duration(r.Int64N(int64(40 * time.Millisecond))))
			early++
		} else {
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			if k.step == "" && line == "ready\n" {
				time.Sleep(time.Duration(r.Int64N(int64(30 * time.Millisecond))))
			}
		}
		if k.step == "" {
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		err = cmd.Wait()
		stopped := watchdog.Stop()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL || !stopped {
			t.Fatalf("kill %d (%+v): child ended with %v (watchdog fired: %t)\n%s", i, k, err, !stopped, stderr.String())
		}

		in, err := Open(context.Background(), Config{StateDir: state})
		if err != nil {
			t.Fatalf("kill %d (%+v): open after the kill: %v", i, k, err)
		}
		if rep := in.Recovered(); len(rep.RemovedStaging)+len(rep.RemovedOrphans)+len(rep.Restored)+len(rep.RemovedSetAside) > 0 {
			repaired++
		}
		if len(in.Recovered().Missing) > 0 {
			t.Errorf("kill %d (%+v): recovery found versions it cannot repair: %v", i, k, in.Recovered().Missing)
		}
		err = checkState(context.Background(), in, known)
		_ = in.Close()
		if err != nil {
			t.Fatalf("kill %d (%+v): after recovery:\n%v", i, k, err)
		}
	}
	t.Logf("%d kills (%d at each of %d step boundaries, %d at random moments, %d of them during start-up); %d left debris that recovery repaired",
		len(plan), stepHits, len(killSteps), randomKills, early, repaired)
}

// TestConcurrentInstalls runs four processes at once on one state
// directory: each installs three skills of its own, and all four install
// the same shared skill. Every own skill lands; the shared one is installed
// exactly once and the others are told already_installed.
func TestConcurrentInstalls(t *testing.T) {
	const procs, each = 4, 3
	artDir := t.TempDir()
	shared := filepath.Join(artDir, "shared")
	if err := os.WriteFile(shared, build(t, skillSpec{id: "conc.shared", version: "1.0.0", asset: make([]byte, 1000)}), 0o644); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	start := time.Now().Add(500 * time.Millisecond).UnixNano()
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for p := range procs {
		var paths []string
		for j := range each {
			name := fmt.Sprintf("p%d-%d", p, j)
			path := filepath.Join(artDir, name)
			if err := os.WriteFile(path, build(t, skillSpec{id: "conc." + strings.ReplaceAll(name, "-", "_"), version: "1.0.0"}), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
		// The shared skill in the middle, so the processes meet on it.
		paths = append(paths[:1], append([]string{shared}, paths[1:]...)...)
		cmd := helper("concurrent", helperState+"="+state, helperArts+"="+strings.Join(paths, ","),
			helperStart+"="+strconv.FormatInt(start, 10))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	sharedOK, sharedRefused := 0, 0
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		for _, line := range strings.Split(strings.TrimSpace(outs[i].String()), "\n") {
			name, code, _ := strings.Cut(line, " ")
			switch {
			case !strings.HasPrefix(name, "p") && name != "shared":
				// test framework output
			case name == "shared" && code == "ok":
				sharedOK++
			case name == "shared" && code == "already_installed":
				sharedRefused++
			case code != "ok":
				t.Errorf("process %d: %s", i, line)
			}
		}
	}
	if sharedOK != 1 || sharedRefused != procs-1 {
		t.Errorf("shared skill: %d installs, %d refusals; want 1 and %d", sharedOK, sharedRefused, procs-1)
	}
	in := open(t, state, nil)
	l, err := in.List(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != procs*each+1 {
		t.Fatalf("%d skills installed, want %d", len(l), procs*each+1)
	}
	for _, e := range l {
		if e.Status != "active" {
			t.Errorf("%s %s is %s", e.SkillID, e.Version, e.Status)
		}
	}
	mustState(t, in)
}

// TestTOFUPinOnlyWithInstall SIGKILLs a child that installs a skill with
// trust on first use (publisher unknown to the trust store): at every step
// of the install and at random moments. After each kill, opening the state
// directory (which recovers) must find the skill and its pin, or neither.
// A child that is not killed must leave both.
func TestTOFUPinOnlyWithInstall(t *testing.T) {
	randomKills := 30
	if testing.Short() {
		randomKills = 8
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x21}, ed25519.SeedSize))
	art := filepath.Join(t.TempDir(), "tofu.palyra-skill")
	big := make([]byte, 256<<10)
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	data := build(t, skillSpec{id: "tofu.skill", version: "1.0.0", publisher: "tofu", key: other, asset: big})
	if err := os.WriteFile(art, data, 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []string{"stage:created", "stage:artifact", "stage:entries", "stage:synced", "trust:decided", "renamed", "committed", "trust:saved", ""}
	for range randomKills {
		steps = append(steps, "random")
	}
	outcomes := map[bool]int{}
	for i, step := range steps {
		state := t.TempDir()
		env := []string{helperState + "=" + state, helperArts + "=" + art}
		if step != "" && step != "random" {
			env = append(env, helperKillAt+"="+step+":1")
		}
		cmd := helper("tofu", env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		watchdog := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if step == "random" && line == "ready\n" {
			time.Sleep(time.Duration(r.Int64N(int64(25 * time.Millisecond))))
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
		err = cmd.Wait()
		stopped := watchdog.Stop()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
		switch {
		case !stopped:
			t.Fatalf("run %d (%q): watchdog fired\n%s", i, step, stderr.String())
		case step == "" && err != nil:
			t.Fatalf("run %d: the install failed: %v\n%s", i, err, stderr.String())
		case step != "" && step != "random" && !killed:
			t.Fatalf("run %d (%q): child ended with %v, not killed\n%s", i, step, err, stderr.String())
		case !killed && err != nil:
			t.Fatalf("run %d (%q): %v\n%s", i, step, err, stderr.String())
		}

		in, err := Open(context.Background(), Config{StateDir: state})
		if err != nil {
			t.Fatalf("run %d (%q): open: %v", i, step, err)
		}
		_, ierr := in.Inventory().Skill(context.Background(), "tofu.skill", "1.0.0")
		installed := ierr == nil
		s, err := in.trust.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pinned, ok := s.TOFUKey("tofu")
		if ok && pinned != hex.EncodeToString(other.Public().(ed25519.PublicKey)) {
			t.Errorf("run %d (%q): pinned %s, not the signer's key", i, step, pinned)
		}
		if installed != ok {
			t.Errorf("run %d (%q): installed %v but pinned %v (recovered %+v)", i, step, installed, ok, in.Recovered())
		}
		if step == "committed" && len(in.Recovered().SavedPins) != 1 {
			t.Errorf("run %d (%q): recovery saved pins %v, want the one the commit left pending", i, step, in.Recovered().SavedPins)
		}
		if step == "" && !installed {
			t.Errorf("run %d: a completed install is not there", i)
		}
		if err := checkState(context.Background(), in, nil); err != nil {
			t.Errorf("run %d (%q): %v", i, step, err)
		}
		_ = in.Close()
		outcomes[installed]++
	}
	t.Logf("%d runs: %d left skill and pin, %d neither", len(steps), outcomes[true], outcomes[false])
}
