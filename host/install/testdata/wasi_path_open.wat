;; Imports wasi_snapshot_preview1.path_open, with its real signature: the
;; host provides no WASI filesystem function (sdk/ABI.md §2.3), so
;; wasm_import_surface fails naming wasi_snapshot_preview1.path_open, and
;; says the manifest declares no filesystem capability when it does not.
(module
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (i32.const 0)))
