package wasmrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt/runtimetest"
)

// TestHammer runs 8 goroutines × 200 calls, each in a fresh instance, over
// a mix of succeeding and failing fixtures (traps, fuel exhaustion, tool
// errors, capability calls) with and without prepared instances, on one
// engine. Run it with -race.
func TestHammer(t *testing.T) {
	e := newEngine(t, wasmrt.Config{EpochTick: time.Millisecond})
	broker := &runtimetest.Broker{}
	broker.Put("p", "k", []byte("v"))
	type job struct {
		m     *wasmrt.Module
		inv   wasmrt.Invocation
		check func(res *wasmrt.Result, err error) error
	}
	ok := func(want string) func(*wasmrt.Result, error) error {
		return func(res *wasmrt.Result, err error) error {
			if err != nil {
				return err
			}
			if want != "" && string(res.Output) != want {
				return fmt.Errorf("output %s, want %s", res.Output, want)
			}
			return nil
		}
	}
	is := func(target error) func(*wasmrt.Result, error) error {
		return func(_ *wasmrt.Result, err error) error {
			if !errors.Is(err, target) {
				return fmt.Errorf("err = %v, want %v", err, target)
			}
			return nil
		}
	}
	jobs := []job{
		{loadFixture(t, e, "echo", wasmrt.ModuleConfig{PreparedInstances: 2}), wasmrt.Invocation{Input: json.RawMessage(`[1,2,3]`)}, ok("")},
		{loadFixture(t, e, "reactor", wasmrt.ModuleConfig{PreparedInstances: 2}), wasmrt.Invocation{}, ok("true")},
		{loadFixture(t, e, "reactor", wasmrt.ModuleConfig{}), wasmrt.Invocation{}, ok("true")},
		{loadFixture(t, e, "unreachable", wasmrt.ModuleConfig{PreparedInstances: 1}), wasmrt.Invocation{}, is(wasmrt.ErrTrap)},
		{loadFixture(t, e, "loop", wasmrt.ModuleConfig{}), wasmrt.Invocation{Limits: wasmrt.Limits{Fuel: 50_000}}, is(wasmrt.ErrFuelExhausted)},
		{loadFixture(t, e, "tool_error", wasmrt.ModuleConfig{}), wasmrt.Invocation{}, is(wasmrt.ErrToolError)},
		{loadFixture(t, e, "capability", wasmrt.ModuleConfig{PreparedInstances: 1}),
			wasmrt.Invocation{Broker: broker, Grants: wasmrt.Grants{StoragePrefixes: []string{"p"}}}, ok(`{"found":true,"value_base64":"dg=="}`)},
		{loadFixture(t, e, "handles", wasmrt.ModuleConfig{}),
			wasmrt.Invocation{Grants: wasmrt.Grants{HTTPHosts: []string{"a", "b"}, Channels: []string{"c"}}}, ok(`{"exit_code":3}`)},
		{loadFixture(t, e, "stack_overflow", wasmrt.ModuleConfig{}), wasmrt.Invocation{}, is(wasmrt.ErrTrap)},
		{loadFixture(t, e, "memory_initial", wasmrt.ModuleConfig{}), wasmrt.Invocation{}, is(wasmrt.ErrMemoryLimit)},
	}
	const goroutines, calls = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				j := jobs[(g*7+i)%len(jobs)]
				res, err := j.m.Invoke(context.Background(), j.inv)
				if res == nil {
					errs <- errors.New("nil result")
					return
				}
				if cerr := j.check(res, err); cerr != nil {
					errs <- fmt.Errorf("goroutine %d call %d: %w", g, i, cerr)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
