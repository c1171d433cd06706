package artifact

import (
	"context"
	"math/rand/v2"
	"testing"
)

// mixedModule returns n bytes shaped like a compiled wasm module: runs of
// random bytes (code, constants), repeated instruction-like patterns and
// zero padding, so it compresses about as well as a real one (~2:1).
func mixedModule(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]byte, 0, n)
	patterns := [][]byte{[]byte("\x20\x00\x41\x01\x6a\x21\x00"), []byte("\x28\x02\x00\x36\x02\x04"), []byte("memcpy_internal_helper")}
	for len(out) < n {
		switch r.IntN(4) {
		case 0, 1: // random run
			k := 64 + r.IntN(512)
			for i := 0; i < k; i++ {
				out = append(out, byte(r.Uint32()))
			}
		case 2: // repeated pattern
			p := patterns[r.IntN(len(patterns))]
			for i := r.IntN(32); i >= 0; i-- {
				out = append(out, p...)
			}
		case 3: // zero padding
			out = append(out, make([]byte, r.IntN(128))...)
		}
	}
	return out[:n]
}

// inputWithModule is sampleInput with one module of n bytes shaped by
// mixedModule.
func inputWithModule(n int) BuildInput {
	in := sampleInput()
	in.Modules = []File{{Path: "module.wasm", Data: mixedModule(n)}}
	return in
}

// builtWithModule builds inputWithModule(n).
func builtWithModule(tb testing.TB, n int) *Built {
	tb.Helper()
	built, err := Build(inputWithModule(n))
	if err != nil {
		tb.Fatal(err)
	}
	return built
}

// BenchmarkVerify4MiB measures Read + Inspect + Verify of an artifact with
// a 4 MiB module; bytes/op is the module size.
func BenchmarkVerify4MiB(b *testing.B) {
	in := inputWithModule(4 << 20)
	built, err := Build(in)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("artifact %d bytes for a %d-byte module", len(built.Bytes), len(in.Modules[0].Data))
	store := newTestStore()
	ctx := context.Background()
	b.SetBytes(int64(len(in.Modules[0].Data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Verify(ctx, built.Bytes, VerifyOptions{Trust: store, AllowTOFU: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild4MiB measures Build of the same artifact.
func BenchmarkBuild4MiB(b *testing.B) {
	in := inputWithModule(4 << 20)
	b.SetBytes(int64(len(in.Modules[0].Data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifySmall measures Read + Inspect + Verify of an artifact
// with a 4 KiB module: the host verifies a skill's artifact again on its
// first call, so this is the shape a host with many small skills pays
// once per skill.
func BenchmarkVerifySmall(b *testing.B) {
	built := builtWithModule(b, 4<<10)
	store := newTestStore()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Verify(ctx, built.Bytes, VerifyOptions{Trust: store, AllowTOFU: true}); err != nil {
			b.Fatal(err)
		}
	}
}
