;; Declares a 64-bit memory (memory64 proposal) of one page:
;; wasm_memory_limits fails, the runtime does not enable memory64.
(module
  (memory (export "memory") i64 1)
  (func (export "run") (result i32)
    (i32.const 0)))
