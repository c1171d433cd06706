package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/peers"
	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// buildExtismGuest builds the Extism-ABI twin of the echo example.
func buildExtismGuest(ctx context.Context, dir string) ([]byte, error) {
	p, err := peers.BuildExtismGuest(ctx, dir)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// hostCall is a contender call of tool on skill through h, checking the
// output.
func hostCall(h *host.Host, skillID, toolID string, input []byte, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		res, err := h.Call(ctx, host.CallRequest{SkillID: skillID, ToolID: toolID, Input: input})
		if err != nil {
			return err
		}
		if string(res.Output) != want {
			return fmt.Errorf("output %s, want %s", res.Output, want)
		}
		return nil
	}
}

// peerCall is a contender call of a peer runner, checking the output.
func peerCall(r peers.Runner) func(context.Context) error {
	return func(ctx context.Context) error {
		out, err := r.Call(ctx, echoInput)
		if err != nil {
			return err
		}
		if string(out) != echoOutput {
			return fmt.Errorf("output %s, want %s", out, echoOutput)
		}
		return nil
	}
}

// scenarioA: the echo example through host.Call against the same logic
// in-process on wasmtime-go, wazero and the Extism go-sdk; and the echo
// example built with the SDK before the scenario-A change (the profile's
// before/after).
func scenarioA(ctx context.Context, e *env) ([]report.Row, error) {
	h, _, closeHost, err := e.openHost(ctx, "a", true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	for _, s := range []struct {
		id   string
		wasm []byte
	}{{"palyra.echo", e.echoWasm}, {"palyra.echo_before", e.echoBeforeWasm}} {
		data, err := e.echoArtifact(s.id, s.wasm)
		if err != nil {
			return nil, err
		}
		if _, err := e.install(ctx, h, data); err != nil {
			return nil, err
		}
	}
	wt, err := peers.NewWasmtime(e.echoWasm)
	if err != nil {
		return nil, err
	}
	defer wt.Close(ctx)
	wz, err := peers.NewWazero(ctx, e.echoWasm)
	if err != nil {
		return nil, err
	}
	defer wz.Close(ctx)
	ex, err := peers.NewExtism(ctx, e.extismWasm)
	if err != nil {
		return nil, err
	}
	defer ex.Close(ctx)

	ours := &contender{name: "host.Call, echo (sidecar, prepared instances)", call: hostCall(h, "palyra.echo", "palyra.echo", echoInput, echoOutput)}
	before := &contender{name: "host.Call, echo built with the SDK before the change", call: hostCall(h, "palyra.echo_before", "palyra.echo", echoInput, echoOutput)}
	cwt := &contender{name: wt.Name() + ", fresh instance", call: peerCall(wt)}
	cwz := &contender{name: wz.Name() + ", fresh instance", call: peerCall(wz)}
	cex := &contender{name: ex.Name() + ", fresh instance", call: peerCall(ex)}
	if err := interleave(ctx, e.opts.n(5, 20), e.opts.n(40, 400), ours, before, cwt, cwz, cex); err != nil {
		return nil, err
	}
	o := ours.timing(time.Microsecond)
	return []report.Row{
		compare("A", "Go-guest tool call vs in-process wasmtime-go", o, cwt.timing(time.Microsecond), ratioGoal("≤ 0.6 × in-process wasmtime", 0.6), ""),
		compare("A", "Go-guest tool call vs Extism go-sdk", o, cex.timing(time.Microsecond), ratioGoal("stretch: ≤ 0.25 × Extism", 0.25), ""),
		compare("A", "Go-guest tool call vs wazero", o, cwz.timing(time.Microsecond), nil, "context: the same module on wazero"),
		compare("A", "Go-guest tool call: SDK after vs before the profiled change", o, before.timing(time.Microsecond), nil,
			"the profile's before/after: the SDK warms its JSON codecs in _initialize and decodes the input document without reflection"),
	}, nil
}

// scenarioB: a trivial WAT tool through host.Call against a raw go-plugin
// gRPC unary call with the same payload size.
func scenarioB(ctx context.Context, e *env) ([]report.Row, error) {
	h, _, closeHost, err := e.openHost(ctx, "b", true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	data, err := e.trivialArtifact("trivial")
	if err != nil {
		return nil, err
	}
	inst, err := e.install(ctx, h, data)
	if err != nil {
		return nil, err
	}
	// The same host with each call a unary Invoke, as before the Calls
	// stream: the stream's before/after, side by side.
	hu, _, closeUnary, err := e.openHost(ctx, "b-unary", true, supervisor.Config{IdleTimeout: -1, UnaryCalls: true})
	if err != nil {
		return nil, err
	}
	defer closeUnary()
	if _, err := e.install(ctx, hu, data); err != nil {
		return nil, err
	}
	// The same host with one prepared instance: the preparer is woken
	// after every call, as before it refilled in batches.
	h1, _, closeOne, err := e.openHost(ctx, "b-one", true, supervisor.Config{IdleTimeout: -1, PreparedInstances: 1})
	if err != nil {
		return nil, err
	}
	defer closeOne()
	if _, err := e.install(ctx, h1, data); err != nil {
		return nil, err
	}
	raw, err := spawnRaw(ctx, e.rawPlugin)
	if err != nil {
		return nil, err
	}
	defer raw.kill()

	ours := &contender{name: "host.Call, trivial WAT tool", call: hostCall(h, "bench.trivial", "bench.trivial", echoInput, trivialOutput)}
	one := &contender{name: "host.Call, one prepared instance (the preparer woken after every call)", call: hostCall(h1, "bench.trivial", "bench.trivial", echoInput, trivialOutput)}
	peer := &contender{name: "raw go-plugin gRPC unary, same payload", call: raw.invoke}
	unary := &contender{name: "host.Call, each call a unary Invoke (before the Calls stream)", call: hostCall(hu, "bench.trivial", "bench.trivial", echoInput, trivialOutput)}
	checks := &contender{name: "host-side checks alone (PrepareCall + FinishRemoteCall)", call: hostChecks(h, "bench.trivial", inst.Version, echoInput, trivialOutput)}
	if err := interleave(ctx, e.opts.n(20, 200), e.opts.n(300, 3000), ours, peer, unary, one, checks); err != nil {
		return nil, err
	}
	return []report.Row{
		compare("B", "trivial WAT tool call vs raw go-plugin RPC", ours.timing(time.Microsecond), peer.timing(time.Microsecond), ratioGoal("≤ 1.3 × raw go-plugin RPC", 1.3), ""),
		compare("B", "trivial WAT tool call: Calls stream (after) vs unary Invoke (before)", ours.timing(time.Microsecond), unary.timing(time.Microsecond), nil,
			"before/after of the Calls stream: the same host code, supervisor.Config.UnaryCalls on the peer"),
		compare("B", "trivial WAT tool call: batched refill (after) vs a refill after every call (before)", ours.timing(time.Microsecond), one.timing(time.Microsecond), nil,
			"before/after of the batched refill: the peer's sidecars keep one prepared instance (supervisor.Config.PreparedInstances 1), so their preparer is woken after every call, as it was before; ours grow the pool with the call rate (default 8) and wake it once per batch"),
		compare("B", "check cost: the host-side checks alone vs the whole call", checks.timing(time.Microsecond), ours.timing(time.Microsecond), nil,
			"status, trust (artifact re-verified, cached), policy, tool, input and output schemas, output cap; measured in-process"),
	}, nil
}

// hostChecks runs the host's checks of a call of toolID (= the skill id)
// without the call: PrepareCall before, FinishRemoteCall on a result
// carrying want.
func hostChecks(h *host.Host, skillID, version string, input []byte, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := h.PrepareCall(ctx, host.CallRequest{SkillID: skillID, ToolID: skillID, Input: input}); err != nil {
			return err
		}
		res, err := h.FinishRemoteCall(ctx, &host.CallResult{SkillID: skillID, Version: version, ToolID: skillID, Output: []byte(want)})
		if err != nil {
			return err
		}
		if string(res.Output) != want {
			return fmt.Errorf("checked output %s, want %s", res.Output, want)
		}
		return nil
	}
}
