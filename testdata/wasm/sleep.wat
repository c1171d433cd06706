;; Sleeps 10 s in poll_oneoff (one relative clock subscription). Ended by
;; the call's deadline (timeout) or ctx cancellation (canceled).
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    ;; subscription at 0: userdata 7, tag clock, clock id 1, timeout 10 s
    (i64.store (i32.const 0) (i64.const 7))
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.const 10000000000))
    (i32.store16 (i32.const 40) (i32.const 0))
    (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128))))
