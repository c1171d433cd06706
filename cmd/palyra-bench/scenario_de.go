package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/procstat"
	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/stats"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// throughputCallers and throughputSkills are scenario D's shape.
const (
	throughputCallers = 8
	throughputSkills  = 4
)

// load runs callers goroutines for d, caller i calling call(i, k) for its
// k-th call, and returns the calls per second and the latencies. The first
// error stops every caller and is returned.
func load(ctx context.Context, d time.Duration, callers int, call func(ctx context.Context, caller, k int) error) (float64, *stats.Sample, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      stats.Sample
		firstErr error
	)
	start := time.Now()
	deadline := start.Add(d)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local stats.Sample
			defer func() {
				mu.Lock()
				all.Merge(&local)
				mu.Unlock()
			}()
			for k := 0; time.Now().Before(deadline); k++ {
				t0 := time.Now()
				if err := call(ctx, i, k); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				local.Add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, nil, firstErr
	}
	return float64(all.Len()) / elapsed.Seconds(), &all, nil
}

// scenarioD: 8 concurrent callers over 4 trivial skills for a fixed time,
// against the same load on 4 raw go-plugin plugins, alternating halves;
// and, for its before/after, the same load on a host whose sidecars give
// every instance a fresh linear memory (supervisor.Config.NoMemoryPool).
func scenarioD(ctx context.Context, e *env) ([]report.Row, error) {
	h, _, closeHost, err := e.openHost(ctx, "d", true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	hn, _, closeNoPool, err := e.openHost(ctx, "d-nopool", true, supervisor.Config{IdleTimeout: -1, NoMemoryPool: true})
	if err != nil {
		return nil, err
	}
	defer closeNoPool()
	ids := make([]string, throughputSkills)
	for i := range ids {
		name := fmt.Sprintf("t%d", i)
		data, err := e.trivialArtifact(name)
		if err != nil {
			return nil, err
		}
		ids[i] = "bench." + name
		for _, hh := range []*host.Host{h, hn} {
			if _, err := e.install(ctx, hh, data); err != nil {
				return nil, err
			}
			if err := hostCall(hh, ids[i], "bench.trivial", echoInput, trivialOutput)(ctx); err != nil {
				return nil, err
			}
		}
	}
	raws := make([]*rawClient, throughputSkills)
	for i := range raws {
		r, err := spawnRaw(ctx, e.rawPlugin)
		if err != nil {
			return nil, err
		}
		defer r.kill()
		raws[i] = r
	}
	ours := func(ctx context.Context, caller, k int) error {
		return hostCall(h, ids[(caller+k)%throughputSkills], "bench.trivial", echoInput, trivialOutput)(ctx)
	}
	peer := func(ctx context.Context, caller, k int) error {
		return raws[(caller+k)%throughputSkills].invoke(ctx)
	}
	noPool := func(ctx context.Context, caller, k int) error {
		return hostCall(hn, ids[(caller+k)%throughputSkills], "bench.trivial", echoInput, trivialOutput)(ctx)
	}
	half := e.opts.d(2*time.Second, 8*time.Second) / 2
	var oursRate, peerRate, noPoolRate float64
	var oursLat, peerLat, noPoolLat stats.Sample
	for range 2 {
		for _, side := range []struct {
			call func(context.Context, int, int) error
			rate *float64
			lat  *stats.Sample
		}{{ours, &oursRate, &oursLat}, {peer, &peerRate, &peerLat}, {noPool, &noPoolRate, &noPoolLat}} {
			rate, lat, err := load(ctx, half, throughputCallers, side.call)
			if err != nil {
				return nil, err
			}
			*side.rate += rate / 2
			side.lat.Merge(lat)
		}
	}
	rate := func(name string, r float64, n int) report.Measurement {
		return report.Measurement{Name: name, Unit: "calls/s", Median: r, N: n}
	}
	shape := fmt.Sprintf("%d callers × %d skills, trivial tool", throughputCallers, throughputSkills)
	return []report.Row{
		compare("D", "throughput, "+shape, rate("host.Call", oursRate, oursLat.Len()), rate("raw go-plugin RPC, 4 plugins", peerRate, peerLat.Len()),
			valueGoal("≥ 4,000 calls/s", ">=", 4000), "mean over the run, not a median"),
		compare("D", "latency under that load", report.FromDurations("host.Call", &oursLat, time.Microsecond), report.FromDurations("raw go-plugin RPC", &peerLat, time.Microsecond), nil, ""),
		compare("D", "throughput: linear-memory pool (after) vs a fresh memory per instance (before)", rate("host.Call", oursRate, oursLat.Len()),
			rate("host.Call, sidecars without the memory pool", noPoolRate, noPoolLat.Len()), nil, "the same load on a host with supervisor.Config.NoMemoryPool"),
	}, nil
}

// densityResult is what internal/densityapp prints.
type densityResult struct {
	Skills          int `json:"skills"`
	Called          int `json:"called"`
	RSSKiB          int `json:"rss_kib"`
	RSSBeforeKiB    int `json:"rss_before_kib"`
	PeakSidecarsKiB int `json:"peak_sidecars_kib"`
	HeapLiveKiB     int `json:"heap_live_kib"`
	RSSReleasedKiB  int `json:"rss_released_kib"`
	RSSSettledKiB   int `json:"rss_settled_kib"`

	// The n sidecars idle together (filled by density, not densityapp).
	SidecarsRSSKiB, SidecarsPSSKiB, SidecarsPSSAnonKiB, SidecarsPSSFileKiB int `json:"-"`
}

// scenarioE: the RSS of one idle sidecar (trivial WAT and echo Go guest)
// against an idle raw go-plugin plugin, and of a host-embedding process
// with 1, 10 and 50 installed skills after their idle sidecars were reaped.
func scenarioE(ctx context.Context, e *env) ([]report.Row, error) {
	h, _, closeHost, err := e.openHost(ctx, "e", true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	if err := e.installTrivialAndEcho(ctx, h); err != nil {
		return nil, err
	}
	resT, err := h.Call(ctx, host.CallRequest{SkillID: "bench.trivial", ToolID: "bench.trivial", Input: echoInput})
	if err != nil {
		return nil, err
	}
	resE, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: echoInput})
	if err != nil {
		return nil, err
	}
	// The same trivial skill on a sidecar linked without --gc-sections
	// (the build before that change), built fresh beside ours so that the
	// page cache holds both binaries the same way.
	hb, _, closeBefore, err := e.openHostWith(ctx, filepath.Join(e.work, "state-e-nogc"), e.sidecarNoGC, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeBefore()
	trivial, err := e.trivialArtifact("trivial")
	if err == nil {
		_, err = e.install(ctx, hb, trivial)
	}
	if err != nil {
		return nil, err
	}
	resB, err := hb.Call(ctx, host.CallRequest{SkillID: "bench.trivial", ToolID: "bench.trivial", Input: echoInput})
	if err != nil {
		return nil, err
	}
	raw, err := spawnRaw(ctx, e.rawPlugin)
	if err != nil {
		return nil, err
	}
	defer raw.kill()
	if err := raw.invoke(ctx); err != nil {
		return nil, err
	}
	// Let the prepared instances settle and the Go runtimes go idle.
	if err := sleep(ctx, time.Second); err != nil {
		return nil, err
	}
	rss := func(name string, pid int) (report.Measurement, procstat.Memory, error) {
		m, err := procstat.ReadMemory(pid)
		if err != nil {
			return report.Measurement{}, m, err
		}
		return mb(name, m.RSS), m, nil
	}
	wat, watM, err := rss("idle sidecar, trivial WAT skill", resT.SidecarPID)
	if err != nil {
		return nil, err
	}
	goGuest, goM, err := rss("idle sidecar, echo Go-guest skill", resE.SidecarPID)
	if err != nil {
		return nil, err
	}
	rawM, rawMem, err := rss("idle raw go-plugin plugin", raw.pid())
	if err != nil {
		return nil, err
	}
	beforeM, beforeMem, err := rss("idle sidecar linked without --gc-sections, trivial WAT skill", resB.SidecarPID)
	if err != nil {
		return nil, err
	}
	rows := []report.Row{
		compare("E", "idle sidecar RSS, trivial WAT skill", wat, rawM, valueGoal("≤ 20 MB", "<=", 20),
			"after one call, 1 s idle; "+split(watM)+"; raw plugin "+split(rawMem)),
		compare("E", "idle sidecar RSS, echo Go-guest skill", goGuest, rawM, valueGoal("≤ 30 MB", "<=", 30),
			"includes its prepared instances; "+split(goM)),
		compare("E", "idle sidecar RSS, trivial WAT: linked with --gc-sections (after) vs without (before)", wat, beforeM, nil,
			fmt.Sprintf("binary %s; anonymous %.1f vs %.1f MB; PSS not compared (ours shares its binary with the Go-guest sidecar, the other has its own); the kernel maps a binary's cached pages in whole large folios, so the RSS moves with the page cache (RATIONALE.md)",
				fileSizes(e.sidecar, e.sidecarNoGC), kibMB(watM.PSSAnon), kibMB(beforeMem.PSSAnon))),
	}
	var dens []*densityResult
	for _, n := range []int{1, 10, 50} {
		r, err := density(ctx, e, n)
		if err != nil {
			return nil, fmt.Errorf("density with %d skills: %w", n, err)
		}
		dens = append(dens, r)
		rows = append(rows, absolute("E", fmt.Sprintf("idle sidecar PSS, %d idle trivial WAT sidecars", n),
			report.Measurement{Name: "PSS per sidecar", Unit: "MB", Median: float64(r.SidecarsPSSKiB) * 1024 / 1e6 / float64(n), N: 1}, nil,
			fmt.Sprintf("%d sidecars: PSS %.1f MB together (anon %.1f MB, file %.1f MB), RSS %.1f MB together; shared pages of the binary divide between them",
				n, kibMB(r.SidecarsPSSKiB), kibMB(r.SidecarsPSSAnonKiB), kibMB(r.SidecarsPSSFileKiB), kibMB(r.SidecarsRSSKiB))))
	}
	for i, n := range []int{1, 10, 50} {
		r := dens[i]
		var goal *report.Goal
		if n == 50 {
			goal = valueGoal("≤ 40 MB", "<=", 40)
		}
		rows = append(rows, absolute("E", fmt.Sprintf("supervisor RSS, %d installed skills, idle sidecars reaped", n),
			mb("host-embedding process", r.RSSKiB), goal,
			fmt.Sprintf("0.5 s after the reaping; %.1f MB before the first call; the %d sidecars peaked at %.1f MB together; Go heap live %.1f MB, RSS %.1f MB once the runtime returned its free pages",
				kibMB(r.RSSBeforeKiB), n, kibMB(r.PeakSidecarsKiB), kibMB(r.HeapLiveKiB), kibMB(r.RSSReleasedKiB))))
	}
	r := dens[len(dens)-1]
	rows = append(rows, absolute("E", fmt.Sprintf("supervisor RSS, 50 installed skills, idle %s after the reaping", settleTime(e)),
		mb("host-embedding process", r.RSSSettledKiB), valueGoal("≤ 40 MB", "<=", 40),
		"the same process left idle, nothing forced: what the Go runtime's background scavenger returned by then"))
	return rows, nil
}

// fileSizes describes the sizes of the files after and before ("33.8 vs
// 45.6 MB"), "?" for one it cannot stat.
func fileSizes(after, before string) string {
	size := func(p string) string {
		fi, err := os.Stat(p)
		if err != nil {
			return "?"
		}
		return fmt.Sprintf("%.1f", float64(fi.Size())/1e6)
	}
	return size(after) + " vs " + size(before) + " MB"
}

// kibMB converts KiB to MB (10^6 bytes).
func kibMB(kib int) float64 { return float64(kib) * 1024 / 1e6 }

// split describes m's PSS and its anonymous/file parts.
func split(m procstat.Memory) string {
	return fmt.Sprintf("PSS %.1f MB (anon %.1f, file %.1f)", kibMB(m.PSS), kibMB(m.PSSAnon), kibMB(m.PSSFile))
}

// mb is a Measurement of kib KiB in MB (10^6 bytes).
func mb(name string, kib int) report.Measurement {
	return report.Measurement{Name: name, Unit: "MB", Median: float64(kib) * 1024 / 1e6, N: 1}
}

// settleTime is how long after the reaping densityapp measures its idle
// RSS again, nothing forced (the runtime's background scavenger returns
// freed memory gradually).
func settleTime(e *env) time.Duration { return e.opts.d(2*time.Second, 10*time.Second) }

// density installs n trivial skills into a new state directory and runs
// internal/densityapp on it: a process that embeds the host, calls every
// skill once, waits until the idle sidecars are reaped and reports its RSS.
func density(ctx context.Context, e *env, n int) (*densityResult, error) {
	// Only the 50-skill row reports the settled RSS: the others skip the wait.
	settle := time.Duration(0)
	if n == 50 {
		settle = settleTime(e)
	}
	h, state, closeHost, err := e.openHost(ctx, fmt.Sprintf("e-density-%d", n), true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	for i := range n {
		data, err := e.trivialArtifact(fmt.Sprintf("d%03d", i))
		if err == nil {
			_, err = e.install(ctx, h, data)
		}
		if err != nil {
			closeHost()
			return nil, err
		}
	}
	idle, err := idleSidecars(ctx, h, n)
	closeHost()
	if err != nil {
		return nil, err
	}
	sock, err := os.MkdirTemp("", "pbd")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(sock)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.densityApp, "--state", state, "--sidecar", e.sidecar, "--socket-dir", sock, "--idle", "300ms",
		"--settle", settle.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("densityapp: %w: %s", err, stderr.String())
	}
	var r densityResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("densityapp output %q: %w", stdout.String(), err)
	}
	if r.Called != n {
		return nil, fmt.Errorf("densityapp called %d skills, want %d", r.Called, n)
	}
	r.SidecarsRSSKiB, r.SidecarsPSSKiB, r.SidecarsPSSAnonKiB, r.SidecarsPSSFileKiB = idle.RSS, idle.PSS, idle.PSSAnon, idle.PSSFile
	return &r, nil
}

// idleSidecars calls the n trivial skills h has installed (h never reaps),
// so that n sidecars run at once, lets them go idle for a second and
// returns their memory added up.
func idleSidecars(ctx context.Context, h *host.Host, n int) (procstat.Memory, error) {
	var sum procstat.Memory
	pids := make([]int, 0, n)
	for i := range n {
		res, err := h.Call(ctx, host.CallRequest{SkillID: fmt.Sprintf("bench.d%03d", i), ToolID: "bench.trivial", Input: echoInput})
		if err != nil {
			return sum, err
		}
		pids = append(pids, res.SidecarPID)
	}
	if err := sleep(ctx, time.Second); err != nil {
		return sum, err
	}
	for _, pid := range pids {
		m, err := procstat.ReadMemory(pid)
		if err != nil {
			return sum, err
		}
		sum.RSS += m.RSS
		sum.PSS += m.PSS
		sum.PSSAnon += m.PSSAnon
		sum.PSSFile += m.PSSFile
	}
	return sum, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
