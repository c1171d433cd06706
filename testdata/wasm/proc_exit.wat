;; Ends the call with WASI proc_exit. `exit0` writes "bye" and exits 0
;; (success with that output); `exit5` writes a tool error document and
;; exits 5 (tool_error).
(module
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "\"bye\"")
  (data (i32.const 16) "{\"code\":\"exited\",\"message\":\"five\"}")
  (func (export "exit0") (result i32)
    (drop (call $output_write (i32.const 0) (i32.const 5)))
    (call $proc_exit (i32.const 0))
    (i32.const 99))
  (func (export "exit5") (result i32)
    (drop (call $output_write (i32.const 16) (i32.const 34)))
    (call $proc_exit (i32.const 5))
    (i32.const 99)))
