package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sidecar/runtime"
	"github.com/palyra-go/palyra/sidecar/runtime/runtimetest"
)

// TestHammer runs 8 goroutines × 200 calls, each in a fresh instance, over
// a mix of succeeding and failing fixtures (traps, fuel exhaustion, tool
// errors, capability calls) with and without prepared instances, on one
// engine. Run it with -race.
func TestHammer(t *testing.T) {
	e := newEngine(t, runtime.Config{EpochTick: time.Millisecond})
	broker := &runtimetest.Broker{}
	broker.Put("p", "k", []byte("v"))
	type job struct {
		m     *runtime.Module
		inv   runtime.Invocation
		check func(res *runtime.Result, err error) error
	}
	ok := func(want string) func(*runtime.Result, error) error {
		return func(res *runtime.Result, err error) error {
			if err != nil {
				return err
			}
			if want != "" && string(res.Output) != want {
				return fmt.Errorf("output %s, want %s", res.Output, want)
			}
			return nil
		}
	}
	is := func(target error) func(*runtime.Result, error) error {
		return func(_ *runtime.Result, err error) error {
			if !errors.Is(err, target) {
				return fmt.Errorf("err = %v, want %v", err, target)
			}
			return nil
		}
	}
	jobs := []job{
		{loadFixture(t, e, "echo", runtime.ModuleConfig{PreparedInstances: 2}), runtime.Invocation{Input: json.RawMessage(`[1,2,3]`)}, ok("")},
		{loadFixture(t, e, "reactor", runtime.ModuleConfig{PreparedInstances: 2}), runtime.Invocation{}, ok("true")},
		{loadFixture(t, e, "reactor", runtime.ModuleConfig{}), runtime.Invocation{}, ok("true")},
		{loadFixture(t, e, "unreachable", runtime.ModuleConfig{PreparedInstances: 1}), runtime.Invocation{}, is(runtime.ErrTrap)},
		{loadFixture(t, e, "loop", runtime.ModuleConfig{}), runtime.Invocation{Limits: runtime.Limits{Fuel: 50_000}}, is(runtime.ErrFuelExhausted)},
		{loadFixture(t, e, "tool_error", runtime.ModuleConfig{}), runtime.Invocation{}, is(runtime.ErrToolError)},
		{loadFixture(t, e, "capability", runtime.ModuleConfig{PreparedInstances: 1}),
			runtime.Invocation{Broker: broker, Grants: runtime.Grants{StoragePrefixes: []string{"p"}}}, ok(`{"found":true,"value_base64":"dg=="}`)},
		{loadFixture(t, e, "handles", runtime.ModuleConfig{}),
			runtime.Invocation{Grants: runtime.Grants{HTTPHosts: []string{"a", "b"}, Channels: []string{"c"}}}, ok(`{"exit_code":3}`)},
		{loadFixture(t, e, "stack_overflow", runtime.ModuleConfig{}), runtime.Invocation{}, is(runtime.ErrTrap)},
		{loadFixture(t, e, "memory_initial", runtime.ModuleConfig{}), runtime.Invocation{}, is(runtime.ErrMemoryLimit)},
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
