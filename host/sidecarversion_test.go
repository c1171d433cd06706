package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// TestSidecarVersion asks the real sidecar what it is (it must match this
// host and report the kernel), and shows that binaries that do not answer
// the version command properly are sidecar_mismatch.
func TestSidecarVersion(t *testing.T) {
	ctx := context.Background()
	in, err := host.SidecarVersion(ctx, sidecarPath)
	if err != nil {
		t.Fatal(err)
	}
	if in.Program != "palyra-sidecar" || in.Kernel == nil || !in.WasmtimeLinked {
		t.Fatalf("SidecarVersion = %+v", in)
	}
	if diff := buildinfo.Get("palyra-host").Compatible(*in); diff != "" {
		t.Fatalf("the sidecar built from this tree is incompatible: %s", diff)
	}
	dir := t.TempDir()
	for name, script := range map[string]string{
		"old":     "#!/bin/sh\necho 'palyra-sidecar: unknown command \"version\"' >&2\nexit 2\n",
		"garbage": "#!/bin/sh\necho hello\n",
		"no-abi":  "#!/bin/sh\necho '{\"program\":\"palyra-sidecar\"}'\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := host.SidecarVersion(ctx, p)
		if !errors.Is(err, host.ErrSidecarMismatch) {
			t.Errorf("%s: err = %v, want sidecar_mismatch", name, err)
		}
		if name == "old" && !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("old: the error does not carry the sidecar's answer: %v", err)
		}
	}
}
