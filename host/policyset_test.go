package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
)

// TestSetPolicyLive: SetPolicy changes what the very next call is granted
// (a wall-clock cap below the echo example's 5000 ms makes its manifest a
// policy violation), writes <state>/policy.toml, and the profile survives
// a reopen; an invalid profile changes nothing.
func TestSetPolicyLive(t *testing.T) {
	ctx := context.Background()
	h, state := openHostWith(t, supervisor.Config{})
	echo := host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.upper", Input: json.RawMessage(`{"text":"abc"}`)}
	if _, err := h.Call(ctx, echo); err != nil {
		t.Fatal(err)
	}
	before := h.PolicySHA256()
	if _, err := h.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[quotas]\nmax_wall_clock = 1\n")}); !errors.Is(err, policy.ErrInvalidProfile) {
		t.Fatalf("invalid profile: %v", err)
	}
	if h.PolicySHA256() != before {
		t.Fatal("an invalid profile changed the policy")
	}
	if _, err := os.Stat(filepath.Join(state, "policy.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an invalid profile was written: %v", err)
	}

	low := []byte("[quotas]\nmax_wall_clock_ms = 1000\n")
	res, err := h.SetPolicy(ctx, host.SetPolicyRequest{Profile: low})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != filepath.Join(state, "policy.toml") || res.SHA256 == before || res.SHA256 != h.PolicySHA256() {
		t.Fatalf("result %+v (before %s, now %s)", res, before, h.PolicySHA256())
	}
	if got, err := os.ReadFile(res.Path); err != nil || string(got) != string(low) {
		t.Fatalf("policy file %q, %v", got, err)
	}
	if _, err := h.Call(ctx, echo); !errors.Is(err, policy.ErrViolation) {
		t.Fatalf("call after the cap was lowered: %v, want policy_violation", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}

	h2, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecarPath})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(ctx)
	if got := h2.PolicySHA256(); got != res.SHA256 {
		t.Fatalf("reopened host judges by %s, want %s", got, res.SHA256)
	}
	if _, err := h2.Call(ctx, echo); !errors.Is(err, policy.ErrViolation) {
		t.Fatalf("call after reopening: %v, want policy_violation", err)
	}
}
