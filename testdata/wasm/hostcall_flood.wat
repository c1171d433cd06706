;; Hostile: calls capability-call 1000 times on handle 10000 with the
;; request {}, ignoring results. Past the per-invocation cap (256 by
;; default) every call returns -7. The output is the JSON number of calls
;; that returned -7 (744 with the default cap).
(module
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{}")
  (func $write_num (param $n i32)
    (local $p i32)
    (local.set $p (i32.const 2048))
    (loop $l
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $l (i32.ne (local.get $n) (i32.const 0))))
    (drop (call $output_write (local.get $p) (i32.sub (i32.const 2048) (local.get $p)))))
  (func (export "palyra_plugin_main") (result i32)
    (local $i i32)
    (local $quota i32)
    (loop $l
      (if (i32.eq (call $cap (i32.const 10000) (i32.const 0) (i32.const 2)) (i32.const -7))
        (then (local.set $quota (i32.add (local.get $quota) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 1000))))
    (call $write_num (local.get $quota))
    (i32.const 0)))
