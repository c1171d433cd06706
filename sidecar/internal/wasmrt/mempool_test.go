package wasmrt_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// TestMemoryPool checks what an instance can see of memories used before
// it, with the linear-memory pool on (the default) and off: nothing an
// earlier call wrote, no page it grew, and the module's own initial size.
// "dirty" grows its memory to 3 pages (cleared with madvise when pooled),
// "dirty_small" keeps its one page (cleared by writing zeros).
func TestMemoryPool(t *testing.T) {
	for _, tt := range []struct {
		name   string
		cfg    wasmrt.Config
		pooled bool
	}{
		{"pool", wasmrt.Config{}, wasmrt.MemoryPoolSupported()},
		{"no pool", wasmrt.Config{NoMemoryPool: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.cfg)
			wasm := fixture(t, "memory_reuse")
			dirty := load(t, e, wasm, wasmrt.ModuleConfig{Entrypoint: "dirty"})
			small := load(t, e, wasm, wasmrt.ModuleConfig{Entrypoint: "dirty_small"})
			beyond := load(t, e, wasm, wasmrt.ModuleConfig{Entrypoint: "beyond"})
			size := load(t, e, wasm, wasmrt.ModuleConfig{Entrypoint: "size"})
			before := wasmrt.ReadMemoryPoolStats()

			for i := range 20 {
				if got := exitCodeOf(t, mustInvoke(t, dirty, wasmrt.Invocation{})); got != 0 {
					t.Fatalf("call %d saw 0x%x written by an earlier call", i, got)
				}
				if got := exitCodeOf(t, mustInvoke(t, small, wasmrt.Invocation{})); got != 0 {
					t.Fatalf("call %d of dirty_small saw 0x%x written by an earlier call", i, got)
				}
				// The memory the last call grew to 3 pages is the one
				// these instances get when pooled: it must be 1 page again.
				if got := exitCodeOf(t, mustInvoke(t, size, wasmrt.Invocation{})); got != 1 {
					t.Fatalf("call %d: memory.size %d pages, want 1", i, got)
				}
				_, err := invoke(t, beyond, wasmrt.Invocation{})
				var te *wasmrt.TrapError
				if !errors.As(err, &te) || te.Code != "memory_out_of_bounds" {
					t.Fatalf("call %d: reading past the initial page: err = %v, want a memory_out_of_bounds trap", i, err)
				}
			}

			// Concurrent calls, each on its own instance, never see
			// another's writes either.
			var wg sync.WaitGroup
			errs := make(chan int, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 25 {
						m := dirty
						if i%2 == 1 {
							m = small
						}
						if got := exitCodeOf(t, mustInvoke(t, m, wasmrt.Invocation{})); got != 0 {
							errs <- got
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for got := range errs {
				t.Fatalf("a concurrent call saw 0x%x written by another", got)
			}

			after := wasmrt.ReadMemoryPoolStats()
			reused := after.Reused - before.Reused
			if tt.pooled && reused < 50 {
				t.Errorf("pool: %d memories handed out again over 280 calls, want most of them (stats %+v)", reused, after)
			}
			// An engine without the pool maps and hands out no pooled
			// memory. Released and Unmapped may still move: an earlier
			// engine's pool (the "pool" subtest's) unmaps its memories
			// when that engine is dropped, after its last store and
			// module, which Go's finalizers may free at any later time
			// (CI saw Unmapped move by 27 during this subtest).
			if !tt.pooled && (after.Created != before.Created || after.Reused != before.Reused) {
				t.Errorf("no pool: pooled memories were mapped or handed out: %+v -> %+v", before, after)
			}
		})
	}
}

// TestMemoryPoolFingerprint: the pool changes generated code (explicit
// bounds checks), so a module compiled with it is cached apart.
func TestMemoryPoolFingerprint(t *testing.T) {
	if !wasmrt.MemoryPoolSupported() {
		t.Skip("the linear-memory pool is Linux only")
	}
	a := newEngine(t, wasmrt.Config{})
	b := newEngine(t, wasmrt.Config{NoMemoryPool: true})
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("the same cache fingerprint with and without the memory pool")
	}
	// ForModule keeps the pool for small modules only.
	small := newEngine(t, wasmrt.Config{}.ForModule(wasmrt.MemoryPoolMaxModuleBytes))
	large := newEngine(t, wasmrt.Config{}.ForModule(wasmrt.MemoryPoolMaxModuleBytes+1))
	if small.Fingerprint() != a.Fingerprint() || large.Fingerprint() != b.Fingerprint() {
		t.Fatal("ForModule: a module at the limit must keep the pool, one over it must not")
	}
}
