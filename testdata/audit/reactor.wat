;; A well-formed ABI v1 guest (sdk/ABI.md §9, plus _initialize and a WASI
;; import of the subset): every module check passes.
(module
  (import "palyra:skills/host@1" "input-len" (func $input_len (result i32)))
  (import "palyra:skills/host@1" "input-read" (func $input_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"ok\":true}")
  (func (export "_initialize"))
  (func (export "palyra_plugin_main") (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 11)))
    (i32.const 0)))
