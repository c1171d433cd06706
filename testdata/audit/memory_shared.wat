;; Declares a shared memory (threads proposal): wasm_memory_limits fails,
;; threads are not supported.
(module
  (memory (export "memory") 1 1 shared)
  (func (export "run") (result i32)
    (i32.const 0)))
