package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/policy"
)

func TestResolve(t *testing.T) {
	state := t.TempDir()
	p, src, err := policy.Resolve(state, "")
	if err != nil || src != "default" || p.Quotas != policy.Default().Quotas {
		t.Fatalf("no file: %v %q", err, src)
	}
	good, err := policy.Default().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	inState := filepath.Join(state, "policy.toml")
	if err := os.WriteFile(inState, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, src, err = policy.Resolve(state, ""); err != nil || src != inState {
		t.Fatalf("state file: %v %q", err, src)
	}
	other := filepath.Join(t.TempDir(), "other.toml")
	if err := os.WriteFile(other, []byte("surprise = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err = policy.Resolve(state, other); !errors.Is(err, policy.ErrInvalidProfile) {
		t.Fatalf("an explicit file wins, and an invalid one is refused: %v", err)
	}
	if _, _, err = policy.Resolve(state, filepath.Join(state, "missing.toml")); err == nil || errors.Is(err, policy.ErrInvalidProfile) {
		t.Fatalf("a missing explicit file: %v", err)
	}
}
