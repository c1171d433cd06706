;; Returns 0 with output that is not JSON: invalid_output.
(module
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"unterminated")
  (func (export "palyra_plugin_main") (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 14)))
    (i32.const 0)))
