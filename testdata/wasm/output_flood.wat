;; Hostile: writes 64 KiB chunks of output, ignoring the -4 that output-write
;; returns once the next chunk would pass MaxOutputBytes (1 MiB), 32 times
;; (2 MiB), then returns 0: output_too_large.
(module
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "palyra_plugin_main") (result i32)
    (local $i i32)
    (memory.fill (i32.const 0) (i32.const 32) (i32.const 65536))
    (loop $l
      (drop (call $output_write (i32.const 0) (i32.const 65536)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 32))))
    (i32.const 0)))
