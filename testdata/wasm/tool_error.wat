;; Returns 1 with a tool error document: code "bad_thing", message "it broke".
(module
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"code\":\"bad_thing\",\"message\":\"it broke\"}")
  (func (export "palyra_plugin_main") (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 41)))
    (i32.const 1)))
