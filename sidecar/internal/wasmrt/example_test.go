package wasmrt_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

func Example() {
	e, err := wasmrt.NewEngine(wasmrt.Config{})
	if err != nil {
		panic(err)
	}
	defer e.Close()

	// A Palyra-style module: its result is {"exit_code": N}.
	wasm, err := wasmrt.Wat2Wasm(`(module
	  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $count (result i32)))
	  (func (export "run") (result i32) (call $count)))`)
	if err != nil {
		panic(err)
	}
	m, err := e.Load(wasm, wasmrt.ModuleConfig{})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	res, err := m.Invoke(context.Background(), wasmrt.Invocation{
		Grants: wasmrt.Grants{HTTPHosts: []string{"api.example.com", "b.example.com"}},
	})
	fmt.Println(string(res.Output), err)
	// Output: {"exit_code":2} <nil>
}

func ExampleModule_Invoke_errors() {
	e, _ := wasmrt.NewEngine(wasmrt.Config{})
	defer e.Close()
	wasm, _ := wasmrt.Wat2Wasm(`(module (func (export "run") (result i32) (loop $l (br $l)) (i32.const 0)))`)
	m, _ := e.Load(wasm, wasmrt.ModuleConfig{Limits: wasmrt.Limits{Fuel: 5000}})
	defer m.Close()

	res, err := m.Invoke(context.Background(), wasmrt.Invocation{})
	fmt.Println(errors.Is(err, wasmrt.ErrFuelExhausted), errcode.Of(err), res.Stats.FuelConsumed)
	// Output: true fuel_exhausted 5000
}
