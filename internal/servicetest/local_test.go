package servicetest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/servicetest"
)

// TestLocalHost runs the conformance suite against the local host.
func TestLocalHost(t *testing.T) {
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir(), SidecarPath: filepath.Join(bin, "palyra-sidecar")})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	servicetest.Run(t, h)
}
