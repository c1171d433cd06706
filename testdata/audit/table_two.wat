;; Declares two small tables (reference types): wasm_table_limits warns.
(module
  (table $a 1 funcref)
  (table $b 1 externref)
  (func (export "run") (result i32)
    (i32.const 0)))
