;; notify: sends one text message to the channel behind handle 40000 and
;; returns {"delivered":true} when capability-call answered with a
;; response, {"delivered":false} when it returned a negative code.
(module
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $out (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"op\":\"send\",\"text\":\"disk 91% full\"}")
  (data (i32.const 64) "{\"delivered\":true}")
  (data (i32.const 96) "{\"delivered\":false}")
  (func (export "run") (result i32)
    (if (i32.gt_s (call $cap (i32.const 40000) (i32.const 0) (i32.const 36)) (i32.const 0))
      (then (drop (call $out (i32.const 64) (i32.const 18))))
      (else (drop (call $out (i32.const 96) (i32.const 19)))))
    (i32.const 0)))
