;; Imports output-write, which takes a pointer, but does not export its
;; memory as "memory" (it exports it as "mem"): wasm_entrypoint fails.
(module
  (import "palyra:skills/host@1" "output-write"
    (func $output_write (param i32 i32) (result i32)))
  (memory (export "mem") 1)
  (data (i32.const 0) "null")
  (func (export "palyra_plugin_main") (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 4)))
    (i32.const 0)))
