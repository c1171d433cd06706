;; Imports a memory from palyra:skills/host@1: the host provides only
;; functions, so wasm_import_surface fails naming the import.
(module
  (import "palyra:skills/host@1" "memory" (memory 1))
  (func (export "run") (result i32)
    (i32.const 0)))
