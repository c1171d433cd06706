;; Sends {"op":"get","key":"k"} to storage handle 30000 and writes the
;; response (or, when capability-call fails, the pending error detail) to the
;; output. Returns 0 either way.
(module
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "response-len" (func $response_len (result i32)))
  (import "palyra:skills/host@1" "response-read" (func $response_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 0) "{\"op\":\"get\",\"key\":\"k\"}")
  (func (export "palyra_plugin_main") (result i32)
    (local $n i32)
    (drop (call $cap (i32.const 30000) (i32.const 0) (i32.const 22)))
    (local.set $n (call $response_len))
    (if (i32.gt_s (local.get $n) (i32.const 65536)) (then (return (i32.const 1))))
    (drop (call $response_read (i32.const 65536) (local.get $n)))
    (drop (call $output_write (i32.const 65536) (local.get $n)))
    (i32.const 0)))
