;; Imports http-count with a wrong signature (i32) -> i32: link_error.
(module
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (param i32) (result i32)))
  (func (export "run") (result i32)
    (call $http_count (i32.const 0))))
