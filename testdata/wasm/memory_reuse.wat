;; Probes what a later instance can see of an earlier one's memory (the
;; linear-memory pool, sidecar/internal/wasmrt/mempool_linux.go).
;; "dirty" returns the OR of every word an earlier "dirty" wrote (0 when
;; the memory came back cleared), then writes them again: at the start, at
;; the end of the first page, and in two pages it grows. "dirty_small" is
;; "dirty" without the growth (a memory small enough for the pool to clear
;; by writing zeros). "beyond" reads the
;; first byte past the initial page, which must trap even when an earlier
;; instance had grown its memory there. "size" is memory.size in pages.
(module
  (memory (export "memory") 1 8)
  (func (export "dirty") (result i32)
    (local $seen i32)
    (local.set $seen
      (i32.or (i32.load (i32.const 0))
        (i32.or (i32.load (i32.const 1024)) (i32.load (i32.const 65532)))))
    (i32.store (i32.const 0) (i32.const 0x5ec7e7))
    (i32.store (i32.const 1024) (i32.const 0x5ec7e7))
    (i32.store (i32.const 65532) (i32.const 0x5ec7e7))
    (drop (memory.grow (i32.const 2)))
    (i32.store (i32.const 65536) (i32.const 0x5ec7e7))
    (i32.store (i32.const 196604) (i32.const 0x5ec7e7))
    (local.get $seen))
  (func (export "dirty_small") (result i32)
    (local $seen i32)
    (local.set $seen
      (i32.or (i32.load (i32.const 0))
        (i32.or (i32.load (i32.const 1024)) (i32.load (i32.const 65532)))))
    (i32.store (i32.const 0) (i32.const 0x5ec7e7))
    (i32.store (i32.const 1024) (i32.const 0x5ec7e7))
    (i32.store (i32.const 65532) (i32.const 0x5ec7e7))
    (local.get $seen))
  (func (export "beyond") (result i32)
    (i32.load (i32.const 65536)))
  (func (export "size") (result i32)
    (memory.size)))
