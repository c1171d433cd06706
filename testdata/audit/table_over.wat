;; Declares a table of 200000 elements, over the default profile's
;; max_table_elements of 100000: wasm_table_limits fails.
(module
  (table 200000 funcref)
  (func (export "run") (result i32)
    (i32.const 0)))
