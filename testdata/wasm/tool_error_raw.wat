;; Returns 3 with plain text in the output buffer: code "tool_error" and the
;; text as the message.
(module
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "disk \"full\"\n")
  (func (export "palyra_plugin_main") (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 12)))
    (i32.const 3)))
