package install

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/trust"
)

// TestTamperedTrustStore: an install's allowlist entry is sealed with the
// store, so the next install still decides against it; once a key is
// added by hand, installs are refused with trust_store_tampered and the
// re-audit stops with that error, quarantining nothing; after the change
// is accepted, both work again.
func TestTamperedTrustStore(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	in := open(t, state, nil)
	if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.one", version: "1.0.0"}), InstallOptions{TrustedPublishers: trustAcme}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.two", version: "1.0.0"}), InstallOptions{}); err != nil {
		t.Fatalf("second install, trusting the sealed allowlist: %v", err)
	}

	path := in.TrustStorePath()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"trusted_publishers": {`, `"trusted_publishers": {
    "evil": ["`+strings.Repeat("ab", 32)+`"],`, 1)
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}

	_, err = in.Install(ctx, build(t, skillSpec{id: "acme.three", version: "1.0.0"}), InstallOptions{})
	if !errors.Is(err, trust.ErrTampered) {
		t.Fatalf("install on a tampered store: %v", err)
	}
	if _, err := in.Reaudit(ctx); !errors.Is(err, trust.ErrTampered) {
		t.Fatalf("reaudit on a tampered store: %v", err)
	}
	for _, id := range []string{"acme.one", "acme.two"} {
		e, err := in.Inventory().Skill(ctx, id, "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if e.Status == nil || e.Status.Status != inventory.StatusActive {
			t.Fatalf("%s is %+v after a reaudit on a tampered store", id, e.Status)
		}
	}

	if _, ok, err := in.TrustFile().AcceptChanges(ctx, func(*trust.Review) (bool, error) { return true, nil }); err != nil || !ok {
		t.Fatalf("accept: %v %v", ok, err)
	}
	if _, err := in.Install(ctx, build(t, skillSpec{id: "acme.three", version: "1.0.0"}), InstallOptions{}); err != nil {
		t.Fatalf("install after accept-changes: %v", err)
	}
	if rep, err := in.Reaudit(ctx); err != nil || rep.Quarantined != 0 {
		t.Fatalf("reaudit after accept-changes: %+v %v", rep, err)
	}
}
