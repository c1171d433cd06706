;; Imports two host functions with signatures the host does not provide:
;; http-count takes no argument, and fd_write takes four i32. The manifest
;; used with it declares an http host, so only the signatures are wrong:
;; wasm_import_surface fails naming both.
(module
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count"
    (func $http_count (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (i32.const 0)))
