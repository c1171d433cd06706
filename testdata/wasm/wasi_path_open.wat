;; Imports wasi_snapshot_preview1.path_open, which the host does not
;; provide: link_error.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (i32.const 0)))
