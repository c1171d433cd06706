package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
)

// coldSkill is a skill whose sidecar is stopped before each timed call.
type coldSkill struct {
	h           *host.Host
	cacheDir    string // cleared before each call when clearCache
	id, version string
	tool        string
	input       []byte
	want        string
	clearCache  bool
	// warm: the host keeps a spare (the default), and each call waits,
	// untimed, until it is ready again. (It keeps standbys too, but a
	// skill called once after its start is not in use and gets none.)
	warm bool
}

func (c *coldSkill) prep(context.Context) error {
	c.h.StopSidecar(c.id, c.version)
	if c.clearCache {
		entries, err := os.ReadDir(c.cacheDir)
		if err != nil {
			return err
		}
		for _, en := range entries {
			if err := os.RemoveAll(c.cacheDir + "/" + en.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *coldSkill) call(ctx context.Context) error {
	if err := hostCall(c.h, c.id, c.tool, c.input, c.want)(ctx); err != nil {
		return err
	}
	states, err := c.h.Sidecars(ctx)
	if err != nil {
		return err
	}
	for _, st := range states {
		if st.SkillID == c.id && st.Version == c.version {
			if st.CacheHit == c.clearCache {
				return fmt.Errorf("sidecar start: cache hit %v, want %v", st.CacheHit, !c.clearCache)
			}
			return nil
		}
	}
	return fmt.Errorf("no sidecar of %s %s after a call", c.id, c.version)
}

// settle waits, untimed and for at most 10 s, until the warm host's spare
// sidecar, refilled in the background after a start, is ready: one still
// starting would take the CPU from the next contender's call. (A skill
// called once after its start gets no standby: it is not in use.)
func (c *coldSkill) settle() {
	if !c.warm {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.h.ReadySpares() == 0 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
}

// scenarioC: spawn to first reply against a raw go-plugin start to first
// RPC: with the precompiled cache (the goal) and without it, on hosts that
// keep no spare and no standby so that every call spawns its sidecar; and,
// for context, the first call of a stopped skill on a host with the
// default spare and standby, which takes the ready spare.
func scenarioC(ctx context.Context, e *env) ([]report.Row, error) {
	type hostKind struct {
		name  string
		clear bool
		warm  bool
	}
	kinds := []hostKind{{"c-precompiled", false, false}, {"c-cleared", true, false}, {"c-warm", false, true}}
	hosts := map[string]*host.Host{}
	caches := map[string]string{}
	for _, k := range kinds {
		sc := supervisor.Config{IdleTimeout: -1}
		if !k.warm {
			sc.SpareSidecars, sc.Standby = -1, -1
		}
		h, state, closeHost, err := e.openHost(ctx, k.name, true, sc)
		if err != nil {
			return nil, err
		}
		defer closeHost()
		hosts[k.name], caches[k.name] = h, statedir.At(state).ModuleCache()
		if err := e.installTrivialAndEcho(ctx, h); err != nil {
			return nil, err
		}
	}
	skill := func(k hostKind, goGuest bool) *contender {
		c := &coldSkill{h: hosts[k.name], cacheDir: caches[k.name], id: "bench.trivial", version: "1.0.0", tool: "bench.trivial",
			input: echoInput, want: trivialOutput, clearCache: k.clear, warm: k.warm}
		name := "host.Call on a stopped skill, trivial WAT"
		if goGuest {
			c.id, c.version, c.tool, c.want = "palyra.echo", "0.1.0", "palyra.echo", echoOutput
			name = "host.Call on a stopped skill, echo Go guest"
		}
		switch {
		case k.clear:
			name += ", precompiled cache cleared"
		case k.warm:
			name += ", precompiled, a spare sidecar ready"
		default:
			name += ", precompiled"
		}
		return &contender{name: name, prep: c.prep, call: c.call, after: c.settle}
	}
	rawStart := func() *contender {
		var rc *rawClient
		return &contender{
			name: "raw go-plugin start to first RPC",
			call: func(ctx context.Context) (err error) {
				if rc, err = spawnRaw(ctx, e.rawPlugin); err != nil {
					return err
				}
				return rc.invoke(ctx)
			},
			after: func() {
				if rc != nil {
					rc.kill()
					rc = nil
				}
			},
		}
	}

	watPre, echoPre, watWarm, echoWarm, raw := skill(kinds[0], false), skill(kinds[0], true), skill(kinds[2], false), skill(kinds[2], true), rawStart()
	if err := interleave(ctx, e.opts.n(1, 2), e.opts.n(6, 40), watPre, echoPre, watWarm, echoWarm, raw); err != nil {
		return nil, err
	}
	watCold, echoCold, raw2 := skill(kinds[1], false), skill(kinds[1], true), rawStart()
	if err := interleave(ctx, e.opts.n(0, 1), e.opts.n(1, 10), watCold, echoCold, raw2); err != nil {
		return nil, err
	}
	const spawned = "no spare or standby: the call spawns its sidecar"
	return []report.Row{
		compare("C", "cold start, trivial WAT skill, precompiled", watPre.timing(time.Millisecond), raw.timing(time.Millisecond), ratioGoal("≤ 1.5 × raw go-plugin start", 1.5), spawned),
		compare("C", "cold start, echo Go-guest skill, precompiled", echoPre.timing(time.Millisecond), raw.timing(time.Millisecond), ratioGoal("≤ 1.5 × raw go-plugin start", 1.5),
			spawned+"; includes the Go guest's _initialize on the first call"),
		compare("C", "first call of a stopped trivial WAT skill, spare ready", watWarm.timing(time.Millisecond), raw.timing(time.Millisecond), nil,
			"context: the default spare and standby; the call loads the skill into the ready spare"),
		compare("C", "first call of a stopped echo Go-guest skill, spare ready", echoWarm.timing(time.Millisecond), raw.timing(time.Millisecond), nil,
			"context: the default spare and standby; the call loads the skill into the ready spare"),
		compare("C", "cold start, trivial WAT skill, cache cleared", watCold.timing(time.Millisecond), raw2.timing(time.Millisecond), nil, "context: compile on the sidecar's start"),
		compare("C", "cold start, echo Go-guest skill, cache cleared", echoCold.timing(time.Millisecond), raw2.timing(time.Millisecond), nil, "context: compiling the 3.7 MB Go guest dominates"),
	}, nil
}

// scenarioF: verify + audit + install of the echo example's artifact
// (about 4 MiB of payload), without compiling (an install-only host) and
// with the precompile step (a host that knows its sidecar binary).
func scenarioF(ctx context.Context, e *env) ([]report.Row, error) {
	data, err := e.echoArtifact("palyra.echo", e.echoWasm)
	if err != nil {
		return nil, err
	}
	admit := func(name string, withSidecar bool) (*contender, func(), error) {
		h, _, closeHost, err := e.openHost(ctx, name, withSidecar, supervisor.Config{IdleTimeout: -1})
		if err != nil {
			return nil, nil, err
		}
		installed := false
		c := &contender{
			name: "install of the echo artifact (verify + audit + policy + stage + commit)",
			prep: func(ctx context.Context) error {
				if !installed {
					return nil
				}
				_, err := h.Remove(ctx, host.RemoveRequest{SkillID: "palyra.echo"})
				return err
			},
			call: func(ctx context.Context) error {
				_, err := e.install(ctx, h, data)
				installed = err == nil
				return err
			},
		}
		if withSidecar {
			c.name += " + precompile"
		}
		return c, closeHost, nil
	}
	without, close1, err := admit("f-nocompile", false)
	if err != nil {
		return nil, err
	}
	defer close1()
	with, close2, err := admit("f-compile", true)
	if err != nil {
		return nil, err
	}
	defer close2()
	if err := interleave(ctx, 1, e.opts.n(3, 15), without, with); err != nil {
		return nil, err
	}
	note := fmt.Sprintf("artifact %.2f MB compressed, module %.2f MB", float64(len(data))/1e6, float64(len(e.echoWasm))/1e6)
	return []report.Row{
		absolute("F", "admission of a 4 MiB artifact, compile excluded", without.timing(time.Millisecond), valueGoal("≤ 50 ms", "<=", 50), note),
		absolute("F", "admission of a 4 MiB artifact, compile included", with.timing(time.Millisecond), nil, "context: precompile runs `palyra-sidecar precompile` in a child process"),
	}, nil
}
