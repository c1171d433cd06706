;; Noisy: 100 log records of 1 KiB at levels -1..5 (clamped to 0..4), one
;; record of 8 KiB (cut to 4 KiB), one with invalid UTF-8, one with a bad
;; pointer, and two lines each to fd 1 and fd 2. The 64 KiB log budget drops
;; most of it. Output: null.
(module
  (import "palyra:skills/host@1" "log" (func $log (param i32 i32 i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16384) "\ff\fe bad utf8")
  (data (i32.const 16400) "hello\nworld\n")
  ;; iovec {ptr=16400, len=12} at 16416
  (data (i32.const 16416) "\10\40\00\00\0c\00\00\00")
  (func (export "palyra_plugin_main") (result i32)
    (local $i i32)
    (memory.fill (i32.const 0) (i32.const 97) (i32.const 8192))
    (drop (call $fd_write (i32.const 1) (i32.const 16416) (i32.const 1) (i32.const 16432)))
    (drop (call $fd_write (i32.const 2) (i32.const 16416) (i32.const 1) (i32.const 16432)))
    (call $log (i32.const 2) (i32.const 16384) (i32.const 11))
    (call $log (i32.const 4) (i32.const 0) (i32.const 8192))
    (call $log (i32.const 2) (i32.const 65000) (i32.const 10000))
    (loop $l
      (call $log (i32.sub (i32.rem_u (local.get $i) (i32.const 7)) (i32.const 1)) (i32.const 0) (i32.const 1024))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100))))
    (i32.const 0)))
