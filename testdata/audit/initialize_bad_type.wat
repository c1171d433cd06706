;; Exports _initialize with type () -> i32 instead of () -> ():
;; wasm_entrypoint fails.
(module
  (func (export "_initialize") (result i32)
    (i32.const 0))
  (func (export "run") (result i32)
    (i32.const 0)))
