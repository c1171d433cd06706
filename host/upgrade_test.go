package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/testskill"
)

// buildVersion signs a one-tool WAT skill "acme.up" at version with the
// module testdata/wasm/<module>.wasm, by testskill.Key(7).
func buildVersion(t *testing.T, version, module string) []byte {
	return watArtifact(t, "acme.up", version, module, "")
}

// TestFailedUpgradeKeepsServing is the reproduction of issue 19 point 3:
// 1.0.0 of a skill is installed and serving; 1.1.0, signed by the same
// trusted key but failing the audit, is installed: it is kept, quarantined
// and held back, and calls keep going to 1.0.0 (before the change they
// failed with skill_quarantined). Info shows 1.1.0 held back with
// audit_failed; enable of 1.1.0 refuses; a good 1.2.0 then becomes current
// and serves.
func TestFailedUpgradeKeepsServing(t *testing.T) {
	h := openHost(t)
	ctx := context.Background()
	pub := hex.EncodeToString(testskill.Key(7).Public().(ed25519.PublicKey))
	trusted := []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}
	call := func() (*host.CallResult, error) {
		return h.Call(ctx, host.CallRequest{SkillID: "acme.up", ToolID: "acme.up.t", Input: json.RawMessage(`{"n":1}`)})
	}

	if _, err := h.Install(ctx, host.InstallRequest{Artifact: buildVersion(t, "1.0.0", "echo"), TrustedPublishers: trusted}); err != nil {
		t.Fatal(err)
	}
	if res, err := call(); err != nil || res.Version != "1.0.0" {
		t.Fatalf("call on 1.0.0: %+v, %v", res, err)
	}

	res, err := h.Install(ctx, host.InstallRequest{Artifact: buildVersion(t, "1.1.0", "wasi_path_open"), TrustedPublishers: trusted})
	if errcode.Of(err) != "audit_failed" || res == nil || res.Current || res.HeldBack == nil || res.HeldBack.Code != "audit_failed" {
		t.Fatalf("install 1.1.0: %+v, %v", res, err)
	}
	for range 3 {
		if res, err := call(); err != nil || res.Version != "1.0.0" {
			t.Fatalf("call after the failed upgrade: %+v, %v; want 1.0.0 serving", res, err)
		}
	}
	info, err := h.Info(ctx, host.SkillRef{SkillID: "acme.up"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Inventory.Version != "1.0.0" || len(info.HeldBack) != 1 || info.HeldBack[0].Version != "1.1.0" ||
		info.HeldBack[0].Code != "audit_failed" || info.HeldBack[0].Message == "" {
		t.Fatalf("info: version %s, held back %+v", info.Inventory.Version, info.HeldBack)
	}

	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "acme.up", Version: "1.1.0", Reason: "try"}); errcode.Of(err) != "override_required" {
		t.Fatalf("enable 1.1.0: %v, want override_required", err)
	}
	if _, err := h.Enable(ctx, host.EnableRequest{SkillID: "acme.up", Version: "1.1.0", Reason: "try", Override: true}); errcode.Of(err) != "audit_failed" {
		t.Fatalf("enable 1.1.0 --override: %v, want audit_failed", err)
	}
	if res, err := call(); err != nil || res.Version != "1.0.0" {
		t.Fatalf("call after the refused enable: %+v, %v", res, err)
	}

	res, err = h.Install(ctx, host.InstallRequest{Artifact: buildVersion(t, "1.2.0", "echo"), TrustedPublishers: trusted})
	if err != nil || !res.Current || res.HeldBack != nil {
		t.Fatalf("install 1.2.0: %+v, %v", res, err)
	}
	if res, err := call(); err != nil || res.Version != "1.2.0" {
		t.Fatalf("call on 1.2.0: %+v, %v", res, err)
	}
	if info, err := h.Info(ctx, host.SkillRef{SkillID: "acme.up"}); err != nil || len(info.HeldBack) != 0 {
		t.Fatalf("info after 1.2.0: %+v, %v", info, err)
	}
}
