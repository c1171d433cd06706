;; A Palyra-style module: imports only a capability-count function and
;; exports only `run`. Its result is {"exit_code": 3 + http-count}.
(module
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (result i32)))
  (func (export "run") (result i32)
    (i32.add (i32.const 3) (call $http_count))))
