;; A reactor: _initialize counts itself, and checks that no invocation is
;; bound yet (input-len returns -3, http-count 0) and logs "init". The
;; entrypoint checks that _initialize ran exactly once on this instance and
;; that it is the first call on it (fresh instance per call), then writes
;; true. Otherwise it returns the number of the failed check.
(module
  (import "palyra:skills/host@1" "input-len" (func $input_len (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "log" (func $log (param i32 i32 i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "true")
  (data (i32.const 16) "init")
  (global $inits (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))
  (global $init_input (mut i32) (i32.const 0))
  (global $init_http (mut i32) (i32.const 0))
  (func (export "_initialize")
    (global.set $inits (i32.add (global.get $inits) (i32.const 1)))
    (global.set $init_input (call $input_len))
    (global.set $init_http (call $http_count))
    (call $log (i32.const 2) (i32.const 16) (i32.const 4)))
  (func (export "palyra_plugin_main") (result i32)
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (if (i32.ne (global.get $inits) (i32.const 1)) (then (return (i32.const 1))))
    (if (i32.ne (global.get $calls) (i32.const 1)) (then (return (i32.const 2))))
    (if (i32.ne (global.get $init_input) (i32.const -3)) (then (return (i32.const 3))))
    (if (i32.ne (global.get $init_http) (i32.const 0)) (then (return (i32.const 4))))
    (if (i32.le_s (call $input_len) (i32.const 0)) (then (return (i32.const 5))))
    (drop (call $output_write (i32.const 0) (i32.const 4)))
    (i32.const 0)))
