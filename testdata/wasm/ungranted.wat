;; Hostile: uses handle 10000 although the call has no HTTP grant.
;; capability-call must return -1 (not_granted) without reaching the broker;
;; the module then copies the pending error detail to its output and returns
;; 0. It returns 1 if the call did not return -1.
(module
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "response-len" (func $response_len (result i32)))
  (import "palyra:skills/host@1" "response-read" (func $response_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"method\":\"GET\",\"url\":\"https://api.example.com/\"}")
  (func (export "palyra_plugin_main") (result i32)
    (local $n i32)
    (if (i32.ne (call $cap (i32.const 10000) (i32.const 0) (i32.const 49)) (i32.const -1))
      (then (return (i32.const 1))))
    (local.set $n (call $response_len))
    (drop (call $response_read (i32.const 4096) (local.get $n)))
    (drop (call $output_write (i32.const 4096) (local.get $n)))
    (i32.const 0)))
