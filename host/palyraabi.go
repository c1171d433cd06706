package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/sdk/abi"
)

// The exit-code rule (docs/palyra-compat.md, "Palyra modules"; RATIONALE.md,
// "Palyra modules and output_schema").
//
// A module written for Palyra's ABI (facts §7.2: `run: () -> i32`, at most
// the capability-handle imports) cannot write output: the output buffer is
// reached only through palyra:skills/host@1's output-write. Its result is
// the exit code, which the sidecar reports as {"exit_code": N} (sdk/ABI.md
// §4, §8). Checking that synthesized document against a tool's
// output_schema, written for what the tool would return under Palyra's
// documented (never implemented) input/output flow, fails every call of
// Palyra's own echo-http example with invalid_output.
//
// So: a module that imports nothing from palyra:skills/host@1 is a Palyra
// module, decided here on the trusted side from the verified module bytes
// (never from anything the sidecar says). Its result must be exactly
// {"exit_code": N} with N the call's exit code, and the output_schema is
// not applied to it. A module that imports palyra:skills/host@1 is
// validated against its output_schema as before: output validation is not
// weakened for any module that can write output.

// isPalyraABI reports whether module is a Palyra-ABI module: a WebAssembly
// binary that imports nothing from abi.ModuleHost. A module that does not
// parse is not one (its output is then checked against the schema, the
// strict side; the audit has refused such a module anyway).
func isPalyraABI(module []byte) bool {
	m, err := wasmbin.Parse(module, wasmbin.DefaultLimits())
	if err != nil {
		return false
	}
	for _, imp := range m.Imports {
		if imp.Module == abi.ModuleHost {
			return false
		}
	}
	return true
}

// checkCallOutput checks the output of a call of toolID: a Palyra-ABI
// module's (palyraABI) with checkExitCodeResult, any other with
// checkOutput against sch.
func (h *Host) checkCallOutput(res *Result, toolID string, sch *manifest.ToolSchemas, palyraABI bool) error {
	if palyraABI {
		return checkExitCodeResult(res, toolID)
	}
	return h.checkOutput(res, toolID, sch)
}

// checkExitCodeResult checks the result of a Palyra-ABI module: its output
// must be exactly the document the sidecar synthesizes from the exit code,
// {"exit_code": N} with N = res.ExitCode, and nothing else (a sidecar that
// claims more output than a Palyra module can write is refused, as any
// output that fails its check). The output is cleared when it fails.
func checkExitCodeResult(res *Result, toolID string) error {
	want := exitCodeDocument(res.ExitCode)
	if bytes.Equal(bytes.TrimSpace(res.Output), want) {
		res.Output = want
		return nil
	}
	var got struct {
		ExitCode *int32 `json:"exit_code"`
	}
	dec := json.NewDecoder(bytes.NewReader(res.Output))
	dec.DisallowUnknownFields()
	err := dec.Decode(&got)
	if err == nil && dec.More() {
		err = fmt.Errorf("trailing data")
	}
	res.Output = nil
	switch {
	case err != nil:
		return fmt.Errorf("host: %w: %s: a Palyra-ABI module's result must be {\"exit_code\": N}: %v", ErrInvalidOutput, toolID, err)
	case got.ExitCode == nil || *got.ExitCode != res.ExitCode:
		return fmt.Errorf("host: %w: %s: a Palyra-ABI module's result must be {\"exit_code\": %d}, the call's exit code", ErrInvalidOutput, toolID, res.ExitCode)
	}
	// The same value in another spelling (spaces, key order): keep the
	// canonical form.
	res.Output = want
	return nil
}

// exitCodeDocument is the result of a Palyra-ABI module that returned
// code, as the sidecar writes it (sidecar/internal/wasmrt finish).
func exitCodeDocument(code int32) json.RawMessage {
	return json.RawMessage(`{"exit_code":` + strconv.Itoa(int(code)) + `}`)
}
