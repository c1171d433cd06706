package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
)

// r5Op is one install or remove the palyra CLI runs on R5's state dir.
type r5Op struct {
	name string
	args []string
}

// relKillInstall is R5: the palyra CLI installs, upgrades and removes a
// skill on a state dir and is SIGKILLed after a random delay (up to the
// time the same operation takes unkilled); afterwards the state dir, opened by a host,
// must show the state before the operation or the state after it, nothing
// else. A second part kills `install --allow-tofu` of an unknown publisher
// on fresh state dirs: afterwards either both the skill and the pinned key
// are there, or neither is.
func relKillInstall(ctx context.Context, e *env) ([]relRow, error) {
	dir := filepath.Join(e.work, "r5")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	filler := func(n int, seed uint64) []byte {
		r := rand.New(rand.NewPCG(seed, seed))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	arts := map[string]string{}
	for _, v := range []struct {
		version string
		size    int
	}{{"1.0.0", 192 << 10}, {"1.1.0", 224 << 10}} {
		data, err := e.fixtureArtifactVersion("bench.r5", v.version, "echo.wasm", "", filler(v.size, uint64(v.size)))
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, "r5-"+v.version+".palyra-skill")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return nil, err
		}
		arts[v.version] = p
	}
	trusted := "bench=" + e.publicKeyHex()
	state := filepath.Join(dir, "state")
	ops := []r5Op{
		{"install 1.0.0", []string{"skills", "install", "--artifact", arts["1.0.0"], "--trusted-publisher", trusted}},
		{"upgrade to 1.1.0", []string{"skills", "install", "--artifact", arts["1.1.0"], "--trusted-publisher", trusted}},
		{"remove", []string{"skills", "remove", "bench.r5"}},
	}
	// One unkilled cycle: the state each operation starts from and leads
	// to, and how long an operation takes (the range of the kill delays).
	opFrom := map[string]r5Op{}
	next := map[string]string{}
	cur := "absent"
	span := map[string]time.Duration{} // by starting state: how long the unkilled operation took
	for _, op := range ops {
		t0 := time.Now()
		if out, err := e.runCLI(ctx, state, op.args...); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", op.name, err, out)
		}
		span[cur] = time.Since(t0)
		after, err := observeR5(ctx, state)
		if err != nil {
			return nil, err
		}
		opFrom[cur], next[cur] = op, after
		cur = after
	}
	if cur != "absent" || len(next) != len(ops) {
		return nil, fmt.Errorf("the unkilled cycle went %v, ending at %s", next, cur)
	}

	row := relRow{Scenario: "R5", Title: "SIGKILL of `palyra skills install/remove` at a random point"}
	outcomes := map[string]int{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	trials := e.opts.n(8, 60)
	for k := range trials {
		op, ok := opFrom[cur]
		if !ok { // a trial that did not hold left a third state: start over
			if err := os.RemoveAll(state); err != nil {
				return nil, err
			}
			cur, op = "absent", opFrom["absent"]
		}
		delay := time.Duration(rng.Int64N(int64(span[cur]) + 1))
		exited, err := e.runCLIKilledAfter(ctx, state, delay, op.args...)
		if err != nil {
			return nil, err
		}
		after, err := observeR5(ctx, state)
		if err != nil {
			row.check(false, "trial %d (%s): the state does not open: %v", k+1, op.name, err)
			continue
		}
		switch {
		case after == cur:
			outcomes["old"]++
		case after == next[cur]:
			outcomes["new"]++
		}
		if exited {
			outcomes["finished before the kill"]++
		}
		row.check(after == cur || after == next[cur], "trial %d (%s, killed after %s): state %q, want %q or %q", k+1, op.name, delay, after, cur, next[cur])
		cur = after
	}
	row.Figures = append(row.Figures,
		fmt.Sprintf("old-or-new: %d / %d (%s)", row.Held, row.Tried, counts(outcomes)),
		fmt.Sprintf("kill delays uniform in 0 to the unkilled operation's time (install %s, upgrade %s, remove %s)",
			span["absent"].Round(time.Millisecond), span[next["absent"]].Round(time.Millisecond), span[next[next["absent"]]].Round(time.Millisecond)))

	tofu, err := e.tofuKills(ctx, dir, arts["1.0.0"], rng, span["absent"])
	if err != nil {
		return nil, err
	}
	return []relRow{row, tofu}, nil
}

// tofuKills kills `install --allow-tofu` on fresh state dirs: afterwards
// the skill and the pinned key are both there or both absent.
func (e *env) tofuKills(ctx context.Context, dir, art string, rng *rand.Rand, span time.Duration) (relRow, error) {
	row := relRow{Scenario: "R5", Title: "SIGKILL of `palyra skills install --allow-tofu`: the pin only with the install"}
	outcomes := map[string]int{}
	pub := e.publicKeyHex()
	for k := range e.opts.n(4, 20) {
		state := filepath.Join(dir, fmt.Sprintf("tofu-%d", k))
		delay := time.Duration(rng.Int64N(int64(span) + 1))
		if _, err := e.runCLIKilledAfter(ctx, state, delay, "skills", "install", "--artifact", art, "--allow-tofu"); err != nil {
			return row, err
		}
		after, err := observeR5(ctx, state)
		if err != nil {
			row.check(false, "trial %d: the state does not open: %v", k+1, err)
			continue
		}
		ts, err := os.ReadFile(filepath.Join(state, "skills", "trust-store.json"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return row, err
		}
		pinned := bytes.Contains(ts, []byte(pub))
		installed := after != "absent"
		outcomes[fmt.Sprintf("installed=%v pinned=%v", installed, pinned)]++
		row.check(installed == pinned, "trial %d (killed after %s): installed %v, key pinned %v", k+1, delay, installed, pinned)
		os.RemoveAll(state)
	}
	row.Figures = append(row.Figures, fmt.Sprintf("skill and pin together: %d / %d (%s)", row.Held, row.Tried, counts(outcomes)))
	return row, nil
}

// runCLI runs the palyra CLI on state and returns its combined output.
func (e *env) runCLI(ctx context.Context, state string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, e.cliBin, append([]string{"--state-dir", state}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+e.work)
	return cmd.CombinedOutput()
}

// runCLIKilledAfter runs the palyra CLI on state and SIGKILLs it after
// delay unless it exited first (then exited is true; its exit status is
// not judged).
func (e *env) runCLIKilledAfter(ctx context.Context, state string, delay time.Duration, args ...string) (exited bool, err error) {
	cmd := exec.Command(e.cliBin, append([]string{"--state-dir", state}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+e.work)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true, nil
	case <-time.After(delay):
		_ = cmd.Process.Signal(syscall.SIGKILL)
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
	<-done
	return false, ctx.Err()
}

// observeR5 opens state with an install-only host and names the state of
// bench.r5: "absent", or "current V" followed by the other versions.
func observeR5(ctx context.Context, state string) (string, error) {
	h, err := host.Open(ctx, host.Config{StateDir: state, Logger: hclog.NewNullLogger()})
	if err != nil {
		return "", err
	}
	defer h.Close(context.Background())
	ls, err := h.List(ctx, host.ListRequest{SkillID: "bench.r5"})
	if err != nil {
		return "", err
	}
	if len(ls.Entries) == 0 {
		return "absent", nil
	}
	var cur string
	var others []string
	for _, l := range ls.Entries {
		if l.Current {
			cur = fmt.Sprintf("current %s", l.Version)
			if l.Status != "active" {
				cur += " (" + l.Status + ")"
			}
		} else {
			others = append(others, l.Version+" "+l.Status)
		}
	}
	if cur == "" {
		cur = "no current version"
	}
	slices.Sort(others)
	if len(others) > 0 {
		cur += ", also " + strings.Join(others, ", ")
	}
	return cur, nil
}
