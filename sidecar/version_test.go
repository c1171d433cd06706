package sidecar_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/abi"
	"github.com/palyra-go/palyra/sidecar"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// TestVersionMode runs the version mode in its three spellings: it
// prints the build information with the kernel's hardening support and
// exits 0, and refuses stray arguments with a usage status.
func TestVersionMode(t *testing.T) {
	for _, args := range [][]string{{"version", "--json"}, {"--version", "--json"}, {"-version", "-json"}} {
		var out, errb bytes.Buffer
		if code := sidecar.Run(args, sidecar.ServeConfig{}, &out, &errb); code != 0 {
			t.Fatalf("Run(%q) = %d, stderr %s", args, code, errb.String())
		}
		var in buildinfo.Info
		if err := json.Unmarshal(out.Bytes(), &in); err != nil {
			t.Fatalf("Run(%q) printed %q: %v", args, out.String(), err)
		}
		if in.Program != "palyra-sidecar" || in.ABI != abi.Version || in.SidecarProtocol != sidecarplugin.Handshake.ProtocolVersion || in.Kernel == nil {
			t.Fatalf("Run(%q) reported %+v", args, in)
		}
	}
	var out, errb bytes.Buffer
	if code := sidecar.Run([]string{"version"}, sidecar.ServeConfig{}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "palyra-sidecar ") || !strings.Contains(out.String(), "hardening:") {
		t.Fatalf("text version: %d %q %q", code, out.String(), errb.String())
	}
	if code := sidecar.Run([]string{"version", "extra"}, sidecar.ServeConfig{}, &out, &errb); code != 2 {
		t.Fatalf("version extra = %d, want 2", code)
	}
}
