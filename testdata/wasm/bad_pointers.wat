;; Hostile: passes pointers and lengths outside its one-page memory to every
;; pointer-taking import. Each must return -3 (or EFAULT for WASI), never
;; trap. Returns 0 with output true, or the number of the failed check.
(module
  (import "palyra:skills/host@1" "input-read" (func $input_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "log" (func $log (param i32 i32 i32)))
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "response-read" (func $response_read (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "true")
  ;; iovec {ptr=65530, len=100} at 16
  (data (i32.const 16) "\fa\ff\00\00\64\00\00\00")
  (func (export "palyra_plugin_main") (result i32)
    (if (i32.ne (call $output_write (i32.const 65530) (i32.const 100)) (i32.const -3)) (then (return (i32.const 1))))
    (if (i32.ne (call $output_write (i32.const -1) (i32.const 1)) (i32.const -3)) (then (return (i32.const 2))))
    (if (i32.ne (call $input_read (i32.const -16) (i32.const 10)) (i32.const -3)) (then (return (i32.const 3))))
    (if (i32.ne (call $input_read (i32.const 0) (i32.const -1)) (i32.const -3)) (then (return (i32.const 4))))
    (if (i32.ne (call $cap (i32.const 10000) (i32.const 70000) (i32.const 10)) (i32.const -3)) (then (return (i32.const 5))))
    (if (i32.ne (call $cap (i32.const 10000) (i32.const 0) (i32.const -5)) (i32.const -3)) (then (return (i32.const 6))))
    ;; the pending response is the error detail; reading it past memory fails
    (if (i32.ne (call $response_read (i32.const 65535) (i32.const 10)) (i32.const -3)) (then (return (i32.const 7))))
    (call $log (i32.const 2) (i32.const 65000) (i32.const 10000))
    (call $log (i32.const 2) (i32.const -1) (i32.const 2))
    (if (i32.ne (call $fd_write (i32.const 1) (i32.const 65532) (i32.const 1) (i32.const 0)) (i32.const 21)) (then (return (i32.const 8))))
    (if (i32.ne (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 32)) (i32.const 21)) (then (return (i32.const 9))))
    (if (i32.ne (call $fd_write (i32.const 1) (i32.const 16) (i32.const -1) (i32.const 32)) (i32.const 21)) (then (return (i32.const 10))))
    (if (i32.ne (call $random_get (i32.const 65000) (i32.const 1000)) (i32.const 21)) (then (return (i32.const 11))))
    (drop (call $output_write (i32.const 0) (i32.const 4)))
    (i32.const 0)))
