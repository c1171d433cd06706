package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// TestInstallPrecompilesIntoTheCache: an install through a Host with a
// sidecar binary compiles the module into the cache, and the first call's
// sidecar loads it from there instead of compiling it again.
func TestInstallPrecompilesIntoTheCache(t *testing.T) {
	h, _ := openHostWith(t, supervisor.Config{})
	ctx := context.Background()
	if _, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if st := sidecarOf(t, h, "palyra.echo"); !st.CacheHit {
		t.Fatalf("the first call's sidecar compiled the module itself: %+v", st)
	}
}
