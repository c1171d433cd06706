;; The trivial tool of scenarios B, C, D and E: it ignores its input and
;; writes the constant output {"text":"hello"} (16 bytes, the size of the
;; input the benchmark sends), through the Palyra ABI.
(module
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{\"text\":\"hello\"}")
  (func (export "palyra_plugin_main") (result i32)
    (drop (call $output_write (i32.const 16) (i32.const 16)))
    (i32.const 0)))
