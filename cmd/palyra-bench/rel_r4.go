package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/supervisor"
)

// guestCase is one hostile guest of R4: a testdata/wasm fixture with its
// quotas, and the outcome that holds: an error code (with wantMsg in its
// message), or a successful call whose output is wantOutput (the guest was
// bounded without failing).
type guestCase struct {
	name, module, quotas string
	input                []byte // nil: {}
	// wantCode may list alternatives ("timeout|fuel_exhausted"); a
	// refusal at install is "refused at install: CODE".
	wantCode   string
	wantMsg    string // the error message must contain it, when set
	wantOutput string
}

var guestCases = []guestCase{
	{name: "infinite loop, small fuel", module: "loop.wasm", quotas: "fuel_budget = 100000", wantCode: "fuel_exhausted"},
	{name: "infinite loop, policy's fuel cap, 20 ms deadline", module: "loop.wasm", quotas: "fuel_budget = 100000000\nwall_clock_timeout_ms = 20", wantCode: "timeout|fuel_exhausted"},
	{name: "sleep past the deadline", module: "sleep.wasm", quotas: "wall_clock_timeout_ms = 300", wantCode: "timeout"},
	{name: "memory bomb (grow to the limit)", module: "memory_grow.wasm", wantOutput: `{"exit_code":1024}`},
	{name: "memory bomb (initial 125 MiB)", module: "memory_initial.wasm", wantCode: "refused at install: audit_failed"},
	{name: "table bomb (200,000 elements)", module: "table_initial.wasm", wantCode: "refused at install: audit_failed"},
	{name: "stack overflow", module: "stack_overflow.wasm", wantCode: "trap", wantMsg: "stack"},
	{name: "trap (unreachable)", module: "unreachable.wasm", wantCode: "trap", wantMsg: "unreachable"},
	{name: "output flood (2 MiB)", module: "output_flood.wasm", wantCode: "output_too_large"},
	{name: "host-call flood (1,000 calls)", module: "hostcall_flood.wasm", wantOutput: "744"},
	{name: "log flood", module: "log_spammer.wasm", wantOutput: "null"},
	{name: "pointers outside memory", module: "bad_pointers.wasm", wantOutput: "true"},
	{name: "output not JSON", module: "not_json.wasm", wantCode: "invalid_output"},
	{name: "oversized input (MaxInputBytes + 1)", module: "echo.wasm", input: oversizedInput(), wantCode: "input_too_large"},
}

// oversizedInput is a JSON object one byte over host.MaxInputBytes.
func oversizedInput() []byte {
	pad := host.MaxInputBytes + 1 - len(`{"text":""}`)
	return []byte(`{"text":"` + strings.Repeat("a", pad) + `"}`)
}

// relHostileGuests is R4: each hostile guest is called once (each its own
// skill and sidecar) while two callers keep calling a good skill; every
// hostile call must end with its typed code (or bounded output), and the
// good skill's calls must not fail.
func relHostileGuests(ctx context.Context, e *env) ([]relRow, error) {
	h, _, closeHost, err := e.openHost(ctx, "r4", true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	good := r1Skill{id: "bench.r4good", tool: "bench.trivial", kind: "WAT", input: echoInput, want: trivialOutput}
	data, err := e.trivialArtifact("r4good")
	if err != nil {
		return nil, err
	}
	if _, err := e.install(ctx, h, data); err != nil {
		return nil, err
	}
	if err := callOnce(ctx, h, good); err != nil {
		return nil, err
	}

	var goodCalls, goodFails atomic.Int64
	var firstGoodErr atomic.Value
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lctx.Err() == nil {
				err := callOnce(lctx, h, good)
				if lctx.Err() != nil {
					return
				}
				goodCalls.Add(1)
				if err != nil {
					goodFails.Add(1)
					firstGoodErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()

	row := relRow{Scenario: "R4", Title: "hostile guests (a good skill called alongside)"}
	var seen []string
	for i, c := range guestCases {
		id := fmt.Sprintf("bench.guest%d", i)
		got, msg, err := runGuest(ctx, e, h, id, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		seen = append(seen, fmt.Sprintf("%s → %s", c.name, got))
		want := c.wantCode
		if want == "" {
			want = "output " + c.wantOutput
		}
		ok := slices.Contains(strings.Split(want, "|"), got) && strings.Contains(msg, c.wantMsg)
		row.check(ok, "%s: %s (%s), want %s", c.name, got, msg, want)
	}
	// The good skill keeps being called a little after the last case.
	if err := callOnce(ctx, h, good); err != nil {
		goodFails.Add(1)
	}
	stop()
	wg.Wait()
	row.check(goodFails.Load() == 0, "good skill: %d failures (first: %v)", goodFails.Load(), firstGoodErr.Load())
	row.Figures = append(row.Figures, strings.Join(seen, "; "),
		fmt.Sprintf("good skill: %d failures in %d calls (must be 0)", goodFails.Load(), goodCalls.Load()))
	return []relRow{row}, nil
}

// runGuest installs c as skill id on h and calls it once. It returns the
// call's error code and message, "output X" for a success, or "refused at
// install: CODE" when the install refused the module.
func runGuest(ctx context.Context, e *env, h *host.Host, id string, c guestCase) (got, msg string, err error) {
	var data []byte
	if c.module == "echo.wasm" {
		data, err = e.echoArtifact(id, e.echoWasm)
	} else {
		data, err = e.fixtureArtifact(id, c.module, c.quotas)
	}
	if err != nil {
		return "", "", err
	}
	res, err := h.Install(ctx, e.installRequest(data))
	if err != nil {
		return "refused at install: " + codeOf(err), err.Error(), nil
	}
	if res.Status != "active" {
		return fmt.Sprintf("refused at install: %s %v", res.Status, res.Reasons), "", nil
	}
	tool := "bench.run"
	if c.module == "echo.wasm" {
		tool = "palyra.echo"
	}
	in := c.input
	if in == nil {
		in = []byte(`{}`)
	}
	out, err := h.Call(ctx, host.CallRequest{SkillID: id, ToolID: tool, Input: json.RawMessage(in)})
	if err != nil {
		return codeOf(err), err.Error(), nil
	}
	return "output " + string(bytes.TrimSpace(out.Output)), "", nil
}

// codeOf is err's code, or "untyped: <message>" when it has none.
func codeOf(err error) string {
	if c := errcode.Of(err); c != "" {
		return c
	}
	return "untyped: " + err.Error()
}
