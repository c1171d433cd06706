;; Declares 2000 pages (125 MiB) of initial memory, over the 64 MiB limit
;; of a manifest that keeps the default max_memory_bytes:
;; wasm_memory_limits fails.
(module
  (memory (export "memory") 2000)
  (func (export "run") (result i32)
    (i32.const 0)))
