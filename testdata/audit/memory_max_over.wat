;; Declares one page of initial memory and a maximum of 2000 pages (125
;; MiB), over the 64 MiB limit: wasm_memory_limits warns (the runtime caps
;; the memory at the limit).
(module
  (memory (export "memory") 1 2000)
  (func (export "run") (result i32)
    (i32.const 0)))
