package runtime_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sidecar/runtime"
)

func Example() {
	e, err := runtime.NewEngine(runtime.Config{})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	// A Palyra-style module: its result is {"exit_code": N}.
	wasm, err := runtime.Wat2Wasm(`(module
	  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $count (result i32)))
	  (func (export "run") (result i32) (call $count)))`)
	if err != nil {
		panic(err)
	}
	m, err := e.Load(wasm, runtime.ModuleConfig{})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	res, err := m.Invoke(context.Background(), runtime.Invocation{
		Grants: runtime.Grants{HTTPHosts: []string{"api.example.com", "b.example.com"}},
	})
	fmt.Println(string(res.Output), err)
	// Output: {"exit_code":2} <nil>
}

func ExampleModule_Invoke_errors() {
	e, _ := runtime.NewEngine(runtime.Config{})
	defer e.Close()
	wasm, _ := runtime.Wat2Wasm(`(module (func (export "run") (result i32) (loop $l (br $l)) (i32.const 0)))`)
	m, _ := e.Load(wasm, runtime.ModuleConfig{Limits: runtime.Limits{Fuel: 5000}})
	defer m.Close()

	res, err := m.Invoke(context.Background(), runtime.Invocation{})
	fmt.Println(errors.Is(err, runtime.ErrFuelExhausted), errcode.Of(err), res.Stats.FuelConsumed)
	// Output: true fuel_exhausted 5000
}
