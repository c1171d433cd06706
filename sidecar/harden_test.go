package sidecar_test

import (
	"os"
	"path/filepath"
	"testing"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// TestHardenedLoad checks a serving sidecar's hardening from the outside:
// LoadSkill reports it as the kernel shows it, the module it was told it
// may read loads, and a module elsewhere (a copy of the same bytes outside
// the allowed paths) cannot even be read; with --harden=false nothing is
// restricted and the report says so.
func TestHardenedLoad(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		hardened bool
	}{
		{name: "hardened by default", hardened: true},
		{name: "off when asked", args: []string{"--harden=false"}, hardened: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxT(t)
			path, wasm, sum := fixture(t, "answer.wasm")
			elsewhere := filepath.Join(t.TempDir(), "answer.wasm")
			if err := os.WriteFile(elsewhere, wasm, 0o644); err != nil {
				t.Fatal(err)
			}

			outside := start(t, nil, tt.args...)
			lr, err := outside.LoadSkill(ctx, &sidecarv1.LoadSkillRequest{
				SkillId: "test.answer", Entrypoint: "answer", ModuleSha256: sum,
				Module: &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: elsewhere},
			})
			if tt.hardened {
				if err == nil || codeOf(t, err) != "module_read_failed" {
					t.Errorf("loading a module outside the allowed paths: %v", err)
				}
			} else if err != nil {
				t.Errorf("loading a module anywhere without hardening: %v", err)
			}
			_ = lr

			s := start(t, nil, tt.args...)
			lr, err = s.LoadSkill(ctx, &sidecarv1.LoadSkillRequest{
				SkillId: "test.answer", Entrypoint: "answer", ModuleSha256: sum,
				Module: &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: path},
			})
			if err != nil {
				t.Fatalf("LoadSkill: %v", err)
			}
			h := lr.GetHardening()
			if h.GetEnabled() != tt.hardened {
				t.Fatalf("hardening reported %v, want enabled %v", h, tt.hardened)
			}
			if !tt.hardened {
				return
			}
			if !h.GetNoNewPrivs() || h.GetSeccompMode() != 2 || !h.GetCapsDropped() || h.GetLandlock() != "full" ||
				h.GetStatus()["Seccomp"] != "2" || h.GetRlimits()["core"] != 0 || h.GetUid() != int32(os.Getuid()) {
				t.Errorf("hardening %v", h)
			}
			if _, err := s.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "i1", SkillId: "test.answer", ToolId: "t"}); err != nil {
				t.Errorf("Invoke hardened: %v", err)
			}
		})
	}
}
