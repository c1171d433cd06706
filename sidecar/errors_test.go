package sidecar_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sidecar"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// TestSidecarCodesHaveOneSentinel covers the codes only the sidecar process
// links (the runtime's and the sidecar's own): the host sees them over gRPC
// as *sidecarplugin.Error, which must match the code's one sentinel and no
// other; and the outcomes the supervisor reports too are the shared
// sentinels, not copies.
func TestSidecarCodesHaveOneSentinel(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want error
	}{
		{"wasmrt.ErrTimeout", wasmrt.ErrTimeout, errcode.ErrTimeout},
		{"wasmrt.ErrCanceled", wasmrt.ErrCanceled, errcode.ErrCanceled},
		{"wasmrt.ErrInvalidInput", wasmrt.ErrInvalidInput, errcode.ErrInvalidInput},
		{"wasmrt.ErrInvalidOutput", wasmrt.ErrInvalidOutput, errcode.ErrInvalidOutput},
		{"wasmrt.ErrOutputTooLarge", wasmrt.ErrOutputTooLarge, errcode.ErrOutputTooLarge},
		{"sidecar.ErrUnknownTool", sidecar.ErrUnknownTool, errcode.ErrUnknownTool},
	} {
		if tt.got != tt.want {
			t.Errorf("%s is not the shared sentinel %s", tt.name, errcode.Of(tt.want))
		}
	}

	all := errcode.All()
	sentinels := make([]*errcode.Sentinel, len(all))
	for i, e := range all {
		sentinels[i] = errcode.Lookup(e.Code)
	}
	for _, code := range []string{"fuel_exhausted", "trap", "link_error", "module_hash_mismatch", "skill_not_loaded"} {
		if errcode.Lookup(code) == nil {
			t.Fatalf("%s is not registered: are the runtime and the sidecar linked?", code)
		}
	}
	for i, e := range all {
		remote := &sidecarplugin.Error{Op: "invoke", ErrorCode: e.Code, Message: "m"}
		for _, err := range []error{remote, fmt.Errorf("host: acme.echo: %w", remote)} {
			for j, s := range sentinels {
				if got := errors.Is(err, s); got != (i == j) {
					t.Errorf("errors.Is(%v, sentinel of %s) = %v", err, s.Code(), got)
				}
			}
		}
	}
}
