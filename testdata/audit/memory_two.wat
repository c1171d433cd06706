;; Declares two memories (multi-memory): wasm_memory_limits fails, the
;; runtime supports one.
(module
  (memory (export "memory") 1)
  (memory $second 1)
  (func (export "run") (result i32)
    (i32.const 0)))
