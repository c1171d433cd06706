// Command densityapp is scenario E's host-embedding process: a minimal Go
// application that opens a host on a state directory palyra-bench prepared
// (n trivial skills installed and precompiled), calls every skill once,
// waits until the supervisor has reaped all the idle sidecars and prints
// its own resident set size as JSON (also its live heap and its RSS once
// the Go runtime returned its free pages):
//
//	densityapp --state DIR --sidecar PATH --socket-dir DIR --idle 300ms
//
// It runs as its own process so the figure holds only what an application
// embedding the host pays, not the bench's peers.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/procstat"
)

// result is the JSON line printed on success.
type result struct {
	Skills          int `json:"skills"`
	Called          int `json:"called"`
	RSSKiB          int `json:"rss_kib"`
	RSSBeforeKiB    int `json:"rss_before_kib"`
	PeakSidecarsKiB int `json:"peak_sidecars_kib"`
	// HeapLiveKiB is the Go heap the last GC found live, and
	// RSSReleasedKiB the RSS once the runtime returned every free page
	// (debug.FreeOSMemory), which a long-running process approaches as
	// its background scavenger catches up.
	HeapLiveKiB    int `json:"heap_live_kib"`
	RSSReleasedKiB int `json:"rss_released_kib"`
	// RSSSettledKiB is the RSS --settle after the reaping, with nothing
	// forced: what the runtime's background scavenger gave back by then.
	RSSSettledKiB int `json:"rss_settled_kib"`
}

func main() {
	state := flag.String("state", "", "state directory with the installed skills")
	sidecar := flag.String("sidecar", "", "palyra-sidecar binary")
	sockDir := flag.String("socket-dir", "", "directory for the sidecars' socket directories")
	idle := flag.Duration("idle", 300*time.Millisecond, "idle timeout after which sidecars are reaped")
	settle := flag.Duration("settle", 10*time.Second, "how long after the reaping the idle process is measured again (0: not measured)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := run(ctx, *state, *sidecar, *sockDir, *idle, *settle)
	if err != nil {
		fmt.Fprintln(os.Stderr, "densityapp:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		os.Exit(1)
	}
}

func run(ctx context.Context, state, sidecar, sockDir string, idle, settle time.Duration) (r result, err error) {
	if state == "" || sidecar == "" {
		return r, errors.New("--state and --sidecar are required")
	}
	h, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecar,
		Supervisor: supervisor.Config{SocketDir: sockDir, IdleTimeout: idle}})
	if err != nil {
		return r, err
	}
	defer func() {
		if cerr := h.Close(context.Background()); cerr != nil && err == nil {
			err = cerr
		}
	}()
	skills, err := h.List(ctx, host.ListRequest{})
	if err != nil {
		return r, err
	}
	r.Skills = skills.Count
	runtime.GC()
	if r.RSSBeforeKiB, err = procstat.RSSKiB(os.Getpid()); err != nil {
		return r, err
	}
	var pids []int
	for _, s := range skills.Entries {
		res, err := h.Call(ctx, host.CallRequest{SkillID: s.SkillID, ToolID: "bench.trivial", Input: json.RawMessage(`{"text":"hello"}`)})
		if err != nil {
			return r, fmt.Errorf("call %s: %w", s.SkillID, err)
		}
		pids = append(pids, res.SidecarPID)
		r.Called++
	}
	for _, pid := range pids {
		if kib, err := procstat.RSSKiB(pid); err == nil { // a sidecar may already be reaped
			r.PeakSidecarsKiB += kib
		}
	}
	// Wait for the reaper: every sidecar idle for longer than idle is
	// stopped.
	for {
		states, err := h.Sidecars(ctx)
		if err != nil {
			return r, err
		}
		running := 0
		for _, st := range states {
			if st.Status != supervisor.StatusStopped {
				running++
			}
		}
		if running == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return r, fmt.Errorf("%d sidecars still running: %w", running, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond)
	runtime.GC()
	if r.RSSKiB, err = procstat.RSSKiB(os.Getpid()); err != nil {
		return r, err
	}
	if settle > 0 {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(settle):
		}
		if r.RSSSettledKiB, err = procstat.RSSKiB(os.Getpid()); err != nil {
			return r, err
		}
	}
	debug.FreeOSMemory()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	r.HeapLiveKiB = int(live[0].Value.Uint64() >> 10)
	r.RSSReleasedKiB, err = procstat.RSSKiB(os.Getpid())
	return r, err
}
