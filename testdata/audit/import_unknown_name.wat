;; Imports a function palyra:skills/host@1 does not have ("exec"):
;; wasm_import_surface fails naming palyra:skills/host@1.exec.
(module
  (import "palyra:skills/host@1" "exec" (func $exec (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (i32.const 0)))
