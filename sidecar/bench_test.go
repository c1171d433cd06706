package sidecar_test

import (
	"testing"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// BenchmarkSidecar measures, against one real sidecar process, a warm Invoke
// of answer.wasm (gRPC + fresh instance + run) next to a bare Health round
// trip (gRPC only), so the difference is the runtime's share.
func BenchmarkSidecar(b *testing.B) {
	s := start(b, nil)
	ctx := ctxT(b)
	req := loadPath(b, "bench.answer", "answer.wasm")
	req.Entrypoint = "answer"
	req.PreparedInstances = 2
	if _, err := s.LoadSkill(ctx, req); err != nil {
		b.Fatalf("LoadSkill: %v", err)
	}
	inv := &sidecarv1.InvokeRequest{SkillId: "bench.answer", ToolId: "t"}
	for range 10 { // warm up
		if _, err := s.Invoke(ctx, inv); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Invoke/answer", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Invoke(ctx, inv); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Health", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Health(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
