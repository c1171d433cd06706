;; A tool in WAT: writes the call's config document (sdk/ABI.md §3.1) as
;; its output.
(module
  (import "palyra:skills/host@1" "config-len" (func $config_len (result i32)))
  (import "palyra:skills/host@1" "config-read" (func $config_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "palyra_plugin_main") (result i32)
    (local $n i32)
    (local.set $n (call $config_len))
    (if (i32.lt_s
          (memory.grow (i32.add (i32.shr_u (local.get $n) (i32.const 16)) (i32.const 1)))
          (i32.const 0))
      (then (return (i32.const 2))))
    (if (i32.ne (call $config_read (i32.const 65536) (local.get $n)) (local.get $n))
      (then (return (i32.const 3))))
    (call $output_write (i32.const 65536) (local.get $n))))
