;; A Palyra module using all eight capability-handle imports. `run` returns
;; the sum of the four counts (Palyra's daemon test: 4 with one grant of
;; each kind). `check` returns 0 when, with one grant of each kind, handle(0)
;; is 10000/20000/30000/40000 and handle(1), handle(-1) are -1; otherwise the
;; number of the first failed check.
(module
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "http-handle" (func $http_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "secret-count" (func $secret_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "secret-handle" (func $secret_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-count" (func $storage_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-handle" (func $storage_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "channel-count" (func $channel_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "channel-handle" (func $channel_handle (param i32) (result i32)))
  (func (export "run") (result i32)
    (i32.add
      (i32.add (call $http_count) (call $secret_count))
      (i32.add (call $storage_count) (call $channel_count))))
  (func (export "check") (result i32)
    (if (i32.ne (call $http_handle (i32.const 0)) (i32.const 10000)) (then (return (i32.const 1))))
    (if (i32.ne (call $secret_handle (i32.const 0)) (i32.const 20000)) (then (return (i32.const 2))))
    (if (i32.ne (call $storage_handle (i32.const 0)) (i32.const 30000)) (then (return (i32.const 3))))
    (if (i32.ne (call $channel_handle (i32.const 0)) (i32.const 40000)) (then (return (i32.const 4))))
    (if (i32.ne (call $http_handle (i32.const 1)) (i32.const -1)) (then (return (i32.const 5))))
    (if (i32.ne (call $http_handle (i32.const -1)) (i32.const -1)) (then (return (i32.const 6))))
    (if (i32.ne (call $channel_handle (i32.const 42)) (i32.const -1)) (then (return (i32.const 7))))
    (i32.const 0)))
