;; Palyra's export-count test module: three exported functions (run, a, b).
;; With max_exported_functions = 1, wasm_exported_function_limit fails.
(module
  (func (export "run") (result i32) (i32.const 1))
  (func (export "a") (result i32) (i32.const 2))
  (func (export "b") (result i32) (i32.const 3)))
