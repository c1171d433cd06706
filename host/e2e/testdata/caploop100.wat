;; caploop100: makes 100 channel sends through handle 40000 in one call (a
;; benchmark of the capability-call round trip: guest -> sidecar -> host
;; broker over the GRPCBroker -> back), then returns {}.
(module
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $out (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"op\":\"send\",\"text\":\"x\"}")
  (data (i32.const 64) "{}")
  (func (export "run") (result i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 100)))
        (if (i32.le_s (call $cap (i32.const 40000) (i32.const 0) (i32.const 24)) (i32.const 0))
          (then (return (i32.const 1))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (drop (call $out (i32.const 64) (i32.const 2)))
    (i32.const 0)))
