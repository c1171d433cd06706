;; Exports run with type (i32) -> i32 instead of () -> i32:
;; wasm_entrypoint fails.
(module
  (func (export "run") (param i32) (result i32)
    (local.get 0)))
